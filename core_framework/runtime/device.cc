#include "core_framework/runtime/device.h"

#include <cstdlib>

#include "core_framework/runtime/error.h"

namespace nodeweave {

std::string Device::str() const {
  return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index);
}

Device Device::parse(const std::string& s) {
  if (s == "cpu") return Device{};
  if (s == "cuda") return Device{DeviceType::CUDA, 0};
  if (s.rfind("cuda:", 0) == 0 && s.size() > 5) {
    char* end = nullptr;
    long idx = std::strtol(s.c_str() + 5, &end, 10);
    if (*end == '\0' && idx >= 0 && idx < 1024)
      return Device{DeviceType::CUDA, static_cast<int32_t>(idx)};
  }
  throw ValueError(str_cat("device: expected 'cpu', 'cuda' or 'cuda:N', got '", s, "'"));
}

}  // namespace nodeweave
