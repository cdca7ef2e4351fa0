// The loop every elementwise kernel runs in. Operands are read through broadcast strides; adjacent
// dimensions that are contiguous for every operand are merged, so most calls become one flat loop.
// Flat loops with unit (or zero, for broadcast scalars) strides are written as plain indexed loops
// so the compiler vectorizes them; the range is split over OpenMP threads above kGrainSize.
#pragma once
#include <array>
#include <tuple>
#include <utility>

#include "core_framework/ops/broadcast.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave {

constexpr int kMaxLoopDims = 16;

template <int N>  // N operands, output first
struct LoopGeometry {
  int ndim = 0;
  int64_t numel = 1;
  std::array<int64_t, kMaxLoopDims> shape{};
  std::array<std::array<int64_t, kMaxLoopDims>, N> strides{};  // in elements
};

template <int N>
LoopGeometry<N> make_geometry(const Shape& shape, const std::array<Shape, N>& strides) {
  NW_CHECK(static_cast<int>(shape.size()) <= kMaxLoopDims, ValueError, "tensors with more than ",
           kMaxLoopDims, " dimensions are not supported");
  LoopGeometry<N> g;
  g.numel = shape_numel(shape);
  // Keep non-trivial dims, then merge dim i into i+1 (inner) when contiguous for all operands.
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (g.ndim > 0) {
      bool merge = true;
      for (int k = 0; k < N; ++k) {
        if (g.strides[k][g.ndim - 1] != strides[k][d] * shape[d]) merge = false;
      }
      if (merge) {
        g.shape[g.ndim - 1] *= shape[d];
        for (int k = 0; k < N; ++k) g.strides[k][g.ndim - 1] = strides[k][d];
        continue;
      }
    }
    g.shape[g.ndim] = shape[d];
    for (int k = 0; k < N; ++k) g.strides[k][g.ndim] = strides[k][d];
    ++g.ndim;
  }
  if (g.ndim == 0) {  // scalar
    g.ndim = 1;
    g.shape[0] = 1;
    for (int k = 0; k < N; ++k) g.strides[k][0] = 0;
  }
  return g;
}

namespace detail {

template <typename Out, typename... In, typename F, size_t... I>
inline void run_inner(Out* out, int64_t os, std::tuple<const In*...> in,
                      const std::array<int64_t, sizeof...(In)>& is, int64_t n, const F& f,
                      std::index_sequence<I...>) {
  bool unit = os == 1 && ((is[I] == 1) && ...);
  if (unit) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(std::get<I>(in)[i]...);
    return;
  }
  if constexpr (sizeof...(In) == 2) {
    // Tensor op scalar and scalar op tensor: the common broadcast cases.
    if (os == 1 && is[0] == 1 && is[1] == 0) {
      auto b = std::get<1>(in)[0];
      const auto* a = std::get<0>(in);
      for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b);
      return;
    }
    if (os == 1 && is[0] == 0 && is[1] == 1) {
      auto a = std::get<0>(in)[0];
      const auto* b = std::get<1>(in);
      for (int64_t i = 0; i < n; ++i) out[i] = f(a, b[i]);
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) out[i * os] = f(std::get<I>(in)[i * is[I]]...);
}

template <typename... In, size_t... I>
inline std::tuple<const In*...> offset_ptrs(const std::array<const void*, sizeof...(In)>& base,
                                            const int64_t* off, std::index_sequence<I...>) {
  return std::make_tuple((static_cast<const In*>(base[I]) + off[I])...);
}

// True when some operand walks its two innermost loop dims in swapped order (a transpose): a flat
// loop would then touch a new cache line per element of that operand.
template <int N>
bool wants_tiles(const LoopGeometry<N>& g) {
  if (g.ndim < 2) return false;
  const int a = g.ndim - 2, b = g.ndim - 1;
  if (g.shape[a] < 8 || g.shape[b] < 8) return false;
  for (int k = 0; k < N; ++k) {
    if (g.strides[k][a] == 1 && g.strides[k][b] > 1) return true;
  }
  return false;
}

