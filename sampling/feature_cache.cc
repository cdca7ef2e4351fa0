// FeatureCache: first-epoch counts, then a packed table of the hottest rows.
#include "sampling/feature_cache.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core_framework/runtime/error.h"

namespace nodeweave::sampling {

FeatureCache::FeatureCache(int64_t rows, int64_t capacity)
    : rows_(rows), capacity_(std::min(capacity, rows)), counts_(static_cast<size_t>(rows)) {
  NW_CHECK(capacity >= 0, ValueError, "DataLoader: cache_size must be >= 0, got ", capacity);
  // Slots are int32: a cache of 2^31 rows would not be a cache.
  NW_CHECK(capacity_ <= std::numeric_limits<int32_t>::max(), ValueError, "DataLoader: cache_size ",
           capacity, " is larger than a cache can be (2^31 - 1 rows)");
  for (auto& c : counts_) c.store(0, std::memory_order_relaxed);
}

int64_t FeatureCache::size() const { return built_.load(std::memory_order_acquire) ? size_ : 0; }

void FeatureCache::count(const int64_t* ids, int64_t n) {
  if (built_.load(std::memory_order_acquire)) return;
  for (int64_t i = 0; i < n; ++i) {
    std::atomic<uint32_t>& c = counts_[static_cast<size_t>(ids[i])];
    // Saturate instead of wrapping (a node gathered 4 billion times is hot enough).
    if (c.load(std::memory_order_relaxed) != std::numeric_limits<uint32_t>::max())
      c.fetch_add(1, std::memory_order_relaxed);
  }
}

void FeatureCache::build(const uint8_t* data, int64_t row_bytes) {
  std::lock_guard<std::mutex> lock(build_mu_);
  if (built_.load(std::memory_order_acquire) || capacity_ == 0 ||
      !epoch_counted_.load(std::memory_order_acquire))
    return;
  // A snapshot of the counts: workers of a loader still running may go on counting, and the sort
  // below needs keys that do not change under it.
  std::vector<uint32_t> snap(static_cast<size_t>(rows_));
  std::vector<int64_t> counted;
  for (int64_t v = 0; v < rows_; ++v) {
    snap[static_cast<size_t>(v)] = counts_[static_cast<size_t>(v)].load(std::memory_order_relaxed);
    if (snap[static_cast<size_t>(v)] > 0) counted.push_back(v);
  }
  if (counted.empty()) return;
  const auto hotter = [&](int64_t a, int64_t b) {
    const uint32_t ca = snap[static_cast<size_t>(a)], cb = snap[static_cast<size_t>(b)];
    return ca > cb || (ca == cb && a < b);
  };
  const int64_t keep = std::min<int64_t>(capacity_, static_cast<int64_t>(counted.size()));
  std::nth_element(counted.begin(), counted.begin() + keep - 1, counted.end(), hotter);
  counted.resize(static_cast<size_t>(keep));
  // Packed in id order: rows that are read together are near each other when ids carry locality.
  std::sort(counted.begin(), counted.end());
  slot_.assign(static_cast<size_t>(rows_), -1);
  table_.resize(static_cast<size_t>(keep * row_bytes));
  for (int64_t i = 0; i < keep; ++i) {
    const int64_t v = counted[static_cast<size_t>(i)];
    slot_[static_cast<size_t>(v)] = static_cast<int32_t>(i);
    std::memcpy(table_.data() + i * row_bytes, data + v * row_bytes,
                static_cast<size_t>(row_bytes));
  }
  row_bytes_ = row_bytes;
  size_ = keep;
  built_.store(true, std::memory_order_release);
}

void FeatureCache::gather(const int64_t* ids, int64_t n, const uint8_t* data, int64_t row_bytes,
                          uint8_t* out) {
  const size_t bytes = static_cast<size_t>(row_bytes);
  int64_t hits = 0;
  if (built_.load(std::memory_order_acquire)) {
    NW_CHECK(row_bytes == row_bytes_, ValueError,
             "DataLoader: a cached feature changed its row size from ", row_bytes_, " to ",
             row_bytes, " bytes");
    for (int64_t i = 0; i < n; ++i) {
      const int32_t s = slot_[static_cast<size_t>(ids[i])];
      const uint8_t* src =
          s >= 0 ? table_.data() + static_cast<int64_t>(s) * row_bytes : data + ids[i] * row_bytes;
      hits += s >= 0;
      std::memcpy(out + i * row_bytes, src, bytes);
    }
  } else {
    count(ids, n);
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(out + i * row_bytes, data + ids[i] * row_bytes, bytes);
  }
  lookups_.fetch_add(n, std::memory_order_relaxed);
  hits_.fetch_add(hits, std::memory_order_relaxed);
}

}  // namespace nodeweave::sampling
