// The loader's optional feature cache: it counts how often each node's row is gathered during the
// first epoch, then keeps the rows of the `capacity` most frequently gathered nodes in one compact
// table for the epochs after. Which rows are hot is a property of the graph and the sampler (high
// in-degree nodes are sampled over and over), so one epoch of counts picks them well.
//
// What it saves is the cost of reading a row from where the features live. With the features in
// RAM that cost is already low (the CPU caches keep hub rows hot; bench/sampling/
// feature_cache_bench.py measures no gain); with a memory-mapped file larger than RAM
// (np.load(..., mmap_mode='c') + from_numpy), a hit is a page fault saved. The gathered values are
// the same bytes either way: caching never changes a batch.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace nodeweave::sampling {

class FeatureCache {
 public:
  // A cache for a table of `rows` rows holding at most `capacity` of them (ValueError when
  // capacity < 0).
  FeatureCache(int64_t rows, int64_t capacity);

  int64_t rows() const { return rows_; }
  int64_t capacity() const { return capacity_; }
  // Rows held (0 until built).
  int64_t size() const;

  // Counts one gather of each id (thread-safe; ignored once built).
  void count(const int64_t* ids, int64_t n);
  // Marks that every batch of an epoch has been gathered (the loader calls it when its last batch
  // is made): the counts now describe a whole epoch, so build() may use them.
  void epoch_counted() { epoch_counted_.store(true, std::memory_order_release); }

  // Once an epoch has been counted, fills the cache with the rows of the `capacity` most counted
  // nodes (ties: the smaller id; never a node counted 0 times) read from `data` (`rows` rows of
  // `row_bytes`). A no-op when already built or nothing was counted. Thread-safe.
  void build(const uint8_t* data, int64_t row_bytes);

  // Copies the rows of `ids` to `out`, from the cache when it holds them, else from `data`; counts
  // them while the cache is not built.
  void gather(const int64_t* ids, int64_t n, const uint8_t* data, int64_t row_bytes, uint8_t* out);

  // Rows gathered since construction, and how many of them came from the cache.
  int64_t lookups() const { return lookups_.load(std::memory_order_relaxed); }
  int64_t hits() const { return hits_.load(std::memory_order_relaxed); }

 private:
  int64_t rows_, capacity_;
  std::vector<std::atomic<uint32_t>> counts_;
  // Built once, then read-only: slot_[v] is v's row in table_, or -1.
  std::atomic<bool> built_{false}, epoch_counted_{false};
  std::mutex build_mu_;
  std::vector<int32_t> slot_;
  std::vector<uint8_t> table_;
  int64_t row_bytes_ = 0, size_ = 0;
  std::atomic<int64_t> lookups_{0}, hits_{0};
};

}  // namespace nodeweave::sampling
