// Borrowed views of foreign DLTensors (the PyTorch binding's path into the kernels) and the
// per-thread kernel stream.
#include "core_framework/runtime/dlpack.h"

#include <gtest/gtest.h>

#include <thread>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/stream.h"

namespace nodeweave {
namespace {

DLTensor make_dl(void* data, int64_t* shape, int64_t* strides, int32_t ndim, DLDataType dtype) {
  DLTensor t{};
  t.data = data;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = 0;
  return t;
}

TEST(BorrowDLTensor, ViewsTheProducersMemoryInPlace) {
  float buf[12] = {};
  int64_t shape[2] = {3, 4};
  int64_t strides[2] = {4, 1};
  DLTensor dl = make_dl(buf, shape, strides, 2, DLDataType{kDLFloat, 32, 1});
  dl.byte_offset = 4 * sizeof(float);  // starts at row 1
  ArrayView v = borrow_dltensor(dl, "x");
  EXPECT_EQ(v.data, static_cast<void*>(buf + 4));
  EXPECT_EQ(v.dtype, DType::Float32);
  EXPECT_TRUE(v.device.is_cpu());
  EXPECT_EQ(v.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(v.strides, (std::vector<int64_t>{4, 1}));
}

TEST(BorrowDLTensor, NullStridesMeanCompactRowMajor) {
  double buf[24] = {};
  int64_t shape[3] = {2, 3, 4};
  DLTensor dl = make_dl(buf, shape, nullptr, 3, DLDataType{kDLFloat, 64, 1});
  ArrayView v = borrow_dltensor(dl, "x");
  EXPECT_EQ(v.strides, (std::vector<int64_t>{12, 4, 1}));
  EXPECT_TRUE(v.is_contiguous());
}

TEST(BorrowDLTensor, RejectsWhatKernelsCannotRead) {
  float buf[4] = {};
  int64_t shape[1] = {4};
  DLTensor dl = make_dl(buf, shape, nullptr, 1, DLDataType{kDLComplex, 64, 1});
  EXPECT_THROW(borrow_dltensor(dl, "lhs"), TypeError);
  dl.dtype = DLDataType{kDLFloat, 32, 4};  // vector lanes
  EXPECT_THROW(borrow_dltensor(dl, "lhs"), TypeError);
  dl.dtype = DLDataType{kDLFloat, 32, 1};
  dl.device = DLDevice{kDLMetal, 0};
  try {
    borrow_dltensor(dl, "lhs");
    FAIL() << "a Metal tensor was accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("lhs is on metal:0"), std::string::npos) << e.what();
  }
  dl.device = DLDevice{kDLCPU, 0};
  int64_t negative[1] = {-1};
  dl.shape = negative;
  EXPECT_THROW(borrow_dltensor(dl, "lhs"), ValueError);
  dl.shape = nullptr;
  EXPECT_THROW(borrow_dltensor(dl, "lhs"), ValueError);
}

TEST(BorrowDLTensor, DtypesRoundTrip) {
  for (DType d : {DType::Bool, DType::UInt8, DType::Int8, DType::Int32, DType::Int64,
                  DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    DType back;
    ASSERT_TRUE(from_dl_dtype(to_dl_dtype(d), &back));
    EXPECT_EQ(back, d);
  }
  EXPECT_EQ(dl_dtype_name(DLDataType{kDLBfloat, 16, 1}), "bfloat16");
  EXPECT_EQ(dl_device_name(kDLCUDA, 1), "cuda:1");
}

TEST(CudaStreamScope, NestsAndIsPerThread) {
  EXPECT_EQ(current_cuda_stream(), nullptr);
  int a = 0, b = 0;
  {
    CudaStreamScope outer(&a);
    EXPECT_EQ(current_cuda_stream(), &a);
    {
      CudaStreamScope inner(&b);
      EXPECT_EQ(current_cuda_stream(), &b);
      void* seen = &a;
      std::thread([&] { seen = current_cuda_stream(); }).join();
      EXPECT_EQ(seen, nullptr);  // another thread keeps the default stream
    }
    EXPECT_EQ(current_cuda_stream(), &a);
  }
  EXPECT_EQ(current_cuda_stream(), nullptr);
}

}  // namespace
}  // namespace nodeweave
