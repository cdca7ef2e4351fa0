// Counter-based random numbers for samplers. Every draw is a pure function of a key and a counter,
// and keys are derived from (seed, batch, layer, node), never from a shared stream: the same seed
// gives bit-identical samples whatever the thread count or the order threads visit nodes in (the
// determinism DGL's sampler lacks, DGL #1110, #3302). SplitMix64 mixes; it passes BigCrush.
#pragma once
#include <cmath>
#include <cstdint>

#include "core_framework/runtime/generator.h"

namespace nodeweave::sampling {

// A key derived from a parent key and one more coordinate (batch, layer, node, ...). Two rounds of
// mixing so that nearby coordinates give unrelated keys.
inline uint64_t derive_key(uint64_t key, uint64_t coord) {
  return splitmix64(key ^ splitmix64(coord + 0x632be59bd9b4e019ull));
}

// The stream of draws of one key: draw i is splitmix64(key + i * golden) (SplitMix64's own stream).
class CounterRng {
 public:
  explicit CounterRng(uint64_t key) : state_(key) {}
  uint64_t next_u64() {
    state_ += 0x9e3779b97f4a7c15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) by Lemire's multiply-shift; the bias is below n / 2^64, far under what any
  // test or training run could see, and it needs no rejection loop (a fixed draw count per pick).
  uint64_t uniform_int(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next_u64()) * n) >> 64);
  }
  // One draw for an alias-table pick: a uniform position of [0, n) (the high word of draw * n, as
  // uniform_int) and the coin's variate in [0, 1) from the low word. For a given position the low
  // word is uniform at a resolution of n / 2^64, so one draw does the work of two (Walker's own
  // use of one number per pick) and a weighted pick costs what a uniform one does in draws.
  uint64_t alias_draw(uint64_t n, double* coin) {
    const unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * n;
    *coin = static_cast<double>(static_cast<uint64_t>(m) >> 11) * (1.0 / 9007199254740992.0);
    return static_cast<uint64_t>(m >> 64);
  }
  // Uniform double in [0, 1).
  double uniform() { return static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0); }
  // Uniform double in (0, 1]: safe under log().
  double uniform_pos() {
    return static_cast<double>((next_u64() >> 11) + 1) * (1.0 / 9007199254740992.0);
  }

 private:
  uint64_t state_;
};

// The uniform variate of one (key, node) pair without a stream: LABOR shares it between every seed
// that sees the node.
inline double uniform_of(uint64_t key, uint64_t node) {
  return static_cast<double>(derive_key(key, node) >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace nodeweave::sampling
