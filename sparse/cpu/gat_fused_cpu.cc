// CPU fused GAT edge pipeline (see sparse/gat_fused.h for the math): forward and backward without
// any (num_edges, H) array. Unfused, a GAT layer writes and re-reads the logits, the leaky ReLU,
// the attention and, in backward, three more per-edge gradients; each is a full pass over
// num_edges x H memory. Here the only per-edge storage is per-thread scratch for one row.
//
// Every row is processed the same way: a first loop gathers the small per-node operands of its
// edges (el[u] or the packed destination row, H or 4H values) and writes the exponent
// x = leaky_relu(s) - row_max into the scratch; one vectorized exp runs over the scratch; then a
// tight gather loop streams the wide rows (feat[u] or grad_out[v], H x D) through vector FMAs
// over D. Keeping the exp out of the gather loop lets the out-of-order core keep many row fetches
// in flight (the gathers are what bounds the kernel, as for gSpMM).
//
// Forward, parallel over destination rows of the in-edge view (one writer per output row):
//   out[v] = sum a * feat[u] with a = exp(x) * (1/sum), stats[v] = (max, 1/sum).
// Backward, two passes, each parallel over rows with no atomics. With c = a * leaky_relu'(s) and
// dot_v = <grad_out[v,h], out[v,h]> (= sum_e a da, the softmax backward's row term):
//   A. destinations (in-edge view): grad_er[v] = <grad_out[v], sum_e c feat[u]> - dot_v sum_e c,
//      and a packed row (er, max, 1/sum, dot_v) per destination for pass B;
//   B. sources (out-edge view): grad_feat[u] = sum_e a grad_out[v] and
//      grad_el[u] = <feat[u], sum_e c grad_out[v]> - sum_e c dot_v.
// Hoisting <., .> out of the edge sums leaves two vector FMAs per edge and head and no per-edge
// horizontal sum (a per-edge dot made the backward about 1.15x slower), and pass B reads one packed
// node row (one cache line for H = 4 floats) instead of er, stats and out[v].
// Every output row is written by one thread in edge order, so results are bit-identical for any
// thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "core_framework/runtime/generator.h"
#include "sparse/cpu/cpu_kernels.h"
#include "sparse/cpu/prefetch.h"
#include "sparse/cpu/row_partition.h"

// glibc's libmvec has vector exp/expf (reached through libm, which every C++ link pulls in); its
// <math.h> only announces them under -ffast-math. Declaring the simd variants here lets the exp
// loop below call them without fast-math for the rest of the file: 16 floats per call, measured
// 7x faster than scalar expf, which was 15% of the backward.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
extern "C" float expf(float) noexcept __attribute__((__simd__("notinbranch")));
extern "C" double exp(double) noexcept __attribute__((__simd__("notinbranch")));
#endif

