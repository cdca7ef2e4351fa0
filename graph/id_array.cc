// IdArray allocation, host import with conversion, device and dtype copies.
#include "graph/id_array.h"

#include <cstring>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::graph {

void check_id_dtype(DType dtype, const char* what) {
  NW_CHECK(dtype == DType::Int32 || dtype == DType::Int64, TypeError, what,
           ": node and edge ids must be int32 or int64, got ", dtype_name(dtype));
}

IdArray IdArray::empty(int64_t length, DType dtype, Device device) {
  check_id_dtype(dtype, "IdArray");
  NW_CHECK(length >= 0, ValueError, "IdArray: negative length ", length);
  IdArray a;
  a.storage = std::make_shared<Storage>(static_cast<size_t>(length) * dtype_size(dtype), device);
  a.dtype = dtype;
  a.length = length;
  return a;
}

namespace {
template <typename From, typename To>
void convert(const From* src, To* dst, int64_t n) {
  parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = static_cast<To>(src[i]);
  });
}
}  // namespace

IdArray IdArray::from_host(const void* data, DType src_dtype, int64_t length, DType dtype) {
  check_id_dtype(src_dtype, "IdArray");
  IdArray out = empty(length, dtype);
  if (length == 0) return out;
  if (src_dtype == dtype) {
    std::memcpy(out.storage->data(), data, static_cast<size_t>(length) * dtype_size(dtype));
    return out;
  }
  dispatch_id(src_dtype, [&](auto* s) {
    using S = std::remove_pointer_t<decltype(s)>;
    dispatch_id(dtype, [&](auto* d) {
      using D = std::remove_pointer_t<decltype(d)>;
      convert(static_cast<const S*>(data), out.data<D>(), length);
    });
  });
  return out;
}

ArrayView IdArray::view() const {
  ArrayView v;
  v.data = storage ? storage->data() : nullptr;
  v.device = device();
  v.dtype = dtype;
  v.shape = {length};
  v.strides = {1};
  return v;
}

IdArray IdArray::to(Device target) const {
  if (target == device()) return *this;
  IdArray out = empty(length, dtype, target);
  if (length)
    copy_bytes(out.storage->data(), target, storage->data(), device(),
               static_cast<size_t>(length) * dtype_size(dtype));
  return out;
}

IdArray IdArray::astype(DType target) const {
  if (target == dtype) return *this;
  NW_CHECK(device().is_cpu(), ValueError, "IdArray.astype: only CPU arrays convert, got ",
           device().str());
  return from_host(data<void>(), dtype, length, target);
}

}  // namespace nodeweave::graph
