// gSDDMM on CUDA: out[e] = op(lhs[target_lhs(e)], rhs[target_rhs(e)]) for every edge e.
// Elementwise ops: a block holds blockDim.y edges and the blockDim.x threads of an edge (a power of
// two up to a warp) stride over its output features, so consecutive threads read consecutive
// features. Dot: a group of G lanes (the next power of two of the reduced length, at most a warp)
// shares one output element, splits the reduced span and combines the partial sums with warp
// shuffles; one thread per element would read a whole row serially.
#include "sparse/cuda/cuda_kernels.h"
#include "sparse/cuda/sparse_cuda_common.cuh"

namespace nodeweave::sparse::cuda {

namespace {

// The operand row an edge reads: its source (U), itself (E) or its destination (V).
template <typename I>
__device__ __forceinline__ int64_t operand_row(Target t, const I* src, const I* dst, int64_t e) {
  switch (t) {
    case Target::U:
      return src[e];
    case Target::E:
      return e;
    default:
      return dst[e];
  }
}

template <BinaryOp Op, typename T, typename I>
__global__ void sddmm_kernel(const I* __restrict__ src, const I* __restrict__ dst,
                             const T* __restrict__ lhs, const T* __restrict__ rhs,
                             T* __restrict__ out, int64_t num_edges, Target lhs_target,
                             Target rhs_target, FeatureMap fm) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.y;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; e < num_edges;
       e += step) {
    const T* l = nullptr;
    const T* r = nullptr;
    if constexpr (reads_lhs(Op)) l = lhs + operand_row(lhs_target, src, dst, e) * fm.lhs_len;
    if constexpr (reads_rhs(Op)) r = rhs + operand_row(rhs_target, src, dst, e) * fm.rhs_len;
    T* o = out + e * fm.out_len;
    for (int64_t k = threadIdx.x; k < fm.out_len; k += blockDim.x) {
      const T* lk = nullptr;
      const T* rk = nullptr;
      if constexpr (reads_lhs(Op)) lk = l + fm.lhs_at(k);
      if constexpr (reads_rhs(Op)) rk = r + fm.rhs_at(k);
      o[k] = apply_op<Op>(lk, rk, 1);
    }
  }
}

// Dot with G lanes per output element (G divides 32). The loop runs in warp-uniform steps, so every
// lane of a warp reaches each shuffle; lanes past the end contribute zeros and write nothing.
template <int G, typename T, typename I>
__global__ void sddmm_dot_kernel(const I* __restrict__ src, const I* __restrict__ dst,
                                 const T* __restrict__ lhs, const T* __restrict__ rhs,
                                 T* __restrict__ out, int64_t num_edges, Target lhs_target,
                                 Target rhs_target, FeatureMap fm) {
  constexpr int kGroupsPerWarp = 32 / G;
  const int lane = threadIdx.x % 32;
  const int group = lane / G, lane_in_group = lane % G;
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int64_t num_warps = static_cast<int64_t>(gridDim.x) * blockDim.x / 32;
  const int64_t total = num_edges * fm.out_len;
  for (int64_t first = warp * kGroupsPerWarp; first < total; first += num_warps * kGroupsPerWarp) {
    const int64_t item = first + group;
    T acc = 0;
    if (item < total) {
      const int64_t e = item / fm.out_len, k = item % fm.out_len;
      const T* l = lhs + operand_row(lhs_target, src, dst, e) * fm.lhs_len + fm.lhs_at(k);
      const T* r = rhs + operand_row(rhs_target, src, dst, e) * fm.rhs_len + fm.rhs_at(k);
      for (int64_t i = lane_in_group; i < fm.reduce_size; i += G) acc += l[i] * r[i];
    }
#pragma unroll
    for (int offset = G / 2; offset > 0; offset /= 2)
      acc += __shfl_xor_sync(0xffffffffu, acc, offset, G);
    if (item < total && lane_in_group == 0) out[item] = acc;
  }
}

template <typename T, typename I>
void launch_dot(const SddmmArgs& args, const FeatureMap& fm, const I* src, const I* dst) {
  const int64_t num_edges = args.edges.num_edges();
  const int g = feature_threads(fm.reduce_size);
  const int64_t items_per_block = int64_t{kBlockThreads} / g;
  const unsigned grid = num_blocks(num_edges * fm.out_len, items_per_block);
  const T* lhs = args.lhs.ptr<T>();
  const T* rhs = args.rhs.ptr<T>();
  T* out = args.out.ptr<T>();
  auto go = [&](auto group) {
    constexpr int G = decltype(group)::value;
    sddmm_dot_kernel<G, T, I><<<grid, kBlockThreads, 0, stream()>>>(src, dst, lhs, rhs, out, num_edges,
                                                       args.lhs_target, args.rhs_target, fm);
  };
  switch (g) {
    case 1:
      go(std::integral_constant<int, 1>{});
      break;
    case 2:
      go(std::integral_constant<int, 2>{});
      break;
    case 4:
      go(std::integral_constant<int, 4>{});
      break;
    case 8:
      go(std::integral_constant<int, 8>{});
      break;
    case 16:
      go(std::integral_constant<int, 16>{});
      break;
    default:
      go(std::integral_constant<int, 32>{});
      break;
  }
  check_launch();
}

}  // namespace

void sddmm(const SddmmArgs& args, const BcastInfo& bcast) {
  const int64_t num_edges = args.edges.num_edges();
  if (num_edges == 0 || bcast.out_len == 0) return;
  DeviceGuard guard(args.out.device.index);
  const DeviceFeatureMap dfm(bcast, args.out.device);
  const FeatureMap& fm = dfm.map();
  dispatch_float_index(args.out.dtype, args.edges.src.dtype, "sddmm", [&](auto real, auto index) {
    using T = decltype(real);
    using I = decltype(index);
    const I* src = args.edges.src.ptr<I>();
    const I* dst = args.edges.dst.ptr<I>();
    if (args.op == BinaryOp::Dot) {
      launch_dot<T, I>(args, fm, src, dst);
      return;
    }
    dispatch_op(args.op, [&](auto op) {
      constexpr BinaryOp Op = decltype(op)::value;
      if constexpr (Op != BinaryOp::Dot) {
        const int tx = feature_threads(fm.out_len);
        const dim3 block(tx, kBlockThreads / tx);
        sddmm_kernel<Op, T, I><<<num_blocks(num_edges, block.y), block, 0, stream()>>>(
            src, dst, args.lhs.ptr<T>(), args.rhs.ptr<T>(), args.out.ptr<T>(), num_edges,
            args.lhs_target, args.rhs_target, fm);
        check_launch();
      }
    });
  });
}

}  // namespace nodeweave::sparse::cuda
