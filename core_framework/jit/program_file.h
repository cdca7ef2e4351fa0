// Programs on disk: save a traced program and load it in another process, which needs none of the
// code that traced it (inference with no Python model code).
//
// The file is one versioned, checksummed record (little-endian):
//   "NWPROG\r\n"  u32 format version  u64 payload bytes  u64 FNV-1a hash of the payload
//   payload: the program's text (ir_text.h), then its tensors (captures and constants in value
//   order), the guards' expected values, and each opaque attribute (node order) as its kind and
//   what its codec made of it (integers and tensors); a tensor is u8 dtype, u8 rank, i64 dims,
//   then its bytes, row-major.
// Captures are saved with their values at save time and load as tensors only the program holds.
// Tensors load on the CPU. Writing goes to a temporary name that is renamed over the target, so
// a crash never leaves a half-written program file behind.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core_framework/jit/program.h"

namespace nodeweave::jit {

// 2: backward regions in the text, fused_elementwise and gat_aggregate nodes (a reader of version 1
// would stop at them; version 1 files read as before).
// 3: object inputs (graphs bound at each run: `@k: relation_graph[sizes]` in the header and
// `opaque(relation_graph @k)` on nodes).
constexpr uint32_t kProgramFormatVersion = 3;

// How an opaque attribute kind (a graph structure, say) is written and read back: as integers and
// tensors. Registered by the layer that defines the kind (backend/ for "relation_graph").
struct OpaqueCodec {
  std::function<void(const OpaqueAttr&, std::vector<int64_t>&, TensorList&)> encode;
  // ValueError when the parts do not make a valid object (a corrupt file).
  std::function<OpaquePtr(const std::vector<int64_t>&, const TensorList&)> decode;
};
void register_opaque_codec(const std::string& kind, OpaqueCodec codec);

// ValueError naming the attribute when a kind has no codec; OSError-style runtime_error when the
// file cannot be written.
void save_program(const Program& program, const std::string& path);
// ValueError naming what is wrong: not a program file, a newer format version, a truncated or
// corrupt file, text that does not parse, tensors that do not match the text.
Program load_program(const std::string& path);

// The same, to and from bytes (what the file holds).
std::string serialize_program(const Program& program);
Program deserialize_program(const std::string& bytes, const std::string& what = "program");

}  // namespace nodeweave::jit