namespace nodeweave::sparse::cpu {

namespace {

using detail::prefetch_span;

// Edges ahead whose scattered rows are prefetched. The wide rows (H x D) of the gather loops: 16
// rows of a (H=4, D=16) float block are 4 KiB in flight, well inside L1. The loops that read H or
// 4H values per edge run through edges several times faster, so they look further ahead. (On the
// 2-core VM, 2^16 nodes / 2^20 edges, H=4, D=16, distances 8-32 / 16-128 measured within noise.)
constexpr int64_t kPrefetchWide = 16;
constexpr int64_t kPrefetchSmall = 64;

// Exps run in blocks of one 64-byte vector over scratch padded to whole blocks, so every value
// goes through the same vector routine whatever the row length: forward, pass A and pass B then
// compute bit-identical attention for an edge (a scalar remainder loop would round differently).
template <typename T>
constexpr int64_t kExpBlock = 64 / sizeof(T);

template <typename T>
inline int64_t padded(int64_t n) {
  return (n + kExpBlock<T> - 1) / kExpBlock<T> * kExpBlock<T>;
}

// x[i] = exp(x[i]) for i < n, n a multiple of kExpBlock.
template <typename T>
inline void exp_blocks(T* __restrict x, int64_t n) {
  for (int64_t i = 0; i < n; i += kExpBlock<T>) {
#pragma omp simd
    for (int64_t k = 0; k < kExpBlock<T>; ++k) x[i + k] = std::exp(x[i + k]);
  }
}

// Grows a row's scratch to `n` values plus the padding of the exp blocks, which is zeroed so that
// exp never sees stale values.
template <typename T>
inline T* row_scratch(std::vector<T>& buf, int64_t n) {
  const int64_t np = padded<T>(n);
  if (static_cast<int64_t>(buf.size()) < np) buf.resize(np);
  std::fill(buf.begin() + n, buf.begin() + np, T(0));
  return buf.data();
}

// The dropout mask's value at i, or 1 without dropout (x * T(1) is x exactly, so the compiler
// drops the product and the dropout-free loops carry no mask).
template <bool kDrop, typename T>
[[gnu::always_inline]] inline T kept(const T* k, int64_t i) {
  if constexpr (kDrop) return k[i];
  return T(1);
}

template <typename T>
[[gnu::always_inline]] inline T leaky_relu(T s, T slope) {
  return s > T(0) ? s : slope * s;
}

// D as a compile-time constant when the dispatcher picked one of the common widths (the inner
// loops then compile to a fixed number of vector instructions), the runtime value otherwise.
template <int64_t kD>
[[gnu::always_inline]] inline int64_t width(int64_t d) {
  return kD > 0 ? kD : d;
}

// y += a * x over one head's D features.
template <typename T>
[[gnu::always_inline]] inline void axpy(T* __restrict y, T a, const T* __restrict x, int64_t n) {
#pragma omp simd
  for (int64_t k = 0; k < n; ++k) y[k] += a * x[k];
}

// y += a * x and z += c * x in one sweep, so x (a scattered grad_out row) is loaded once for both.
template <typename T>
[[gnu::always_inline]] inline void axpy2(T* __restrict y, T a, T* __restrict z, T c,
                                         const T* __restrict x, int64_t n) {
#pragma omp simd
  for (int64_t k = 0; k < n; ++k) {
    y[k] += a * x[k];
    z[k] += c * x[k];
  }
}

// <x, y> over one head's D features, once per row. omp simd reduction lets the compiler split the
// sum into vector lanes (a plain loop is a chain of dependent adds it may not reorder without
// -ffast-math); the order is fixed by the code, not by the thread count.
template <typename T>
[[gnu::always_inline]] inline T dot(const T* __restrict x, const T* __restrict y, int64_t n) {
  T s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t k = 0; k < n; ++k) s += x[k] * y[k];
  return s;
}

template <typename T, typename I>
struct GatData {
  // The view a pass walks (in-edge view for the forward and pass A, out-edge view for pass B).
  const I* indptr;
  const I* indices;
  int64_t nnz_end;  // indptr[num_rows]: prefetches must not read indices past it
  int64_t heads, d;
  T slope;
  const T* el;
  const T* er;
  const T* feat;
  const T* out;
  const T* grad_out;
  T* out_w;  // forward: out
  T* stats;  // forward writes, backward reads
  T* grad_el;
  T* grad_er;
  T* grad_feat;
  // Backward: per destination, 4 x H values: er | max | 1/sum | <grad_out[v,h], out[v,h]>.
  T* node;
  // Attention dropout (GatDropout): the edge ids of the walked view index the mask.
  const I* eids;
  bool dropout = false;
  uint64_t seed = 0, threshold = 0;
  T keep_scale = T(1);

