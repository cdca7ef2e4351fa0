// Loader: worker threads over a sliding window of batch indices.
#include "sampling/loader.h"

#include <chrono>
#include <cstring>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "sampling/random.h"

namespace nodeweave::sampling {

Loader::Loader(LoaderConfig config) : config_(std::move(config)) {
  const char* fn = "DataLoader";
  NW_CHECK(config_.sampler, ValueError, fn, ": no sampler");
  NW_CHECK(config_.batch_size >= 1, ValueError, fn, ": batch_size must be >= 1, got ",
           config_.batch_size);
  NW_CHECK(config_.num_workers >= 1, ValueError, fn, ": num_workers must be >= 1");
  NW_CHECK(config_.depth >= 1, ValueError, fn, ": prefetch_depth must be >= 1");
  NW_CHECK(config_.batch_dependency >= 1, ValueError, fn, ": batch_dependency must be >= 1");
  NW_CHECK(config_.seed_types.size() == config_.seed_ids.size(), ValueError, fn,
           ": seed types and ids differ in length");
  const int types = config_.sampler->num_types();
  for (size_t i = 0; i < config_.seed_ids.size(); ++i) {
    const int64_t t = config_.seed_types[i], v = config_.seed_ids[i];
    NW_CHECK(t >= 0 && t < types, ValueError, fn, ": seed ", i, " has node type ", t);
    const int64_t n = config_.sampler->config().num_nodes[static_cast<size_t>(t)];
    NW_CHECK(v >= 0 && v < n, IndexError, fn, ": seed node ", v,
             " is out of range: its node type has ", n, " nodes");
  }
  for (const FeatureSource& f : config_.features) {
    NW_CHECK(f.node_type >= 0 && f.node_type < types, ValueError, fn,
             ": a prefetched feature has node type ", f.node_type);
    NW_CHECK(f.rows == config_.sampler->config().num_nodes[static_cast<size_t>(f.node_type)],
             ValueError, fn, ": a prefetched feature has ", f.rows, " rows, its node type ",
             config_.sampler->config().num_nodes[static_cast<size_t>(f.node_type)]);
    NW_CHECK(!f.cache || f.cache->rows() == f.rows, ValueError, fn, ": a feature cache made for ",
             f.cache ? f.cache->rows() : 0, " rows is given a feature of ", f.rows);
  }
  // Counts from an earlier, complete epoch pick the rows to cache (a no-op once built, and until a
  // loader has made every batch of an epoch: a peek at the first batches does not freeze it).
  for (const FeatureSource& f : config_.features)
    if (f.cache) f.cache->build(f.data, f.row_bytes);
  const int64_t n = static_cast<int64_t>(config_.seed_ids.size());
  num_batches_ = config_.drop_last ? n / config_.batch_size
                                   : (n + config_.batch_size - 1) / config_.batch_size;
  for (int64_t w = 0; w < stride(); ++w) threads_.emplace_back([this, w] { work(w); });
}

Loader::~Loader() { close(); }

void Loader::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

MiniBatch Loader::make(int64_t index) const {
  const int types = config_.sampler->num_types();
  std::vector<std::vector<int64_t>> seeds(static_cast<size_t>(types));
  const int64_t begin = index * config_.batch_size;
  const int64_t end =
      std::min<int64_t>(begin + config_.batch_size, static_cast<int64_t>(config_.seed_ids.size()));
  for (int64_t i = begin; i < end; ++i)
    seeds[static_cast<size_t>(config_.seed_types[static_cast<size_t>(i)])].push_back(
        config_.seed_ids[static_cast<size_t>(i)]);
  MiniBatch b;
  b.index = index;
  const uint64_t group = static_cast<uint64_t>(index / config_.batch_dependency);
  b.blocks = config_.sampler->sample(seeds, derive_key(config_.key, group), {}, config_.idtype);
  for (const FeatureSource& f : config_.features) {
    const auto& ids = f.of_outputs ? b.blocks.back().dst_nodes[static_cast<size_t>(f.node_type)]
                                   : b.blocks.front().src_nodes[static_cast<size_t>(f.node_type)];
    Gathered g;
    g.rows = static_cast<int64_t>(ids.size());
    g.bytes.resize(static_cast<size_t>(g.rows * f.row_bytes));
    uint8_t* out = g.bytes.data();
    if (f.cache) {
      f.cache->gather(ids.data(), g.rows, f.data, f.row_bytes, out);
    } else {
      for (int64_t r = 0; r < g.rows; ++r)
        std::memcpy(out + r * f.row_bytes, f.data + ids[static_cast<size_t>(r)] * f.row_bytes,
                    static_cast<size_t>(f.row_bytes));
    }
    b.features.push_back(std::move(g));
  }
  return b;
}

void Loader::work(int64_t worker) {
  // Threads of this worker's sampling calls (a cap on this thread only).
  set_thread_num_threads_cap(std::max(config_.threads_per_worker, 1));
  for (int64_t i = worker; i < num_batches_; i += stride()) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || i < taken_ + config_.depth; });
      if (stop_) return;
    }
    std::optional<MiniBatch> batch;
    std::exception_ptr error;
    try {
      batch = make(i);
    } catch (...) {
      error = std::current_exception();
    }
    bool last = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (error) {
        failed_[i] = error;
      } else {
        ready_.emplace(i, std::move(*batch));
        last = ++made_ == num_batches_;
      }
    }
    // Every batch's rows are counted: the next loader over these features may build its caches.
    if (last)
      for (const FeatureSource& f : config_.features)
        if (f.cache) f.cache->epoch_counted();
    cv_.notify_all();
    if (error) return;
  }
}

std::optional<MiniBatch> Loader::next(int64_t timeout_ms, bool* timed_out) {
  *timed_out = false;
  std::unique_lock<std::mutex> lock(mu_);
  if (taken_ >= num_batches_) return std::nullopt;
  const int64_t want = taken_;
  const bool got = cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                [&] { return stop_ || ready_.count(want) || failed_.count(want); });
  if (!got) {
    *timed_out = true;
    return std::nullopt;
  }
  NW_CHECK(!stop_ || ready_.count(want) || failed_.count(want), ValueError,
           "DataLoader: the loader was closed");
  auto f = failed_.find(want);
  if (f != failed_.end()) {
    std::exception_ptr e = f->second;
    failed_.erase(f);
    ++taken_;
    lock.unlock();
    cv_.notify_all();
    std::rethrow_exception(e);
  }
  MiniBatch b = std::move(ready_.at(want));
  ready_.erase(want);
  ++taken_;
  lock.unlock();
  cv_.notify_all();
  return b;
}

}  // namespace nodeweave::sampling
