// The gSpMM cases that are an ordinary sparse-times-dense product go to cuSPARSE's generic SpMM,
// which is better tuned than a hand-written kernel: copy_lhs or lhs * (scalar per edge), reduced
// by sum or mean, without feature broadcasting, int32 indices. The in-edge view is the CSR matrix
// A (rows = destinations, columns = sources) whose value at stored entry p is rhs[eids[p]] (1 for
// copy_lhs), divided by the row's degree for mean; then out = A @ lhs with both dense matrices
// row-major, as the features are stored.
#include <cusparse.h>

#include <mutex>
#include <vector>

#include "sparse/cuda/sparse_cuda_common.cuh"

namespace nodeweave::sparse::cuda {

namespace {

#define NW_CUSPARSE_CHECK(expr)                                                           \
  do {                                                                                    \
    cusparseStatus_t nw_st_ = (expr);                                                     \
    if (nw_st_ != CUSPARSE_STATUS_SUCCESS) {                                              \
      throw std::runtime_error(::nodeweave::str_cat("cuSPARSE error in ", #expr, ": ",    \
                                                    cusparseGetErrorString(nw_st_), " (", \
                                                    __FILE__, ":", __LINE__, ")"));       \
    }                                                                                     \
  } while (0)

// One handle per device, created on first use and never destroyed (the CUDA runtime may already be
// unloaded when static destructors run). The returned lock serializes calls on the handle.
cusparseHandle_t lock_handle(int device, std::unique_lock<std::mutex>& lock) {
  static std::mutex mu;
  static std::vector<cusparseHandle_t> handles;
  lock = std::unique_lock<std::mutex>(mu);
  if (handles.size() <= static_cast<size_t>(device)) handles.resize(device + 1, nullptr);
  if (!handles[device]) {
    NW_CUSPARSE_CHECK(cusparseCreate(&handles[device]));
  }
  // Per call: the calling thread's kernel stream may differ from the last caller's.
  NW_CUSPARSE_CHECK(cusparseSetStream(handles[device], stream()));
  return handles[device];
}

// Descriptors are destroyed on every exit path, exceptions included.
struct SpMatGuard {
  cusparseConstSpMatDescr_t d = nullptr;
  ~SpMatGuard() {
    if (d) cusparseDestroySpMat(d);
  }
};
struct DnMatGuard {
  cusparseConstDnMatDescr_t d = nullptr;
  ~DnMatGuard() {
    if (d) cusparseDestroyDnMat(d);
  }
};
struct MutDnMatGuard {
  cusparseDnMatDescr_t d = nullptr;
  ~MutDnMatGuard() {
    if (d) cusparseDestroyDnMat(d);
  }
};

// vals[p] = (rhs ? rhs[eids[p]] : 1) / (mean ? degree : 1). A warp per row, lanes over its entries,
// so high-degree rows are not left to one thread.
template <typename T, typename I>
__global__ void edge_values_kernel(const I* __restrict__ indptr, const I* __restrict__ eids,
                                   const T* __restrict__ rhs, T* __restrict__ vals,
                                   int64_t num_rows, bool mean) {
  const int64_t row_step = static_cast<int64_t>(gridDim.x) * blockDim.y;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; row < num_rows;
       row += row_step) {
    const int64_t begin = indptr[row], end = indptr[row + 1];
    const T scale = mean && end > begin ? T(1) / static_cast<T>(end - begin) : T(1);
    for (int64_t p = begin + threadIdx.x; p < end; p += blockDim.x)
      vals[p] = rhs ? rhs[static_cast<int64_t>(eids[p])] * scale : scale;
  }
}

template <typename T>
constexpr cudaDataType_t cuda_data_type() {
  return std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
}

template <typename T>
void run_cusparse(const SpmmArgs& args, const BcastInfo& bcast) {
  using I = int32_t;
  const CompressedView& g = args.in_edges;
  const Device dev = args.out.device;
  const int64_t rows = g.num_rows, cols = g.num_cols, nnz = g.num_edges();
  const int64_t feat = bcast.out_len;
  T* out = args.out.ptr<T>();
  if (nnz == 0) {  // cuSPARSE is not needed to write zeros
    NW_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(T) * rows * feat, stream()));
    return;
  }

  DeviceBuffer vals(dev, sizeof(T) * nnz);
  {
    const dim3 block(32, kBlockThreads / 32);
    edge_values_kernel<T, I><<<num_blocks(rows, block.y), block, 0, stream()>>>(
        g.indptr.ptr<I>(), g.eids.ptr<I>(), args.op == BinaryOp::Mul ? args.rhs.ptr<T>() : nullptr,
        vals.as<T>(), rows, args.reduce == ReduceOp::Mean);
    check_launch();
  }

  const cudaDataType_t dt = cuda_data_type<T>();
  SpMatGuard a;
  NW_CUSPARSE_CHECK(cusparseCreateConstCsr(&a.d, rows, cols, nnz, g.indptr.data, g.indices.data,
                                           vals.get(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                           CUSPARSE_INDEX_BASE_ZERO, dt));
  DnMatGuard b;
  NW_CUSPARSE_CHECK(
      cusparseCreateConstDnMat(&b.d, cols, feat, feat, args.lhs.data, dt, CUSPARSE_ORDER_ROW));
  MutDnMatGuard c;
  NW_CUSPARSE_CHECK(cusparseCreateDnMat(&c.d, rows, feat, feat, out, dt, CUSPARSE_ORDER_ROW));

  const T alpha = 1, beta = 0;
  // CSR_ALG2 is the algorithm for row-major dense operands; it is deterministic.
  constexpr cusparseSpMMAlg_t alg = CUSPARSE_SPMM_CSR_ALG2;
  std::unique_lock<std::mutex> lock;
  cusparseHandle_t h = lock_handle(dev.index, lock);
  size_t ws_bytes = 0;
  NW_CUSPARSE_CHECK(cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                            CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a.d, b.d,
                                            &beta, c.d, dt, alg, &ws_bytes));
  DeviceBuffer ws(dev, ws_bytes);
  NW_CUSPARSE_CHECK(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                 CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a.d, b.d, &beta, c.d, dt,
                                 alg, ws.get()));
}

}  // namespace

bool spmm_cusparse_applies(const SpmmArgs& args, const BcastInfo& bcast) {
  if (args.reduce != ReduceOp::Sum && args.reduce != ReduceOp::Mean) return false;
  if (args.in_edges.indptr.dtype != DType::Int32) return false;
  if (args.out.dtype != DType::Float32 && args.out.dtype != DType::Float64) return false;
  // Output feature k must read lhs feature k: no broadcasting on the lhs side.
  if (bcast.lhs_len != bcast.out_len) return false;
  switch (args.op) {
    case BinaryOp::CopyLhs:
      return true;
    case BinaryOp::Mul:
      // One weight per edge, applied to every feature (a broadcast only in name).
      return bcast.rhs_len == 1;
    default:
      return false;
  }
}

void spmm_cusparse(const SpmmArgs& args, const BcastInfo& bcast) {
  DeviceGuard guard(args.out.device.index);
  dispatch_float(args.out.dtype, "spmm",
                 [&](auto real) { run_cusparse<decltype(real)>(args, bcast); });
}

}  // namespace nodeweave::sparse::cuda