  int64_t col(int64_t j) const { return static_cast<int64_t>(indices[j]); }
  // k[j * H + h] for the row's edges beg..beg+deg of the view: the dropout mask's value, what
  // bernoulli_mask put at element eid * H + h of the (num_edges, H, 1) attention. One tight loop
  // per row, apart from the gathers, so the hash's multiplies pipeline.
  void fill_keep(int64_t beg, int64_t deg, T* __restrict k) const {
    const T keep = keep_scale;
    for (int64_t j = 0; j < deg; ++j) {
      const auto base = static_cast<uint64_t>(static_cast<int64_t>(eids[beg + j]) * heads);
      T* __restrict kj = k + j * heads;
      // One vector of 64-bit hashes per edge (vpmullq): 8 heads in one AVX-512 register.
#pragma omp simd
      for (int64_t h = 0; h < heads; ++h)
        kj[h] = keep_at(seed, base + static_cast<uint64_t>(h), threshold) ? keep : T(0);
    }
  }
  // Prefetches the row at base of the edge kAhead positions after j.
  template <int64_t kAhead>
  [[gnu::always_inline]] void prefetch_row(const T* base, int64_t j, int64_t len) const {
    if (j + kAhead < nnz_end) prefetch_span(base + col(j + kAhead) * len, len);
  }
};

// Forward over destination rows [rb, re).
template <typename T, typename I, int64_t kD, bool kDrop>
void forward_rows(const GatData<T, I>& p, int64_t rb, int64_t re) {
  const int64_t H = p.heads, D = width<kD>(p.d), HD = H * D;
  const T slope = p.slope;
  std::vector<T> buf, kbuf, mx(H), inv(H);
  for (int64_t v = rb; v < re; ++v) {
    const int64_t beg = p.indptr[v], end = p.indptr[v + 1], deg = end - beg;
    T* orow = p.out_w + v * HD;
    T* st = p.stats + v * 2 * H;
    std::fill(orow, orow + HD, T(0));
    if (deg == 0) {
      std::fill(st, st + 2 * H, T(0));
      continue;
    }
    T* x = row_scratch(buf, deg * H);
    const T* erv = p.er + v * H;
    std::fill(mx.begin(), mx.end(), -std::numeric_limits<T>::infinity());
    for (int64_t j = 0; j < deg; ++j) {
      p.template prefetch_row<kPrefetchSmall>(p.el, beg + j, H);
      const T* elu = p.el + p.col(beg + j) * H;
      for (int64_t h = 0; h < H; ++h) {
        const T l = leaky_relu(elu[h] + erv[h], slope);
        x[j * H + h] = l;
        mx[h] = std::max(mx[h], l);
      }
    }
    for (int64_t j = 0; j < deg; ++j)
      for (int64_t h = 0; h < H; ++h) x[j * H + h] -= mx[h];
    exp_blocks(x, padded<T>(deg * H));
    std::fill(inv.begin(), inv.end(), T(0));  // the row sums until inverted below
    for (int64_t j = 0; j < deg; ++j)
      for (int64_t h = 0; h < H; ++h) inv[h] += x[j * H + h];
    for (int64_t h = 0; h < H; ++h) {
      inv[h] = T(1) / inv[h];
      st[2 * h] = mx[h];
      st[2 * h + 1] = inv[h];
    }
    // a = exp(l - max) * (1/sum): the expression the backward recomputes; with dropout, times
    // the mask as eager's mul(a, mask) rounds it.
    if constexpr (kDrop) {
      T* k = row_scratch(kbuf, deg * H);
      p.fill_keep(beg, deg, k);
      for (int64_t j = 0; j < deg * H; ++j) x[j] = x[j] * inv[j % H] * k[j];
    } else {
      for (int64_t j = 0; j < deg; ++j)
        for (int64_t h = 0; h < H; ++h) x[j * H + h] *= inv[h];
    }
    for (int64_t j = 0; j < deg; ++j) {
      p.template prefetch_row<kPrefetchWide>(p.feat, beg + j, HD);
      const T* f = p.feat + p.col(beg + j) * HD;
      for (int64_t h = 0; h < H; ++h) axpy(orow + h * D, x[j * H + h], f + h * D, D);
    }
  }
}

// Backward pass A over destination rows [rb, re): grad_er, and the packed destination rows.
template <typename T, typename I, int64_t kD, bool kDrop>
void backward_dst_rows(const GatData<T, I>& p, int64_t rb, int64_t re) {
  const int64_t H = p.heads, D = width<kD>(p.d), HD = H * D;
  const T slope = p.slope;
  std::vector<T> buf, kbuf, w(HD), csum(H);
  for (int64_t v = rb; v < re; ++v) {
    const int64_t beg = p.indptr[v], end = p.indptr[v + 1], deg = end - beg;
    const T* g = p.grad_out + v * HD;
    const T* st = p.stats + v * 2 * H;
    T* nd = p.node + v * 4 * H;
    T* ger = p.grad_er + v * H;
    for (int64_t h = 0; h < H; ++h) {
      nd[h] = p.er[v * H + h];
      nd[H + h] = st[2 * h];
      nd[2 * H + h] = st[2 * h + 1];
      nd[3 * H + h] = dot(g + h * D, p.out + v * HD + h * D, D);
    }
    if (deg == 0) {
      std::fill(ger, ger + H, T(0));
      continue;
    }
    T* x = row_scratch(buf, deg * H);
    for (int64_t j = 0; j < deg; ++j) {
      p.template prefetch_row<kPrefetchSmall>(p.el, beg + j, H);
      const T* elu = p.el + p.col(beg + j) * H;
      for (int64_t h = 0; h < H; ++h) x[j * H + h] = leaky_relu(elu[h] + nd[h], slope) - nd[H + h];
    }
    exp_blocks(x, padded<T>(deg * H));
    T* k = nullptr;
    if constexpr (kDrop) {
      k = row_scratch(kbuf, deg * H);
      p.fill_keep(beg, deg, k);
    }
    // The el row is back in cache from the first loop; feat[u] is the stream that bounds the loop.
    std::fill(csum.begin(), csum.end(), T(0));
    std::fill(w.begin(), w.end(), T(0));
    for (int64_t j = 0; j < deg; ++j) {
      p.template prefetch_row<kPrefetchWide>(p.feat, beg + j, HD);
      const int64_t u = p.col(beg + j);
      const T* elu = p.el + u * H;
      const T* f = p.feat + u * HD;
      for (int64_t h = 0; h < H; ++h) {
        const T a = x[j * H + h] * nd[2 * H + h];
        const T c = elu[h] + nd[h] > T(0) ? a : slope * a;
        csum[h] += c;
        axpy(w.data() + h * D, c * kept<kDrop>(k, j * H + h), f + h * D, D);
      }
    }
    for (int64_t h = 0; h < H; ++h)
      ger[h] = dot(g + h * D, w.data() + h * D, D) - nd[3 * H + h] * csum[h];
  }
}

// Backward pass B over source rows [rb, re) of the out-edge view: grad_el and grad_feat.
template <typename T, typename I, int64_t kD, bool kDrop>
void backward_src_rows(const GatData<T, I>& p, int64_t rb, int64_t re) {
  const int64_t H = p.heads, D = width<kD>(p.d), HD = H * D;
  const T slope = p.slope;
  std::vector<T> buf, kbuf, w(HD), cdot(H);
  for (int64_t u = rb; u < re; ++u) {
    const int64_t beg = p.indptr[u], end = p.indptr[u + 1], deg = end - beg;
    const T* elu = p.el + u * H;
    const T* f = p.feat + u * HD;
    T* gel = p.grad_el + u * H;
    T* gf = p.grad_feat + u * HD;
    std::fill(gf, gf + HD, T(0));
    if (deg == 0) {
      std::fill(gel, gel + H, T(0));
      continue;
    }
    T* x = row_scratch(buf, deg * H);
    for (int64_t j = 0; j < deg; ++j) {
      p.template prefetch_row<kPrefetchSmall>(p.node, beg + j, 4 * H);
      const T* nd = p.node + p.col(beg + j) * 4 * H;
      for (int64_t h = 0; h < H; ++h) x[j * H + h] = leaky_relu(elu[h] + nd[h], slope) - nd[H + h];
    }
    exp_blocks(x, padded<T>(deg * H));
    T* k = nullptr;
    if constexpr (kDrop) {
      k = row_scratch(kbuf, deg * H);
      p.fill_keep(beg, deg, k);
    }
    // The node row is back in cache from the first loop; grad_out[v] is the stream that bounds the
    // loop.
    std::fill(cdot.begin(), cdot.end(), T(0));
    std::fill(w.begin(), w.end(), T(0));
    for (int64_t j = 0; j < deg; ++j) {
      p.template prefetch_row<kPrefetchWide>(p.grad_out, beg + j, HD);
      const int64_t v = p.col(beg + j);
      const T* nd = p.node + v * 4 * H;
      const T* g = p.grad_out + v * HD;
      for (int64_t h = 0; h < H; ++h) {
        const T a = x[j * H + h] * nd[2 * H + h];
        const T c = elu[h] + nd[h] > T(0) ? a : slope * a;
        cdot[h] += c * nd[3 * H + h];
        const T keep = kept<kDrop>(k, j * H + h);
        axpy2(gf + h * D, a * keep, w.data() + h * D, c * keep, g + h * D, D);
      }
    }
    for (int64_t h = 0; h < H; ++h) gel[h] = dot(f + h * D, w.data() + h * D, D) - cdot[h];
  }
}

// Calls fn(std::integral_constant<int64_t, kD>) with kD = d for the widths GAT models use, 0 (run-
// time width) for the rest.
template <typename F>
void dispatch_width(int64_t d, const F& fn) {
  switch (d) {
    case 8:
      return fn(std::integral_constant<int64_t, 8>{});
    case 16:
      return fn(std::integral_constant<int64_t, 16>{});
    case 32:
      return fn(std::integral_constant<int64_t, 32>{});
    case 64:
      return fn(std::integral_constant<int64_t, 64>{});
    default:
      return fn(std::integral_constant<int64_t, 0>{});
  }
}

// Calls fn(width constant, std::bool_constant<dropout>): the dropout-free loops carry no mask.
template <typename F>
void dispatch_width_dropout(int64_t d, bool dropout, const F& fn) {
  dispatch_width(d, [&](auto kd) {
    if (dropout)
      fn(kd, std::true_type{});
    else
      fn(kd, std::false_type{});
  });
}

template <typename T, typename I>
GatData<T, I> gat_data(const CompressedView& rows, const ArrayView& el, const ArrayView& er,
                       const ArrayView& feat, double slope, const GatDropout& dropout) {
  GatData<T, I> p{};
  p.indptr = rows.indptr.ptr<I>();
  p.indices = rows.indices.ptr<I>();
  p.eids = rows.eids.ptr<I>();
  p.dropout = dropout.p > 0;
  p.seed = dropout.seed;
  p.threshold = keep_threshold(dropout.p);
  // bernoulli_mask's kept value, rounded to T as its kernel rounds it.
  p.keep_scale = static_cast<T>(dropout.p < 1 ? 1.0 / (1.0 - dropout.p) : 0.0);
  p.nnz_end = rows.num_rows > 0 ? static_cast<int64_t>(p.indptr[rows.num_rows]) : 0;
  p.heads = el.shape[1];
  p.d = feat.shape[2];
  p.slope = static_cast<T>(slope);
  p.el = el.ptr<T>();
  p.er = er.ptr<T>();
  p.feat = feat.ptr<T>();
  return p;
}

}  // namespace

