// Parallel work over [0, n) whose per-chunk results are returned in chunk order: the samplers'
// way to stay deterministic. Each chunk fills its own output; joining them by position (not by
// which thread finished first) gives the same result at any thread count.
#pragma once
#include <algorithm>
#include <cstdint>
#include <mutex>
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

}  // namespace nodeweave::sampling
