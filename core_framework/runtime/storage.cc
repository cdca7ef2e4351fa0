#include "core_framework/runtime/storage.h"

#include <atomic>

namespace nodeweave {

namespace {

struct ByteCounter {
  std::atomic<int64_t> in_use{0}, peak{0};
};
ByteCounter& counter(Device d) {
  static ByteCounter per_type[2];
  return per_type[d.is_cpu() ? 0 : 1];
}

}  // namespace

int64_t storage_bytes_in_use(Device device) { return counter(device).in_use.load(); }
int64_t storage_peak_bytes(Device device) { return counter(device).peak.load(); }
void reset_storage_peak(Device device) {
  ByteCounter& c = counter(device);
  c.peak.store(c.in_use.load());
}

Storage::Storage(size_t nbytes, Device device)
    : nbytes_(nbytes), device_(device), allocator_(get_allocator(device)) {
  data_ = allocator_->allocate(nbytes);
  ByteCounter& c = counter(device);
  const int64_t now =
      c.in_use.fetch_add(static_cast<int64_t>(nbytes)) + static_cast<int64_t>(nbytes);
  int64_t peak = c.peak.load();
  while (now > peak && !c.peak.compare_exchange_weak(peak, now)) {
  }
}

Storage::Storage(void* data, size_t nbytes, Device device, std::function<void()> deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}

Storage::~Storage() {
  if (allocator_) {
    allocator_->deallocate(data_, nbytes_);
    counter(device_).in_use.fetch_sub(static_cast<int64_t>(nbytes_));
  } else if (deleter_) {
    deleter_();
  }
}

}  // namespace nodeweave
