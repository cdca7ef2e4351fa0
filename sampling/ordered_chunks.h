// Parallel work over [0, n) whose per-chunk results are used in chunk order: the samplers' way to
// stay deterministic. Each chunk fills its own output; taking them by position (not by which thread
// finished first) gives the same result at any thread count.
#pragma once
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "core_framework/runtime/parallel.h"

namespace nodeweave::sampling {

// fn(begin, end) -> T for each parallel chunk of [0, n); the results, first chunk first.
template <typename T, typename F>
std::vector<T> ordered_chunks(int64_t n, int64_t grain, const F& fn) {
  std::vector<std::pair<int64_t, T>> parts;
  std::mutex mu;
  parallel_for(0, n, grain, [&](int64_t b, int64_t e) {
    T result = fn(b, e);
    std::lock_guard<std::mutex> lock(mu);
    parts.emplace_back(b, std::move(result));
  });
  std::sort(parts.begin(), parts.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<T> out;
  out.reserve(parts.size());
  for (auto& p : parts) out.push_back(std::move(p.second));
  return out;
}

// produce(begin, end) -> T over the chunks [k * grain, (k + 1) * grain) of [0, n), in parallel and
// handed out in increasing k; consume(T&&) receives every chunk's result in chunk order, one at a
// time, run by whichever thread finds the next chunk ready. A serial step that must see the
// results in order (block compaction) so overlaps the parallel one instead of following it, and
// small chunks keep threads busy on skewed rows. The first exception is rethrown after the team
// ends; chunks after a failed one are not consumed.
template <typename T, typename P, typename C>
void ordered_pipeline(int64_t n, int64_t grain, const P& produce, const C& consume) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunks = (n + grain - 1) / grain;
  const int threads = static_cast<int>(std::min<int64_t>(get_num_threads(), chunks));
  if (threads <= 1 || omp_in_parallel()) {
    for (int64_t k = 0; k < chunks; ++k) consume(produce(k * grain, std::min(n, (k + 1) * grain)));
    return;
  }
  std::vector<std::optional<T>> slot(static_cast<size_t>(chunks));
  std::mutex mu;
  int64_t next = 0;       // the next chunk to consume
  bool consuming = false; // a thread is consuming; it also takes chunks that arrive meanwhile
  std::atomic<int64_t> counter{0};
  std::exception_ptr error;
#pragma omp parallel num_threads(threads)
  {
    for (;;) {
      const int64_t k = counter.fetch_add(1, std::memory_order_relaxed);
      if (k >= chunks) break;
      std::optional<T> result;
      try {
        result.emplace(produce(k * grain, std::min(n, (k + 1) * grain)));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        continue;
      }
      std::unique_lock<std::mutex> lock(mu);
      slot[static_cast<size_t>(k)] = std::move(result);
      if (consuming) continue;
      consuming = true;
      while (next < chunks && slot[static_cast<size_t>(next)] && !error) {
        T item = std::move(*slot[static_cast<size_t>(next)]);
        slot[static_cast<size_t>(next)].reset();
        ++next;
        lock.unlock();
        try {
          consume(std::move(item));
        } catch (...) {
          lock.lock();
          if (!error) error = std::current_exception();
          break;
        }
        lock.lock();
      }
      consuming = false;
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace nodeweave::sampling