void gat_aggregate_forward(const CompressedView& in_rows, const ArrayView& el, const ArrayView& er,
                           const ArrayView& feat, double slope, const GatDropout& dropout,
                           ArrayView out, ArrayView stats) {
  if (in_rows.num_rows == 0) return;
  NW_DISPATCH_FLOAT(el.dtype, "gat_aggregate_forward", {
    using T = scalar_t;
    NW_DISPATCH_INDEX(in_rows.indptr.dtype, "gat_aggregate_forward", {
      using I = scalar_t;
      GatData<T, I> p = gat_data<T, I>(in_rows, el, er, feat, slope, dropout);
      p.out_w = out.ptr<T>();
      p.stats = stats.ptr<T>();
      dispatch_width_dropout(p.d, p.dropout, [&](auto kd, auto drop) {
        constexpr int64_t kD = decltype(kd)::value;
        constexpr bool kDrop = decltype(drop)::value;
        detail::parallel_rows(p.indptr, in_rows.num_rows, p.heads * p.d, [&](int64_t rb, int64_t re) {
          forward_rows<T, I, kD, kDrop>(p, rb, re);
        });
      });
    });
  });
}

void gat_aggregate_backward(const CompressedView& in_rows, const CompressedView& out_rows,
                            const ArrayView& el, const ArrayView& er, const ArrayView& feat,
                            const ArrayView& out, const ArrayView& stats, const ArrayView& grad_out,
                            double slope, const GatDropout& dropout, ArrayView grad_el,
                            ArrayView grad_er, ArrayView grad_feat) {
  NW_DISPATCH_FLOAT(el.dtype, "gat_aggregate_backward", {
    using T = scalar_t;
    NW_DISPATCH_INDEX(in_rows.indptr.dtype, "gat_aggregate_backward", {
      using I = scalar_t;
      GatData<T, I> a = gat_data<T, I>(in_rows, el, er, feat, slope, dropout);
      a.out = out.ptr<T>();
      a.grad_out = grad_out.ptr<T>();
      a.stats = stats.ptr<T>();
      a.grad_el = grad_el.ptr<T>();
      a.grad_er = grad_er.ptr<T>();
      a.grad_feat = grad_feat.ptr<T>();
      // Node-sized (num_dst x 4H), not edge-sized; pass A writes every element before pass B
      // reads any, so it is left uninitialized.
      std::unique_ptr<T[]> node(new T[in_rows.num_rows * 4 * a.heads]);
      a.node = node.get();
      GatData<T, I> b = a;
      b.indptr = out_rows.indptr.ptr<I>();
      b.indices = out_rows.indices.ptr<I>();
      b.eids = out_rows.eids.ptr<I>();
      b.nnz_end = out_rows.num_rows > 0 ? static_cast<int64_t>(b.indptr[out_rows.num_rows]) : 0;
      const int64_t hd = a.heads * a.d;
      dispatch_width_dropout(a.d, a.dropout, [&](auto kd, auto drop) {
        constexpr int64_t kD = decltype(kd)::value;
        constexpr bool kDrop = decltype(drop)::value;
        detail::parallel_rows(a.indptr, in_rows.num_rows, hd, [&](int64_t rb, int64_t re) {
          backward_dst_rows<T, I, kD, kDrop>(a, rb, re);
        });
        detail::parallel_rows(b.indptr, out_rows.num_rows, hd, [&](int64_t rb, int64_t re) {
          backward_src_rows<T, I, kD, kDrop>(b, rb, re);
        });
      });
    });
  });
}

}  // namespace nodeweave::sparse::cpu
