// The prefetching mini-batch loader behind nodeweave.dataloading.DataLoader for the neighbour
// samplers: C++ worker threads sample the blocks of the next batches and gather the rows of the
// prefetched features (input features of the first block's sources, labels of the last block's
// destinations), with no Python in the loop and so without the GIL.
//
// Batch i is made from the seeds order[i*b, (i+1)*b) with key derive_key(key, i /
// batch_dependency); the consumer receives batches in index order whatever thread made them, and
// batch i starts only once batch i - depth was taken (a window that slides in batch order, so a
// fast worker cannot take the room a slow one needs). A worker's exception is handed to the
// consumer with its batch. close() (and the destructor) stops and joins the workers; a consumer
// waiting in next() wakes up.
#pragma once
#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core_framework/runtime/array_view.h"
#include "sampling/block_sampler.h"
#include "sampling/feature_cache.h"

namespace nodeweave::sampling {

// A feature table to gather rows from: `rows` rows of `row_bytes` bytes each, contiguous, on the
// CPU. The caller keeps the memory alive for as long as the loader runs (the Python side holds the
// arrays, and nothing here may release a Python object without the GIL).
struct FeatureSource {
  int node_type = 0;
  bool of_outputs = false;  // rows of the output nodes (labels) instead of the input nodes
  const uint8_t* data = nullptr;
  int64_t rows = 0;
  int64_t row_bytes = 0;
  // Optional cache of the hottest rows, shared by the loaders of successive epochs: the first epoch
  // counts, the next ones read from it (built when a loader starts, see feature_cache.h).
  std::shared_ptr<FeatureCache> cache;
};

struct Gathered {
  std::vector<uint8_t> bytes;  // rows * row_bytes
  int64_t rows = 0;
};

struct MiniBatch {
  int64_t index = 0;
  std::vector<SampledBlock> blocks;
  std::vector<Gathered> features;  // one per FeatureSource, in order
};

struct LoaderConfig {
  std::shared_ptr<const BlockSampler> sampler;
  // Seeds in the epoch's order: node type and id of each.
  std::vector<int64_t> seed_types, seed_ids;
  int64_t batch_size = 1;
  bool drop_last = false;
  uint64_t key = 0;  // the epoch's key; batch i uses derive_key(key, i)
  std::vector<FeatureSource> features;
  int num_workers = 1;
  int depth = 2;
  int threads_per_worker = 1;  // OpenMP threads each worker's sampling may use
  DType idtype = DType::Int64;
  // Batches i and j with i / batch_dependency == j / batch_dependency share their key (LABOR's
  // batch dependency); 1: every batch its own.
  int64_t batch_dependency = 1;
};

class Loader {
 public:
  // Validates the configuration (ValueError) and starts the workers.
  explicit Loader(LoaderConfig config);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  int64_t num_batches() const { return num_batches_; }
  // The next batch in order; std::nullopt after the last one. Waits at most `timeout_ms` (then
  // returns with `timed_out` set) so that the caller can look for signals in between. Rethrows a
  // worker's exception for its batch.
  std::optional<MiniBatch> next(int64_t timeout_ms, bool* timed_out);
  // Stops and joins the workers (idempotent).
  void close();

 private:
  void work(int64_t worker);
  // Workers started: worker w makes batches w, w + stride, w + 2 stride ...
  int64_t stride() const {
    return std::min<int64_t>(config_.num_workers, std::max<int64_t>(num_batches_, 1));
  }
  MiniBatch make(int64_t index) const;

  LoaderConfig config_;
  int64_t num_batches_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, MiniBatch> ready_;
  std::map<int64_t, std::exception_ptr> failed_;
  int64_t taken_ = 0;
  int64_t made_ =
      0;  // batches made (under mu_): the last one completes the caches' epoch of counts
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace nodeweave::sampling
