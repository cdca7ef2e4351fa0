// gSpMM on CUDA: out[v] = reduce over in-edges e = (u -> v) of op(lhs[u], rhs[e]).
// The plain weighted-sum cases go to cuSPARSE (spmm_cusparse.cu); everything else runs the
// row-parallel kernels here. A block holds blockDim.y destination rows; the blockDim.x threads of
// a row (a power of two up to a warp) stride over its output features, and each thread walks the
// row's in-edges itself, so every output element is written once and no atomics are needed. The
// edge list of a row is read once per feature stride and stays in L1 between strides.
#include "sparse/cuda/cuda_kernels.h"
#include "sparse/cuda/sparse_cuda_common.cuh"

namespace nodeweave::sparse::cuda {

namespace {

template <BinaryOp Op, typename T, typename I>
__device__ __forceinline__ T edge_message(const T* lhs, const T* rhs, const I* indices,
                                          const I* eids, int64_t p, int64_t lo, int64_t ro,
                                          const FeatureMap& fm) {
  const T* l = nullptr;
  const T* r = nullptr;
  if constexpr (reads_lhs(Op)) l = lhs + static_cast<int64_t>(indices[p]) * fm.lhs_len + lo;
  if constexpr (reads_rhs(Op)) r = rhs + static_cast<int64_t>(eids[p]) * fm.rhs_len + ro;
  return apply_op<Op>(l, r, fm.reduce_size);
}

// Sum and Mean (Mean divides by the in-degree); rows without in-edges get 0.
template <BinaryOp Op, typename T, typename I>
__global__ void spmm_sum_kernel(const I* __restrict__ indptr, const I* __restrict__ indices,
                                const I* __restrict__ eids, const T* __restrict__ lhs,
                                const T* __restrict__ rhs, T* __restrict__ out, int64_t num_rows,
                                FeatureMap fm, bool mean) {
  const int64_t row_step = static_cast<int64_t>(gridDim.x) * blockDim.y;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; row < num_rows;
       row += row_step) {
    const int64_t begin = indptr[row], end = indptr[row + 1];
    T* o = out + row * fm.out_len;
    for (int64_t k = threadIdx.x; k < fm.out_len; k += blockDim.x) {
      const int64_t lo = fm.lhs_at(k), ro = fm.rhs_at(k);
      T acc = 0;
      for (int64_t p = begin; p < end; ++p)
        acc += edge_message<Op>(lhs, rhs, indices, eids, p, lo, ro, fm);
      if (mean && end > begin) acc /= static_cast<T>(end - begin);
      o[k] = acc;
    }
  }
}

// Max and Min with the winning source node and edge per output element. The first edge of the row
// (lowest edge id) wins ties; rows without in-edges get 0 and -1.
template <BinaryOp Op, bool IsMax, typename T, typename I>
__global__ void spmm_arg_kernel(const I* __restrict__ indptr, const I* __restrict__ indices,
                                const I* __restrict__ eids, const T* __restrict__ lhs,
                                const T* __restrict__ rhs, T* __restrict__ out,
                                int64_t* __restrict__ arg_lhs, int64_t* __restrict__ arg_rhs,
                                int64_t num_rows, FeatureMap fm) {
  const int64_t row_step = static_cast<int64_t>(gridDim.x) * blockDim.y;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; row < num_rows;
       row += row_step) {
    const int64_t begin = indptr[row], end = indptr[row + 1];
    const int64_t base = row * fm.out_len;
    for (int64_t k = threadIdx.x; k < fm.out_len; k += blockDim.x) {
      const int64_t lo = fm.lhs_at(k), ro = fm.rhs_at(k);
      T best = 0;
      int64_t best_p = -1;
      for (int64_t p = begin; p < end; ++p) {
        const T v = edge_message<Op>(lhs, rhs, indices, eids, p, lo, ro, fm);
        if (best_p < 0 || (IsMax ? v > best : v < best)) {
          best = v;
          best_p = p;
        }
      }
      out[base + k] = best;
      if (arg_lhs) arg_lhs[base + k] = best_p < 0 ? -1 : static_cast<int64_t>(indices[best_p]);
      if (arg_rhs) arg_rhs[base + k] = best_p < 0 ? -1 : static_cast<int64_t>(eids[best_p]);
    }
  }
}

template <BinaryOp Op, typename T, typename I>
void launch_spmm(const SpmmArgs& args, const FeatureMap& fm) {
  const CompressedView& g = args.in_edges;
  const int tx = feature_threads(fm.out_len);
  const int ty = kBlockThreads / tx;
  const dim3 block(tx, ty);
  const unsigned grid = num_blocks(g.num_rows, ty);
  const I* indptr = g.indptr.ptr<I>();
  const I* indices = g.indices.ptr<I>();
  const I* eids = g.eids.ptr<I>();
  const T* lhs = args.lhs.ptr<T>();
  const T* rhs = args.rhs.ptr<T>();
  T* out = args.out.ptr<T>();
  switch (args.reduce) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
      spmm_sum_kernel<Op, T, I><<<grid, block, 0, stream()>>>(indptr, indices, eids, lhs, rhs, out, g.num_rows,
                                                 fm, args.reduce == ReduceOp::Mean);
      break;
    case ReduceOp::Max:
      spmm_arg_kernel<Op, true, T, I><<<grid, block, 0, stream()>>>(indptr, indices, eids, lhs, rhs, out,
                                                       args.arg_lhs.ptr<int64_t>(),
                                                       args.arg_rhs.ptr<int64_t>(), g.num_rows, fm);
      break;
    case ReduceOp::Min:
      spmm_arg_kernel<Op, false, T, I>
          <<<grid, block, 0, stream()>>>(indptr, indices, eids, lhs, rhs, out, args.arg_lhs.ptr<int64_t>(),
                            args.arg_rhs.ptr<int64_t>(), g.num_rows, fm);
      break;
  }
  check_launch();
}

}  // namespace

void spmm(const SpmmArgs& args, const BcastInfo& bcast) {
  const CompressedView& g = args.in_edges;
  if (g.num_rows == 0 || bcast.out_len == 0) return;
  DeviceGuard guard(args.out.device.index);
  if (spmm_cusparse_applies(args, bcast)) {
    spmm_cusparse(args, bcast);
    return;
  }
  const DeviceFeatureMap fm(bcast, args.out.device);
  dispatch_float_index(args.out.dtype, g.indptr.dtype, "spmm", [&](auto real, auto index) {
    using T = decltype(real);
    using I = decltype(index);
    dispatch_op(args.op, [&](auto op) { launch_spmm<decltype(op)::value, T, I>(args, fm.map()); });
  });
}

}  // namespace nodeweave::sparse::cuda
