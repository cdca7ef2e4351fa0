// The CUDA kernels of the sparse layer, run through the public entry points (sparse/*.h) on small
// random graphs with isolated nodes, self loops and multi-edges, and compared with naive host
// references computed in double. Every case runs for float32/float64 features and int32/int64 ids;
// int32 sum/mean cases of copy_lhs and of lhs * (scalar per edge) take the cuSPARSE path of gSpMM,
// the rest the hand-written kernels. Skips (with that reason) when no CUDA device is visible.
#include <gtest/gtest.h>

#ifdef NODEWEAVE_WITH_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "sparse/edge_softmax.h"
#include "sparse/gather_mm.h"
#include "sparse/sddmm.h"
#include "sparse/segment.h"
#include "sparse/spmm.h"
#endif

namespace nodeweave::sparse {
namespace {

#ifndef NODEWEAVE_WITH_CUDA

TEST(CudaSparseKernels, NeedCudaBuild) { GTEST_SKIP() << "nodeweave built without CUDA"; }

#else

// Asked of the CUDA runtime directly: this binary links only the kernel layer, so the runtime's
// device hooks (installed by the engine) are absent and cuda_device_count() would say 0.
bool has_gpu() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return n > 0;
}

#define NW_SKIP_WITHOUT_GPU() \
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device"

const Device kGpu{DeviceType::CUDA, 0};

void cuda_ok(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::vector<int64_t> concat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A device copy of host data with its shape; freed on scope exit.
template <typename T>
class GpuArray {
 public:
  GpuArray(const std::vector<T>& host, std::vector<int64_t> shape) : shape_(std::move(shape)) {
    if (numel_of(shape_) != static_cast<int64_t>(host.size()))
      throw std::logic_error("GpuArray: data does not match its shape");
    n_ = host.size();
    cuda_ok(cudaMalloc(&ptr_, std::max<size_t>(n_, 1) * sizeof(T)), "cudaMalloc");
    if (n_ > 0)
      cuda_ok(cudaMemcpy(ptr_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  // Filled with `fill`, so elements a kernel fails to write are noticed. (A named function: as a
  // constructor it would compete with the one above for braced shapes.)
  static GpuArray filled(std::vector<int64_t> shape, T fill) {
    return GpuArray(std::vector<T>(numel_of(shape), fill), std::move(shape));
  }
  ~GpuArray() { cudaFree(ptr_); }
  GpuArray(const GpuArray&) = delete;
  GpuArray& operator=(const GpuArray&) = delete;

  ArrayView view() const {
    ArrayView v;
    v.data = ptr_;
    v.device = kGpu;
    v.dtype = DTypeOf<T>::value;
    v.shape = shape_;
    v.strides = contiguous_strides(shape_);
    return v;
  }
  std::vector<T> to_host() const {
    cuda_ok(cudaDeviceSynchronize(), "kernel execution");
    std::vector<T> host(n_);
    if (n_ > 0)
      cuda_ok(cudaMemcpy(host.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return host;
  }

 private:
  void* ptr_ = nullptr;
  size_t n_ = 0;
  std::vector<int64_t> shape_;
};

template <typename To, typename From>
std::vector<To> cast_vec(const std::vector<From>& v) {
  return std::vector<To>(v.begin(), v.end());
}

std::vector<double> uniform(std::mt19937& rng, int64_t n, double lo, double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

// Elementwise |got - want| <= tol * (1 + |want|), with the first mismatch reported.
template <typename T>
void expect_close(const std::vector<T>& got, const std::vector<double>& want, const char* what) {
  const double tol = std::is_same_v<T, float> ? 2e-5 : 1e-11;
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(static_cast<double>(got[i]), want[i], tol * (1 + std::fabs(want[i])))
        << what << " at flat index " << i;
  }
}

// ---- graphs -----------------------------------------------------------------------------------

struct HostGraph {
  int64_t num_src = 0, num_dst = 0;
  std::vector<int64_t> src, dst;  // edge e: src[e] -> dst[e]
  int64_t num_edges() const { return static_cast<int64_t>(src.size()); }
};

// Random edges that leave the last destinations without in-edges and the last sources without
// out-edges, plus self loops (when the node sets are one) and duplicated edges, shuffled so that
// the copies of an edge get unrelated ids.
HostGraph random_graph(std::mt19937& rng, int64_t num_src, int64_t num_dst, int64_t num_edges,
                       bool homogeneous) {
  HostGraph g;
  g.num_src = num_src;
  g.num_dst = num_dst;
  std::uniform_int_distribution<int64_t> s(0, num_src - 3), d(0, num_dst - 4);
  for (int64_t e = 0; e < num_edges; ++e) {
    g.src.push_back(s(rng));
    g.dst.push_back(d(rng));
  }
  if (homogeneous) {
    for (int64_t i = 0; i < 4; ++i) {
      g.src.push_back(i);
      g.dst.push_back(i);
    }
  }
  for (int64_t e = 0; e < 6; ++e) {  // multi-edges, one of them three times
    g.src.push_back(g.src[e]);
    g.dst.push_back(g.dst[e]);
  }
  g.src.push_back(g.src[0]);
  g.dst.push_back(g.dst[0]);
  std::vector<int64_t> perm(g.src.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  HostGraph out = g;
  for (size_t i = 0; i < perm.size(); ++i) {
    out.src[i] = g.src[perm[i]];
    out.dst[i] = g.dst[perm[i]];
  }
  return out;
}

std::vector<HostGraph> test_graphs(std::mt19937& rng) {
  return {random_graph(rng, 23, 23, 70, true), random_graph(rng, 17, 11, 40, false)};
}

// A compressed view on the host: rows grouped by `row_of`, edges within a row in increasing id.
struct HostCompressed {
  std::vector<int64_t> indptr, indices, eids;
  int64_t num_rows = 0, num_cols = 0;
};

HostCompressed compress(const std::vector<int64_t>& row_of, const std::vector<int64_t>& col_of,
                        int64_t num_rows, int64_t num_cols) {
  HostCompressed c;
  c.num_rows = num_rows;
  c.num_cols = num_cols;
  c.indptr.assign(num_rows + 1, 0);
  for (int64_t r : row_of) ++c.indptr[r + 1];
  for (int64_t r = 0; r < num_rows; ++r) c.indptr[r + 1] += c.indptr[r];
  std::vector<int64_t> order(row_of.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return row_of[a] < row_of[b]; });
  for (int64_t e : order) {
    c.indices.push_back(col_of[e]);
    c.eids.push_back(e);
  }
  return c;
}

HostCompressed in_edges(const HostGraph& g) { return compress(g.dst, g.src, g.num_dst, g.num_src); }
HostCompressed out_edges(const HostGraph& g) {
  return compress(g.src, g.dst, g.num_src, g.num_dst);
}

template <typename I>
struct GpuCompressed {
  GpuArray<I> indptr, indices, eids;
  CompressedView view;
  explicit GpuCompressed(const HostCompressed& c)
      : indptr(cast_vec<I>(c.indptr), {c.num_rows + 1}),
        indices(cast_vec<I>(c.indices), {static_cast<int64_t>(c.indices.size())}),
        eids(cast_vec<I>(c.eids), {static_cast<int64_t>(c.eids.size())}) {
    view.indptr = indptr.view();
    view.indices = indices.view();
    view.eids = eids.view();
    view.num_rows = c.num_rows;
    view.num_cols = c.num_cols;
  }
};

// ---- broadcasting reference ---------------------------------------------------------------------

// NumPy broadcasting of the feature shapes, written independently of BcastInfo: for output
// feature k, the flat lhs/rhs index where its (reduced, for Dot) span starts.
struct RefBcast {
  std::vector<int64_t> out_shape;
  int64_t out_len = 1, reduce = 1;
  std::vector<int64_t> lhs_at, rhs_at;
};

RefBcast ref_bcast(BinaryOp op, std::vector<int64_t> lhs, std::vector<int64_t> rhs) {
  RefBcast b;
  if (op == BinaryOp::CopyLhs) rhs = lhs;
  if (op == BinaryOp::CopyRhs) lhs = rhs;
  if (op == BinaryOp::Dot) {
    b.reduce = lhs.back();
    lhs.pop_back();
    rhs.pop_back();
  }
  const size_t nd = std::max(lhs.size(), rhs.size());
  lhs.insert(lhs.begin(), nd - lhs.size(), 1);
  rhs.insert(rhs.begin(), nd - rhs.size(), 1);
  for (size_t d = 0; d < nd; ++d) b.out_shape.push_back(std::max(lhs[d], rhs[d]));
  b.out_len = numel_of(b.out_shape);
  for (int64_t k = 0; k < b.out_len; ++k) {
    int64_t rem = k, li = 0, ri = 0, lstride = 1, rstride = 1;
    for (int d = static_cast<int>(nd) - 1; d >= 0; --d) {
      const int64_t i = rem % b.out_shape[d];
      rem /= b.out_shape[d];
      if (lhs[d] != 1) li += i * lstride;
      if (rhs[d] != 1) ri += i * rstride;
      lstride *= lhs[d];
      rstride *= rhs[d];
    }
    b.lhs_at.push_back(li * b.reduce);
    b.rhs_at.push_back(ri * b.reduce);
  }
  if (op == BinaryOp::Dot) b.out_shape.push_back(1);
  return b;
}

// Message element k of op(lhs row l, rhs row r) in double; a side the op ignores may be null.
double ref_message(BinaryOp op, const RefBcast& b, const double* l, const double* r, int64_t k) {
  const int64_t li = b.lhs_at[k], ri = b.rhs_at[k];
  switch (op) {
    case BinaryOp::Add:
      return l[li] + r[ri];
    case BinaryOp::Sub:
      return l[li] - r[ri];
    case BinaryOp::Mul:
      return l[li] * r[ri];
    case BinaryOp::Div:
      return l[li] / r[ri];
    case BinaryOp::Dot: {
      double acc = 0;
      for (int64_t i = 0; i < b.reduce; ++i) acc += l[li + i] * r[ri + i];
      return acc;
    }
    case BinaryOp::CopyLhs:
      return l[li];
    case BinaryOp::CopyRhs:
      return r[ri];
  }
  return 0;
}

// ---- gSpMM ------------------------------------------------------------------------------------

struct SpmmCase {
  BinaryOp op;
  ReduceOp reduce;
  std::vector<int64_t> lhs_feat, rhs_feat;
};

std::string describe(const SpmmCase& c) {
  return std::string(binary_op_name(c.op)) + "/" + reduce_op_name(c.reduce) + " lhs " +
         std::to_string(c.lhs_feat.size()) + "-d rhs " + std::to_string(c.rhs_feat.size()) + "-d";
}

template <typename T, typename I>
void check_spmm(const HostGraph& g, const SpmmCase& c, std::mt19937& rng) {
  SCOPED_TRACE(describe(c) + (std::is_same_v<T, float> ? " float32" : " float64") +
               (std::is_same_v<I, int32_t> ? " int32" : " int64"));
  const bool use_lhs = c.op != BinaryOp::CopyRhs, use_rhs = c.op != BinaryOp::CopyLhs;
  const RefBcast b = ref_bcast(c.op, c.lhs_feat, c.rhs_feat);
  const int64_t lhs_len = numel_of(c.lhs_feat), rhs_len = numel_of(c.rhs_feat);
  const std::vector<double> lhs = uniform(rng, g.num_src * lhs_len, -1, 1);
  const std::vector<double> rhs = uniform(rng, g.num_edges() * rhs_len, 0.5, 1.5);
  const HostCompressed csc = in_edges(g);

  // Reference: per destination, messages of its in-edges reduced in edge-id order.
  const int64_t n_out = g.num_dst * b.out_len;
  std::vector<double> want(n_out, 0.0);
  for (int64_t v = 0; v < g.num_dst; ++v) {
    const int64_t begin = csc.indptr[v], end = csc.indptr[v + 1];
    for (int64_t k = 0; k < b.out_len; ++k) {
      double acc = 0;
      for (int64_t p = begin; p < end; ++p) {
        const double m = ref_message(c.op, b, lhs.data() + csc.indices[p] * lhs_len,
                                     rhs.data() + csc.eids[p] * rhs_len, k);
        if (p == begin) {
          acc = m;
        } else if (c.reduce == ReduceOp::Sum || c.reduce == ReduceOp::Mean) {
          acc += m;
        } else {
          acc = c.reduce == ReduceOp::Max ? std::max(acc, m) : std::min(acc, m);
        }
      }
      if (c.reduce == ReduceOp::Mean && end > begin) acc /= static_cast<double>(end - begin);
      want[v * b.out_len + k] = acc;
    }
  }

  GpuCompressed<I> view(csc);
  GpuArray<T> lhs_d(cast_vec<T>(lhs), concat({g.num_src}, c.lhs_feat));
  GpuArray<T> rhs_d(cast_vec<T>(rhs), concat({g.num_edges()}, c.rhs_feat));
  auto out_d = GpuArray<T>::filled(concat({g.num_dst}, b.out_shape), T(123));
  const bool with_arg = c.reduce == ReduceOp::Max || c.reduce == ReduceOp::Min;
  auto arg_lhs_d = GpuArray<int64_t>::filled({g.num_dst, b.out_len}, 12345);
  auto arg_rhs_d = GpuArray<int64_t>::filled({g.num_dst, b.out_len}, 12345);

  SpmmArgs args;
  args.in_edges = view.view;
  args.op = c.op;
  args.reduce = c.reduce;
  if (use_lhs) args.lhs = lhs_d.view();
  if (use_rhs) args.rhs = rhs_d.view();
  args.out = out_d.view();
  if (with_arg && use_lhs) args.arg_lhs = arg_lhs_d.view();
  if (with_arg && use_rhs) args.arg_rhs = arg_rhs_d.view();
  spmm(args);

  const std::vector<T> got = out_d.to_host();
  expect_close(got, want, "spmm out");
  if (!with_arg) return;

  // Args: -1 for nodes without in-edges; otherwise an in-edge of the node (and its source) whose
  // message is the extremum. Checked by value rather than by index, so that two messages that
  // tie in float32 cannot fail the test.
  const std::vector<int64_t> arg_l = arg_lhs_d.to_host(), arg_r = arg_rhs_d.to_host();
  const double tol = std::is_same_v<T, float> ? 2e-5 : 1e-11;
  for (int64_t v = 0; v < g.num_dst; ++v) {
    const int64_t begin = csc.indptr[v], end = csc.indptr[v + 1];
    for (int64_t k = 0; k < b.out_len; ++k) {
      const int64_t i = v * b.out_len + k;
      if (begin == end) {
        if (use_lhs) {
          EXPECT_EQ(arg_l[i], -1) << "arg_lhs of node " << v << " without in-edges";
        }
        if (use_rhs) {
          EXPECT_EQ(arg_r[i], -1) << "arg_rhs of node " << v << " without in-edges";
        }
        continue;
      }
      // The candidate edges: the one named by arg_rhs, or (copy_lhs) any in-edge from arg_lhs.
      bool found = false;
      for (int64_t p = begin; p < end && !found; ++p) {
        const int64_t e = csc.eids[p], u = csc.indices[p];
        if (use_rhs && arg_r[i] != e) continue;
        if (use_lhs && arg_l[i] != u) continue;
        const double m =
            ref_message(c.op, b, lhs.data() + u * lhs_len, rhs.data() + e * rhs_len, k);
        found = std::fabs(m - want[i]) <= tol * (1 + std::fabs(want[i]));
      }
      EXPECT_TRUE(found) << "node " << v << " feature " << k << ": arg_lhs " << arg_l[i]
                         << ", arg_rhs " << arg_r[i] << " do not name an in-edge with the "
                         << reduce_op_name(c.reduce) << " message";
    }
  }
}

template <typename T, typename I>
void run_spmm_cases(const std::vector<SpmmCase>& cases) {
  std::mt19937 rng(7);
  for (const HostGraph& g : test_graphs(rng))
    for (const SpmmCase& c : cases) check_spmm<T, I>(g, c, rng);
}

template <typename F>
void for_each_type_pair(F&& f) {
  f(float{}, int32_t{});
  f(float{}, int64_t{});
  f(double{}, int32_t{});
  f(double{}, int64_t{});
}

// copy_lhs and lhs * (one weight per edge) with sum/mean: cuSPARSE for int32 ids, the kernel for
// int64 ids.
TEST(CudaSparseKernels, SpmmWeightedSumMatchesReference) {
  NW_SKIP_WITHOUT_GPU();
  const std::vector<SpmmCase> cases = {
      {BinaryOp::CopyLhs, ReduceOp::Sum, {5}, {}},  {BinaryOp::CopyLhs, ReduceOp::Sum, {3, 4}, {}},
      {BinaryOp::CopyLhs, ReduceOp::Mean, {6}, {}}, {BinaryOp::Mul, ReduceOp::Sum, {5}, {1}},
      {BinaryOp::Mul, ReduceOp::Sum, {1}, {1}},     {BinaryOp::Mul, ReduceOp::Sum, {2, 3}, {1, 1}},
      {BinaryOp::Mul, ReduceOp::Mean, {40}, {1}},
  };
  for_each_type_pair([&](auto t, auto i) { run_spmm_cases<decltype(t), decltype(i)>(cases); });
}

TEST(CudaSparseKernels, SpmmGeneralOpsMatchReference) {
  NW_SKIP_WITHOUT_GPU();
  const std::vector<SpmmCase> cases = {
      {BinaryOp::CopyRhs, ReduceOp::Sum, {}, {3}},     {BinaryOp::Add, ReduceOp::Sum, {4}, {4}},
      {BinaryOp::Sub, ReduceOp::Mean, {2, 3}, {2, 3}}, {BinaryOp::Mul, ReduceOp::Sum, {5}, {5}},
      {BinaryOp::Div, ReduceOp::Sum, {70}, {70}},  // features wider than a warp
      {BinaryOp::Dot, ReduceOp::Sum, {2, 6}, {2, 6}},
  };
  for_each_type_pair([&](auto t, auto i) { run_spmm_cases<decltype(t), decltype(i)>(cases); });
}

TEST(CudaSparseKernels, SpmmBroadcastingMatchesReference) {
  NW_SKIP_WITHOUT_GPU();
  const std::vector<SpmmCase> cases = {
      {BinaryOp::Add, ReduceOp::Sum, {3, 4}, {1, 4}},
      {BinaryOp::Mul, ReduceOp::Sum, {3, 1}, {1, 4}},
      {BinaryOp::Sub, ReduceOp::Mean, {4}, {2, 1}},
      {BinaryOp::Mul, ReduceOp::Sum, {1}, {6}},  // a scalar per source, weights per edge
      {BinaryOp::Dot, ReduceOp::Sum, {2, 1, 5}, {1, 3, 5}},
      {BinaryOp::Div, ReduceOp::Max, {2, 3}, {3}},
  };
  for_each_type_pair([&](auto t, auto i) { run_spmm_cases<decltype(t), decltype(i)>(cases); });
}

TEST(CudaSparseKernels, SpmmMaxMinWithArgsMatchReference) {
  NW_SKIP_WITHOUT_GPU();
  const std::vector<SpmmCase> cases = {
      {BinaryOp::CopyLhs, ReduceOp::Max, {4}, {}},
      {BinaryOp::CopyLhs, ReduceOp::Min, {2, 2}, {}},
      {BinaryOp::CopyRhs, ReduceOp::Max, {}, {3}},
      {BinaryOp::CopyRhs, ReduceOp::Min, {}, {1}},
      {BinaryOp::Mul, ReduceOp::Max, {5}, {1}},
      {BinaryOp::Add, ReduceOp::Min, {3}, {3}},
      {BinaryOp::Dot, ReduceOp::Max, {2, 4}, {2, 4}},
      {BinaryOp::Sub, ReduceOp::Max, {40}, {40}},
  };
  for_each_type_pair([&](auto t, auto i) { run_spmm_cases<decltype(t), decltype(i)>(cases); });
}

// ---- gSDDMM -----------------------------------------------------------------------------------

struct SddmmCase {
  BinaryOp op;
  Target lhs_target, rhs_target;
  std::vector<int64_t> lhs_feat, rhs_feat;
};

int64_t target_rows(const HostGraph& g, Target t) {
  return t == Target::U ? g.num_src : t == Target::V ? g.num_dst : g.num_edges();
}

int64_t target_row(const HostGraph& g, Target t, int64_t e) {
  return t == Target::U ? g.src[e] : t == Target::V ? g.dst[e] : e;
}

template <typename T, typename I>
void check_sddmm(const HostGraph& g, const SddmmCase& c, std::mt19937& rng) {
  SCOPED_TRACE(std::string(binary_op_name(c.op)) + " " + target_name(c.lhs_target) + "," +
               target_name(c.rhs_target) + (std::is_same_v<T, float> ? " float32" : " float64") +
               (std::is_same_v<I, int32_t> ? " int32" : " int64"));
  const bool use_lhs = c.op != BinaryOp::CopyRhs, use_rhs = c.op != BinaryOp::CopyLhs;
  const RefBcast b = ref_bcast(c.op, c.lhs_feat, c.rhs_feat);
  const int64_t lhs_len = numel_of(c.lhs_feat), rhs_len = numel_of(c.rhs_feat);
  const int64_t lhs_rows = target_rows(g, c.lhs_target), rhs_rows = target_rows(g, c.rhs_target);
  const std::vector<double> lhs = uniform(rng, lhs_rows * lhs_len, -1, 1);
  const std::vector<double> rhs = uniform(rng, rhs_rows * rhs_len, 0.5, 1.5);

  std::vector<double> want(g.num_edges() * b.out_len);
  for (int64_t e = 0; e < g.num_edges(); ++e) {
    const double* l = lhs.data() + target_row(g, c.lhs_target, e) * lhs_len;
    const double* r = rhs.data() + target_row(g, c.rhs_target, e) * rhs_len;
    for (int64_t k = 0; k < b.out_len; ++k) want[e * b.out_len + k] = ref_message(c.op, b, l, r, k);
  }

  GpuArray<I> src_d(cast_vec<I>(g.src), {g.num_edges()}),
      dst_d(cast_vec<I>(g.dst), {g.num_edges()});
  GpuArray<T> lhs_d(cast_vec<T>(lhs), concat({lhs_rows}, c.lhs_feat));
  GpuArray<T> rhs_d(cast_vec<T>(rhs), concat({rhs_rows}, c.rhs_feat));
  auto out_d = GpuArray<T>::filled(concat({g.num_edges()}, b.out_shape), T(123));
  SddmmArgs args;
  args.edges.src = src_d.view();
  args.edges.dst = dst_d.view();
  args.edges.num_src = g.num_src;
  args.edges.num_dst = g.num_dst;
  args.op = c.op;
  if (use_lhs) args.lhs = lhs_d.view();
  if (use_rhs) args.rhs = rhs_d.view();
  args.lhs_target = c.lhs_target;
  args.rhs_target = c.rhs_target;
  args.out = out_d.view();
  sddmm(args);
  expect_close(out_d.to_host(), want, "sddmm out");
}

TEST(CudaSparseKernels, SddmmMatchesReference) {
  NW_SKIP_WITHOUT_GPU();
  using T3 = Target;
  const std::vector<SddmmCase> cases = {
      {BinaryOp::Add, T3::U, T3::V, {3}, {3}},
      {BinaryOp::Sub, T3::U, T3::E, {2, 3}, {1, 3}},
      {BinaryOp::Mul, T3::E, T3::V, {4, 1}, {1, 3}},
      {BinaryOp::Div, T3::V, T3::U, {3}, {1}},
      {BinaryOp::Mul, T3::U, T3::U, {45}, {45}},
      {BinaryOp::Dot, T3::U, T3::V, {2, 8}, {2, 8}},
      {BinaryOp::Dot, T3::U, T3::V, {1, 40}, {3, 40}},  // a full warp per element, broadcast
      {BinaryOp::Dot, T3::E, T3::U, {5}, {5}},
      {BinaryOp::Dot, T3::V, T3::E, {3, 1}, {3, 1}},
      {BinaryOp::CopyLhs, T3::U, T3::V, {2, 2}, {}},
      {BinaryOp::CopyLhs, T3::V, T3::V, {3}, {}},
      {BinaryOp::CopyRhs, T3::U, T3::E, {}, {3}},
  };
  for_each_type_pair([&](auto t, auto i) {
    std::mt19937 rng(11);
    for (const HostGraph& g : test_graphs(rng))
      for (const SddmmCase& c : cases) check_sddmm<decltype(t), decltype(i)>(g, c, rng);
  });
}

// ---- edge softmax -----------------------------------------------------------------------------

// Softmax over each row's positions of (num_items, feat) data; `eids` maps position -> item.
std::vector<double> ref_softmax(const HostCompressed& rows, const std::vector<double>& x,
                                int64_t feat) {
  std::vector<double> out(x.size(), 0.0);
  for (int64_t r = 0; r < rows.num_rows; ++r) {
    const int64_t begin = rows.indptr[r], end = rows.indptr[r + 1];
    for (int64_t k = 0; k < feat; ++k) {
      double m = -INFINITY, sum = 0;
      for (int64_t p = begin; p < end; ++p) m = std::max(m, x[rows.eids[p] * feat + k]);
      for (int64_t p = begin; p < end; ++p) sum += std::exp(x[rows.eids[p] * feat + k] - m);
      for (int64_t p = begin; p < end; ++p)
        out[rows.eids[p] * feat + k] = std::exp(x[rows.eids[p] * feat + k] - m) / sum;
    }
  }
  return out;
}

std::vector<double> ref_softmax_backward(const HostCompressed& rows, const std::vector<double>& y,
                                         const std::vector<double>& gy, int64_t feat) {
  std::vector<double> gx(y.size(), 0.0);
  for (int64_t r = 0; r < rows.num_rows; ++r) {
    const int64_t begin = rows.indptr[r], end = rows.indptr[r + 1];
    for (int64_t k = 0; k < feat; ++k) {
      double dot = 0;
      for (int64_t p = begin; p < end; ++p) {
        const int64_t i = rows.eids[p] * feat + k;
        dot += y[i] * gy[i];
      }
      for (int64_t p = begin; p < end; ++p) {
        const int64_t i = rows.eids[p] * feat + k;
        gx[i] = y[i] * (gy[i] - dot);
      }
    }
  }
  return gx;
}

template <typename T, typename I>
void check_edge_softmax(const HostGraph& g, const HostCompressed& rows,
                        const std::vector<int64_t>& feat_shape, std::mt19937& rng) {
  SCOPED_TRACE(std::string("feature dims ") + std::to_string(feat_shape.size()) +
               (std::is_same_v<T, float> ? " float32" : " float64") +
               (std::is_same_v<I, int32_t> ? " int32" : " int64"));
  const int64_t feat = numel_of(feat_shape), E = g.num_edges();
  const std::vector<int64_t> shape = concat({E}, feat_shape);
  // One score far above the rest: exp(100) overflows float, so this passes only if the row
  // maximum is subtracted first.
  std::vector<double> score = uniform(rng, E * feat, -3, 3);
  score[0] += 100;
  const std::vector<double> want = ref_softmax(rows, score, feat);
  const std::vector<double> grad_out = uniform(rng, E * feat, -1, 1);
  const std::vector<double> want_grad = ref_softmax_backward(rows, want, grad_out, feat);

  GpuCompressed<I> view(rows);
  GpuArray<T> score_d(cast_vec<T>(score), shape);
  auto out_d = GpuArray<T>::filled(shape, T(0));
  edge_softmax_forward(view.view, score_d.view(), out_d.view());
  expect_close(out_d.to_host(), want, "edge_softmax out");

  GpuArray<T> y_d(cast_vec<T>(want), shape), gy_d(cast_vec<T>(grad_out), shape);
  auto gx_d = GpuArray<T>::filled(shape, T(0));
  edge_softmax_backward(view.view, y_d.view(), gy_d.view(), gx_d.view());
  expect_close(gx_d.to_host(), want_grad, "edge_softmax grad_score");
}

TEST(CudaSparseKernels, EdgeSoftmaxMatchesReference) {
  NW_SKIP_WITHOUT_GPU();
  for_each_type_pair([&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    std::mt19937 rng(13);
    for (const HostGraph& g : test_graphs(rng)) {
      for (const std::vector<int64_t>& feat :
           {std::vector<int64_t>{1}, std::vector<int64_t>{3}, std::vector<int64_t>{2, 2},
            std::vector<int64_t>{37}}) {
        check_edge_softmax<T, I>(g, in_edges(g), feat, rng);   // over each node's in-edges
        check_edge_softmax<T, I>(g, out_edges(g), feat, rng);  // over each node's out-edges
      }
    }
  });
}

// ---- segment ops ------------------------------------------------------------------------------

// Segment lengths with empty segments at the start, in the middle and at the end.
const std::vector<int64_t> kSegLens = {0, 3, 1, 0, 5, 2, 0, 9, 1, 0};

HostCompressed segments_as_rows(const std::vector<int64_t>& lens) {
  HostCompressed c;
  c.num_rows = static_cast<int64_t>(lens.size());
  c.indptr.assign(1, 0);
  for (int64_t l : lens) c.indptr.push_back(c.indptr.back() + l);
  c.eids.resize(c.indptr.back());
  std::iota(c.eids.begin(), c.eids.end(), 0);
  return c;
}

template <typename T, typename I>
void check_segment_reduce(ReduceOp reduce, const std::vector<int64_t>& feat_shape,
                          std::mt19937& rng) {
  SCOPED_TRACE(std::string(reduce_op_name(reduce)) +
               (std::is_same_v<T, float> ? " float32" : " float64") +
               (std::is_same_v<I, int32_t> ? " int32" : " int64"));
  const HostCompressed seg = segments_as_rows(kSegLens);
  const int64_t S = seg.num_rows, N = seg.indptr.back(), feat = numel_of(feat_shape);
  const std::vector<double> x = uniform(rng, N * feat, -1, 1);
  std::vector<double> want(S * feat, 0.0);
  std::vector<int64_t> want_arg(S * feat, -1);
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t k = 0; k < feat; ++k) {
      double acc = 0;
      for (int64_t j = seg.indptr[s]; j < seg.indptr[s + 1]; ++j) {
        const double v = x[j * feat + k];
        const int64_t i = s * feat + k;
        if (reduce == ReduceOp::Sum || reduce == ReduceOp::Mean) {
          acc += v;
        } else if (want_arg[i] < 0 || (reduce == ReduceOp::Max ? v > acc : v < acc)) {
          acc = v;
          want_arg[i] = j;
        }
      }
      const int64_t len = seg.indptr[s + 1] - seg.indptr[s];
      if (reduce == ReduceOp::Mean && len > 0) acc /= static_cast<double>(len);
      want[s * feat + k] = acc;
    }
  }

  GpuArray<I> offsets_d(cast_vec<I>(seg.indptr), {S + 1});
  GpuArray<T> x_d(cast_vec<T>(x), concat({N}, feat_shape));
  auto out_d = GpuArray<T>::filled(concat({S}, feat_shape), T(123));
  const bool with_arg = reduce == ReduceOp::Max || reduce == ReduceOp::Min;
  auto arg_d = GpuArray<int64_t>::filled({S, feat}, 12345);
  segment_reduce(reduce, x_d.view(), offsets_d.view(), out_d.view(),
                 with_arg ? arg_d.view() : ArrayView{});
  expect_close(out_d.to_host(), want, "segment_reduce out");
  // Max/min pick stored values without arithmetic, so the winning rows are exact.
  if (with_arg) {
    EXPECT_EQ(arg_d.to_host(), want_arg);
    return;
  }
  // Gradient of sum/mean.
  const std::vector<double> grad_out = uniform(rng, S * feat, -1, 1);
  std::vector<double> want_grad(N * feat);
  for (int64_t s = 0; s < S; ++s) {
    const int64_t len = seg.indptr[s + 1] - seg.indptr[s];
    for (int64_t j = seg.indptr[s]; j < seg.indptr[s + 1]; ++j)
      for (int64_t k = 0; k < feat; ++k)
        want_grad[j * feat + k] = grad_out[s * feat + k] / (reduce == ReduceOp::Mean ? len : 1);
  }
  GpuArray<T> gout_d(cast_vec<T>(grad_out), concat({S}, feat_shape));
  auto gx_d = GpuArray<T>::filled(concat({N}, feat_shape), T(123));
  segment_reduce_backward(reduce, gout_d.view(), offsets_d.view(), gx_d.view());
  expect_close(gx_d.to_host(), want_grad, "segment_reduce_backward grad_x");
}

TEST(CudaSparseKernels, SegmentReduceMatchesReference) {
  NW_SKIP_WITHOUT_GPU();
  for_each_type_pair([&](auto t, auto i) {
    std::mt19937 rng(17);
    for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min}) {
      check_segment_reduce<decltype(t), decltype(i)>(r, {3}, rng);
      check_segment_reduce<decltype(t), decltype(i)>(r, {2, 2}, rng);
      check_segment_reduce<decltype(t), decltype(i)>(r, {33}, rng);
    }
  });
}

TEST(CudaSparseKernels, SegmentSoftmaxMatchesReference) {
  NW_SKIP_WITHOUT_GPU();
  for_each_type_pair([&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    std::mt19937 rng(19);
    const HostCompressed seg = segments_as_rows(kSegLens);
    const int64_t S = seg.num_rows, N = seg.indptr.back();
    for (const std::vector<int64_t>& feat_shape :
         {std::vector<int64_t>{1}, std::vector<int64_t>{2, 3}}) {
      const int64_t feat = numel_of(feat_shape);
      const std::vector<int64_t> shape = concat({N}, feat_shape);
      const std::vector<double> x = uniform(rng, N * feat, -3, 3);
      const std::vector<double> want = ref_softmax(seg, x, feat);
      const std::vector<double> grad_out = uniform(rng, N * feat, -1, 1);
      const std::vector<double> want_grad = ref_softmax_backward(seg, want, grad_out, feat);

      GpuArray<I> offsets_d(cast_vec<I>(seg.indptr), {S + 1});
      GpuArray<T> x_d(cast_vec<T>(x), shape);
      auto out_d = GpuArray<T>::filled(shape, T(0));
      segment_softmax_forward(x_d.view(), offsets_d.view(), out_d.view());
      expect_close(out_d.to_host(), want, "segment_softmax out");

      GpuArray<T> y_d(cast_vec<T>(want), shape), gy_d(cast_vec<T>(grad_out), shape);
      auto gx_d = GpuArray<T>::filled(shape, T(0));
      segment_softmax_backward(y_d.view(), gy_d.view(), offsets_d.view(), gx_d.view());
      expect_close(gx_d.to_host(), want_grad, "segment_softmax grad_x");
    }
  });
}

// ---- gather_mm / segment_mm -------------------------------------------------------------------

// out[i] = a[ia[i]] @ b[ib[i]]; a: (*, K), b: (R, K, N).
std::vector<double> ref_gather_mm(const std::vector<double>& a, const std::vector<double>& b,
                                  const std::vector<int64_t>& ia, const std::vector<int64_t>& ib,
                                  int64_t K, int64_t N) {
  const int64_t M = static_cast<int64_t>(ib.size());
  std::vector<double> out(M * N, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += a[ia[i] * K + k] * b[(ib[i] * K + k) * N + j];
      out[i * N + j] = acc;
    }
  return out;
}

template <typename T, typename I>
void check_gather_mm(int64_t K, int64_t N, bool with_idx_a, std::mt19937& rng) {
  SCOPED_TRACE("K " + std::to_string(K) + " N " + std::to_string(N) +
               (with_idx_a ? " idx_a" : " no idx_a") +
               (std::is_same_v<T, float> ? " float32" : " float64") +
               (std::is_same_v<I, int32_t> ? " int32" : " int64"));
  const int64_t M = 13, R = 3, Na = with_idx_a ? 7 : M;
  std::uniform_int_distribution<int64_t> pick_a(0, Na - 1), pick_b(0, R - 1);
  std::vector<int64_t> ia(M), ib(M);
  for (int64_t i = 0; i < M; ++i) {
    ia[i] = with_idx_a ? pick_a(rng) : i;
    ib[i] = pick_b(rng);
  }
  const std::vector<double> a = uniform(rng, Na * K, -1, 1), b = uniform(rng, R * K * N, -1, 1);
  const std::vector<double> want = ref_gather_mm(a, b, ia, ib, K, N);

  GpuArray<T> a_d(cast_vec<T>(a), {Na, K}), b_d(cast_vec<T>(b), {R, K, N});
  GpuArray<I> ia_d(cast_vec<I>(ia), {M}), ib_d(cast_vec<I>(ib), {M});
  auto out_d = GpuArray<T>::filled({M, N}, T(123));
  const ArrayView idx_a = with_idx_a ? ia_d.view() : ArrayView{};
  gather_mm(a_d.view(), b_d.view(), idx_a, ib_d.view(), out_d.view());
  expect_close(out_d.to_host(), want, "gather_mm out");

  // grad_b[ib[i]] += a[ia[i]]^T grad_out[i], into a zeroed grad_b.
  const std::vector<double> grad_out = uniform(rng, M * N, -1, 1);
  std::vector<double> want_gb(R * K * N, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j)
        want_gb[(ib[i] * K + k) * N + j] += a[ia[i] * K + k] * grad_out[i * N + j];
  GpuArray<T> gout_d(cast_vec<T>(grad_out), {M, N});
  auto gb_d = GpuArray<T>::filled({R, K, N}, T(0));
  gather_mm_grad_b(a_d.view(), gout_d.view(), idx_a, ib_d.view(), gb_d.view());
  expect_close(gb_d.to_host(), want_gb, "gather_mm_grad_b grad_b");
}

TEST(CudaSparseKernels, GatherMmMatchesReference) {
  NW_SKIP_WITHOUT_GPU();
  for_each_type_pair([&](auto t, auto i) {
    std::mt19937 rng(23);
    for (bool with_idx_a : {true, false}) {
      check_gather_mm<decltype(t), decltype(i)>(5, 4, with_idx_a, rng);
      check_gather_mm<decltype(t), decltype(i)>(300, 37, with_idx_a, rng);  // K over one tile
      check_gather_mm<decltype(t), decltype(i)>(3, 260, with_idx_a, rng);   // N over one block
    }
  });
}

template <typename T>
void check_segment_mm(int64_t K, int64_t N, std::mt19937& rng) {
  SCOPED_TRACE("K " + std::to_string(K) + " N " + std::to_string(N) +
               (std::is_same_v<T, float> ? " float32" : " float64"));
  const std::vector<int64_t> seglen = {3, 0, 4, 1, 0};
  const int64_t R = static_cast<int64_t>(seglen.size());
  const int64_t M = std::accumulate(seglen.begin(), seglen.end(), int64_t{0});
  std::vector<int64_t> ia(M), ib;
  std::iota(ia.begin(), ia.end(), 0);
  for (int64_t r = 0; r < R; ++r) ib.insert(ib.end(), seglen[r], r);
  const std::vector<double> a = uniform(rng, M * K, -1, 1), b = uniform(rng, R * K * N, -1, 1);
  const std::vector<double> want = ref_gather_mm(a, b, ia, ib, K, N);

  ArrayView seglen_v;  // int64 on the CPU
  seglen_v.data = const_cast<int64_t*>(seglen.data());
  seglen_v.device = Device{};
  seglen_v.dtype = DType::Int64;
  seglen_v.shape = {R};
  seglen_v.strides = {1};

  GpuArray<T> a_d(cast_vec<T>(a), {M, K}), b_d(cast_vec<T>(b), {R, K, N});
  auto out_d = GpuArray<T>::filled({M, N}, T(123));
  segment_mm(a_d.view(), b_d.view(), seglen_v, out_d.view());
  expect_close(out_d.to_host(), want, "segment_mm out");

  // grad_b[r] = a[segment r]^T grad_out[segment r]; types without rows get 0, so grad_b starts
  // filled with garbage.
  const std::vector<double> grad_out = uniform(rng, M * N, -1, 1);
  std::vector<double> want_gb(R * K * N, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j)
        want_gb[(ib[i] * K + k) * N + j] += a[i * K + k] * grad_out[i * N + j];
  GpuArray<T> gout_d(cast_vec<T>(grad_out), {M, N});
  auto gb_d = GpuArray<T>::filled({R, K, N}, T(123));
  segment_mm_grad_b(a_d.view(), gout_d.view(), seglen_v, gb_d.view());
  expect_close(gb_d.to_host(), want_gb, "segment_mm_grad_b grad_b");
}

TEST(CudaSparseKernels, SegmentMmMatchesReference) {
  NW_SKIP_WITHOUT_GPU();
  std::mt19937 rng(29);
  const std::vector<std::pair<int64_t, int64_t> > sizes = {{5, 4}, {16, 33}, {1, 7}};
  for (const auto& [K, N] : sizes) {
    check_segment_mm<float>(K, N, rng);
    check_segment_mm<double>(K, N, rng);
  }
}

#endif  // NODEWEAVE_WITH_CUDA

}  // namespace
}  // namespace nodeweave::sparse
