// Where a tensor's memory lives: the CPU or one CUDA device. Values match DLPack's device types so
// a Device converts to DLDevice without a table.
#pragma once
#include <cstdint>
#include <string>

namespace nodeweave {

enum class DeviceType : int32_t { CPU = 1, CUDA = 2 };

struct Device {
  DeviceType type = DeviceType::CPU;
  int32_t index = 0;

  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;  // "cpu", "cuda:0"

  // Parses "cpu", "cuda", "cuda:N"; throws ValueError naming the string otherwise.
  static Device parse(const std::string& s);
};

inline Device cpu_device() { return Device{}; }

// True when this build includes the CUDA runtime sources (NODEWEAVE_WITH_CUDA).
bool cuda_built();
// Number of visible CUDA devices (0 without CUDA support or without a GPU).
int cuda_device_count();

}  // namespace nodeweave
