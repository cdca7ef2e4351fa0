// DLPack, the array ABI tensors cross frameworks with. Debian ships DLPack 0.6, which has only the
// legacy DLManagedTensor; the versioned structs of DLPack 1.x (the Python array API's
// `__dlpack__(max_version=(1, 0))` returns them in a "dltensor_versioned" capsule) are declared
// here exactly as the published 1.0 ABI lays them out. DLTensor itself is unchanged since 0.6.
#pragma once
#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>

#include "core_framework/runtime/array_view.h"

#if !defined(DLPACK_MAJOR_VERSION)
extern "C" {
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
}
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#endif

namespace nodeweave {
// The DLPack version this project produces in versioned capsules.
constexpr uint32_t kDLPackMajor = 1;
constexpr uint32_t kDLPackMinor = 0;
// kDLBool was added in DLPack 0.8; its value is fixed by the ABI.
constexpr uint8_t kDLBoolCode = 6;
}  // namespace nodeweave

namespace nodeweave {

// dtype and device mapping between DLPack and the runtime. DeviceType's values are DLPack's device
// types (device.h), so the device mapping is a cast.
DLDataType to_dl_dtype(DType d);
bool from_dl_dtype(const DLDataType& t, DType* out);  // false: no nodeweave dtype matches
inline DLDevice to_dl_device(Device d) {
  return DLDevice{static_cast<DLDeviceType>(d.type), d.index};
}
// Names for error messages: "float32", "bfloat16", "int32 x 4 lanes"; "cpu", "cuda:1", "rocm:0".
std::string dl_dtype_name(const DLDataType& t);
std::string dl_device_name(int32_t type, int32_t id);

// A borrowed view of a foreign framework's DLTensor: no copy, no ownership. The caller keeps the
// producer's tensor alive while the view is used (a kernel call). Validates what a kernel relies
// on and raises TypeError (dtype) / ValueError (device, ndim, negative sizes) naming `what`.
// NULL strides (DLPack's compact row-major) are filled in; byte_offset is applied to data.
ArrayView borrow_dltensor(const DLTensor& dl, const char* what);

}  // namespace nodeweave

