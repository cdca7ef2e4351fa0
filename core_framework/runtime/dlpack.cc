// DLPack <-> runtime mapping shared by the engine's from_dlpack/__dlpack__ (python/src) and the
// kernel entry points that run on a foreign framework's tensors (PyTorch through DLPack).
#include "core_framework/runtime/dlpack.h"

#include <stdexcept>

#include "core_framework/runtime/error.h"

namespace nodeweave {

DLDataType to_dl_dtype(DType d) {
  const uint8_t bits = static_cast<uint8_t>(dtype_size(d) * 8);
  switch (d) {
    case DType::Bool:
      return {kDLBoolCode, 8, 1};
    case DType::UInt8:
      return {kDLUInt, bits, 1};
    case DType::Int8:
    case DType::Int32:
    case DType::Int64:
      return {kDLInt, bits, 1};
    case DType::BFloat16:
      return {kDLBfloat, 16, 1};
    case DType::Float16:
    case DType::Float32:
    case DType::Float64:
      return {kDLFloat, bits, 1};
  }
  throw std::logic_error("to_dl_dtype: unknown dtype");
}

bool from_dl_dtype(const DLDataType& t, DType* out) {
  if (t.lanes != 1) return false;
  switch (t.code) {
    case kDLBoolCode:
      if (t.bits == 8) *out = DType::Bool;
      return t.bits == 8;
    case kDLUInt:
      if (t.bits == 8) *out = DType::UInt8;
      return t.bits == 8;
    case kDLInt:
      if (t.bits == 8)
        *out = DType::Int8;
      else if (t.bits == 32)
        *out = DType::Int32;
      else if (t.bits == 64)
        *out = DType::Int64;
      else
        return false;
      return true;
    case kDLFloat:
      if (t.bits == 16)
        *out = DType::Float16;
      else if (t.bits == 32)
        *out = DType::Float32;
      else if (t.bits == 64)
        *out = DType::Float64;
      else
        return false;
      return true;
    case kDLBfloat:
      if (t.bits == 16) *out = DType::BFloat16;
      return t.bits == 16;
    default:
      return false;
  }
}

std::string dl_device_name(int32_t type, int32_t id) {
  switch (type) {
    case kDLCPU:
      return "cpu";
    case kDLCUDA:
      return "cuda:" + std::to_string(id);
    case kDLCUDAHost:
      return "cuda_host (pinned host memory, kDLCUDAHost)";
    case kDLOpenCL:
      return "opencl:" + std::to_string(id);
    case kDLVulkan:
      return "vulkan:" + std::to_string(id);
    case kDLMetal:
      return "metal:" + std::to_string(id);
    case kDLVPI:
      return "vpi:" + std::to_string(id);
    case kDLROCM:
      return "rocm:" + std::to_string(id);
    case kDLROCMHost:
      return "rocm_host";
    case kDLExtDev:
      return "ext_dev:" + std::to_string(id);
    case kDLCUDAManaged:
      return "cuda_managed:" + std::to_string(id);
    case 14:
      return "oneapi:" + std::to_string(id);
    case 15:
      return "webgpu:" + std::to_string(id);
    case 16:
      return "hexagon:" + std::to_string(id);
    default:
      return str_cat("DLPack device type ", type, " (id ", id, ")");
  }
}

std::string dl_dtype_name(const DLDataType& t) {
  const char* prefix = nullptr;
  switch (t.code) {
    case kDLInt:
      prefix = "int";
      break;
    case kDLUInt:
      prefix = "uint";
      break;
    case kDLFloat:
      prefix = "float";
      break;
    case kDLOpaqueHandle:
      prefix = "opaque_handle";
      break;
    case kDLBfloat:
      prefix = "bfloat";
      break;
    case kDLComplex:
      prefix = "complex";
      break;
    case kDLBoolCode:
      prefix = "bool";
      break;
    default:
      break;
  }
  std::string name = prefix ? str_cat(prefix, static_cast<int>(t.bits))
                            : str_cat("DLPack type code ", static_cast<int>(t.code), " with ",
                                      static_cast<int>(t.bits), " bits");
  if (t.lanes != 1) name += str_cat(" x ", t.lanes, " lanes");
  return name;
}

ArrayView borrow_dltensor(const DLTensor& dl, const char* what) {
  ArrayView v;
  NW_CHECK(from_dl_dtype(dl.dtype, &v.dtype), TypeError, what, ": unsupported dtype ",
           dl_dtype_name(dl.dtype));
  const int32_t type = dl.device.device_type;
  NW_CHECK(type == kDLCPU || type == kDLCUDA, ValueError, what, " is on ",
           dl_device_name(type, dl.device.device_id),
           "; the kernels run on CPU and CUDA tensors only");
  v.device = type == kDLCPU ? Device{} : Device{DeviceType::CUDA, dl.device.device_id};
  NW_CHECK(dl.ndim >= 0, ValueError, what, ": invalid ndim ", dl.ndim);
  NW_CHECK(dl.ndim == 0 || dl.shape, ValueError, what, ": the DLTensor has ndim ", dl.ndim,
           " but no shape");
  v.shape.assign(dl.shape, dl.shape + dl.ndim);
  for (int32_t i = 0; i < dl.ndim; ++i) {
    NW_CHECK(v.shape[i] >= 0, ValueError, what, ": negative size ", v.shape[i], " in dimension ",
             i);
  }
  if (dl.strides) {
    v.strides.assign(dl.strides, dl.strides + dl.ndim);
  } else {
    v.strides.assign(dl.ndim, 1);
    for (int32_t i = dl.ndim - 2; i >= 0; --i) v.strides[i] = v.strides[i + 1] * v.shape[i + 1];
  }
  v.data = static_cast<char*>(dl.data) + dl.byte_offset;
  return v;
}

}  // namespace nodeweave
