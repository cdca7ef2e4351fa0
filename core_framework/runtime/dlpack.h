// DLPack, the array ABI tensors cross frameworks with. Debian ships DLPack 0.6, which has only the
// legacy DLManagedTensor; the versioned structs of DLPack 1.x (the Python array API's
// `__dlpack__(max_version=(1, 0))` returns them in a "dltensor_versioned" capsule) are declared
// here exactly as the published 1.0 ABI lays them out. DLTensor itself is unchanged since 0.6.
#pragma once
#include <dlpack/dlpack.h>

#include <cstdint>

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