// The two innermost dims in kTile x kTile blocks: every cache line an operand brings in is used
// for a whole tile before it is evicted, whichever of the two dims that operand is contiguous in.
template <typename Out, typename... In, typename F>
void run_tiled(const LoopGeometry<1 + sizeof...(In)>& g, Out* out_base,
               const std::array<const void*, sizeof...(In)>& in_base, const F& f) {
  constexpr int N = 1 + sizeof...(In);
  constexpr int64_t kTile = 32;
  const int a = g.ndim - 2, b = g.ndim - 1;
  const int64_t R = g.shape[a], C = g.shape[b];
  const int64_t outer = g.numel / (R * C);
  const int64_t row_tiles = (R + kTile - 1) / kTile;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / (kTile * C));
  parallel_for(0, outer * row_tiles, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      int64_t o = t / row_tiles, i0 = (t % row_tiles) * kTile;
      std::array<int64_t, N> base{};
      for (int d = a - 1; d >= 0; --d) {  // unravel the outer index over the leading dims
        int64_t idx = o % g.shape[d];
        o /= g.shape[d];
        for (int k = 0; k < N; ++k) base[k] += idx * g.strides[k][d];
      }
      std::array<int64_t, sizeof...(In)> is;
      for (size_t k = 0; k < sizeof...(In); ++k) is[k] = g.strides[k + 1][b];
      const int64_t i1 = std::min(R, i0 + kTile);
      for (int64_t j0 = 0; j0 < C; j0 += kTile) {
        const int64_t n = std::min(kTile, C - j0);
        for (int64_t i = i0; i < i1; ++i) {
          std::array<int64_t, N> off;
          for (int k = 0; k < N; ++k) off[k] = base[k] + i * g.strides[k][a] + j0 * g.strides[k][b];
          auto ptrs = offset_ptrs<In...>(in_base, off.data() + 1, std::index_sequence_for<In...>{});
          run_inner<Out, In...>(out_base + off[0], g.strides[0][b], ptrs, is, n, f,
                                std::index_sequence_for<In...>{});
        }
      }
    }
  });
}

}  // namespace detail

// out[...] = f(in0[...], in1[...], ...) over out's shape; each input is broadcast to it.
// Out and In are the C++ element types; inputs must already have those dtypes.
template <typename Out, typename... In, typename F>
void elementwise_kernel(const Tensor& out, const std::array<Tensor, sizeof...(In)>& ins,
                        const F& f) {
  constexpr int N = 1 + sizeof...(In);
  std::array<Shape, N> strides;
  strides[0] = out.strides();
  for (size_t k = 0; k < sizeof...(In); ++k)
    strides[k + 1] = broadcast_strides(ins[k], out.shape());
  const LoopGeometry<N> g = make_geometry<N>(out.shape(), strides);
  if (g.numel == 0) return;
  Out* out_base = out.data<Out>();
  std::array<const void*, sizeof...(In)> in_base;
  for (size_t k = 0; k < sizeof...(In); ++k) in_base[k] = ins[k].data_ptr();
  const int64_t inner = g.shape[g.ndim - 1];

  // Each chunk covers [b, e) of the flat index; walk it in runs along the innermost dim.
  auto body = [&](int64_t b, int64_t e) {
    std::array<int64_t, kMaxLoopDims> idx{};
    int64_t rem = b;
    for (int d = g.ndim - 1; d >= 0; --d) {
      idx[d] = rem % g.shape[d];
      rem /= g.shape[d];
    }
    int64_t pos = b;
    while (pos < e) {
      std::array<int64_t, N> off{};
      for (int d = 0; d < g.ndim; ++d)
        for (int k = 0; k < N; ++k) off[k] += idx[d] * g.strides[k][d];
      int64_t run = std::min(inner - idx[g.ndim - 1], e - pos);
      std::array<int64_t, sizeof...(In)> is;
      for (size_t k = 0; k < sizeof...(In); ++k) is[k] = g.strides[k + 1][g.ndim - 1];
      auto ptrs =
          detail::offset_ptrs<In...>(in_base, off.data() + 1, std::index_sequence_for<In...>{});
      detail::run_inner<Out, In...>(out_base + off[0], g.strides[0][g.ndim - 1], ptrs, is, run, f,
                                    std::index_sequence_for<In...>{});
      pos += run;
      // Advance the multi-index past this run.
      idx[g.ndim - 1] += run;
      for (int d = g.ndim - 1; d > 0 && idx[d] >= g.shape[d]; --d) {
        idx[d] = 0;
        ++idx[d - 1];
      }
    }
  };
  if (detail::wants_tiles<N>(g)) {
    detail::run_tiled<Out, In...>(g, out_base, in_base, f);
    return;
  }
  parallel_for(0, g.numel, kGrainSize, body);
}

}  // namespace nodeweave
