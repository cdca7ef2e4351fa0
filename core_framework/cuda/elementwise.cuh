// The one elementwise kernel family CUDA ops are built from: out[i] = f(in0[i], in1[i], in2[i])
// over out's shape, with every input read through broadcast strides. The host side reuses the CPU
// loop's geometry (dims that are contiguous for every operand are merged), so the common contiguous
// case costs one division per element and arbitrary strided/broadcast views still work.
#pragma once
#include <algorithm>
#include <array>
#include <tuple>

#include "core_framework/cuda/cuda_check.cuh"
#include "core_framework/cuda/device_types.cuh"
#include "core_framework/engine/functional.h"
#include "core_framework/ops/elementwise_loop.h"

namespace nodeweave::cuda {

constexpr int kThreads = 256;

// LoopGeometry as plain arrays, passed to kernels by value (a few hundred bytes of parameters).
template <int N>
struct Geometry {
  int ndim;
  int64_t shape[kMaxLoopDims];
  int64_t strides[N][kMaxLoopDims];  // in elements; operand 0 is the output
};

template <int N>
__device__ __forceinline__ void offsets_of(const Geometry<N>& g, int64_t linear,
                                           int64_t (&off)[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const int64_t i = linear % g.shape[d];
    linear /= g.shape[d];
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += i * g.strides[k][d];
  }
}

// Grid-stride loops: any element count works with a capped grid.
#define NW_CUDA_KERNEL_LOOP(i, n)                                                        \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

template <typename Out, typename F>
__global__ void elementwise_kernel0(int64_t n, Geometry<1> g, Out* out, F f) {
  NW_CUDA_KERNEL_LOOP(i, n) {
    int64_t off[1];
    offsets_of(g, i, off);
    out[off[0]] = f();
  }
}

template <typename Out, typename A, typename F>
__global__ void elementwise_kernel1(int64_t n, Geometry<2> g, Out* out, const A* a, F f) {
  NW_CUDA_KERNEL_LOOP(i, n) {
    int64_t off[2];
    offsets_of(g, i, off);
    out[off[0]] = f(a[off[1]]);
  }
}

template <typename Out, typename A, typename B, typename F>
__global__ void elementwise_kernel2(int64_t n, Geometry<3> g, Out* out, const A* a, const B* b,
                                    F f) {
  NW_CUDA_KERNEL_LOOP(i, n) {
    int64_t off[3];
    offsets_of(g, i, off);
    out[off[0]] = f(a[off[1]], b[off[2]]);
  }
}

template <typename Out, typename A, typename B, typename C, typename F>
__global__ void elementwise_kernel3(int64_t n, Geometry<4> g, Out* out, const A* a, const B* b,
                                    const C* c, F f) {
  NW_CUDA_KERNEL_LOOP(i, n) {
    int64_t off[4];
    offsets_of(g, i, off);
    out[off[0]] = f(a[off[1]], b[off[2]], c[off[3]]);
  }
}

inline unsigned grid_size(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t{1} << 16));
}

// Runs f over out's shape on out's device. Out and In are the device element types; the tensors
// must already have those dtypes and live on out's device (callers move 0-d CPU scalars first).
template <typename Out, typename... In, typename F>
void launch_elementwise(const Tensor& out, const std::array<Tensor, sizeof...(In)>& ins, F f) {
  static_assert(sizeof...(In) <= 3, "elementwise kernels take at most 3 inputs");
  constexpr int N = 1 + sizeof...(In);
  std::array<Shape, N> strides;
  strides[0] = out.strides();
  for (int k = 1; k < N; ++k) {
    const Tensor& in = ins[k - 1];
    NW_CHECK(in.device() == out.device(), std::logic_error, "CUDA elementwise kernel: input ",
             k - 1, " is on ", in.device().str(), " but the output is on ", out.device().str());
    strides[k] = broadcast_strides(in, out.shape());
  }
  const LoopGeometry<N> lg = make_geometry<N>(out.shape(), strides);
  if (lg.numel == 0) return;
  Geometry<N> g{};
  g.ndim = lg.ndim;
  for (int d = 0; d < lg.ndim; ++d) {
    g.shape[d] = lg.shape[d];
    for (int k = 0; k < N; ++k) g.strides[k][d] = lg.strides[k][d];
  }
  DeviceGuard guard(out.device().index);
  using Ins = std::tuple<In...>;
  Out* o = static_cast<Out*>(out.data_ptr());
  // Stream 0 is the legacy default stream: all nodeweave work is ordered on it.
  if constexpr (sizeof...(In) == 0) {
    elementwise_kernel0<Out, F><<<grid_size(lg.numel), kThreads>>>(lg.numel, g, o, f);
  } else if constexpr (sizeof...(In) == 1) {
    using A = std::tuple_element_t<0, Ins>;
    elementwise_kernel1<Out, A, F><<<grid_size(lg.numel), kThreads>>>(
        lg.numel, g, o, static_cast<const A*>(ins[0].data_ptr()), f);
  } else if constexpr (sizeof...(In) == 2) {
    using A = std::tuple_element_t<0, Ins>;
    using B = std::tuple_element_t<1, Ins>;
    elementwise_kernel2<Out, A, B, F><<<grid_size(lg.numel), kThreads>>>(
        lg.numel, g, o, static_cast<const A*>(ins[0].data_ptr()),
        static_cast<const B*>(ins[1].data_ptr()), f);
  } else {
    using A = std::tuple_element_t<0, Ins>;
    using B = std::tuple_element_t<1, Ins>;
    using C = std::tuple_element_t<2, Ins>;
    elementwise_kernel3<Out, A, B, C, F><<<grid_size(lg.numel), kThreads>>>(
        lg.numel, g, o, static_cast<const A*>(ins[0].data_ptr()),
        static_cast<const B*>(ins[1].data_ptr()), static_cast<const C*>(ins[2].data_ptr()), f);
  }
  NW_CUDA_CHECK(cudaGetLastError());
}

// `t` on `device`: op inputs may include 0-d CPU scalars (they mix with any device, as in PyTorch).
inline Tensor on_device(const Tensor& t, Device device) {
  return t.device() == device ? t : to_device(t, device);
}

}  // namespace nodeweave::cuda
