#include <algorithm>
#include <mutex>
#include <string>

#include "core_framework/jit/passes/passes.h"
#include "core_framework/runtime/error.h"

namespace nodeweave::jit {

namespace {

std::vector<PassInfo>& mutable_list() {
  // Folding first: it turns subexpressions into constants that the later passes then see.
  static std::vector<PassInfo> list = {
      {"fold_constants", fold_constants},
      {"eliminate_common_subexpressions", eliminate_common_subexpressions},
      {"eliminate_dead_code", eliminate_dead_code},
      // Last: on what the others left, so no dead or duplicate node is fused.
      {"fuse_elementwise", [](Program& p) { fuse_elementwise(p); }},
  };
  return list;
}

std::mutex& list_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

const std::vector<PassInfo>& pass_list() { return mutable_list(); }

void register_pass(PassInfo info, const char* before) {
  std::lock_guard<std::mutex> lock(list_mutex());
  std::vector<PassInfo>& list = mutable_list();
  for (const PassInfo& p : list)
    NW_CHECK(std::string(p.name) != info.name, ValueError, "jit: pass '", info.name,
             "' is registered twice");
  auto at = std::find_if(list.begin(), list.end(), [&](const PassInfo& p) {
    return before && std::string(p.name) == before;
  });
  list.insert(at, info);
}

void run_passes(Program& p, const std::vector<std::string>& disabled) {
  const auto& list = pass_list();
  for (const std::string& name : disabled) {
    const bool known = std::any_of(list.begin(), list.end(),
                                   [&](const PassInfo& info) { return name == info.name; });
    if (!known) {
      std::string names;
      for (const PassInfo& info : list)
        names += (names.empty() ? "" : ", ") + std::string(info.name);
      throw ValueError(str_cat("jit: unknown pass '", name, "'; the passes are ", names));
    }
  }
  for (const PassInfo& info : list)
    if (std::find(disabled.begin(), disabled.end(), info.name) == disabled.end()) info.run(p);
}

}  // namespace nodeweave::jit
