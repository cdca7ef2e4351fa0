#include <algorithm>

#include "core_framework/jit/passes/passes.h"
#include "core_framework/runtime/error.h"

namespace nodeweave::jit {

const std::vector<PassInfo>& pass_list() {
  // Folding first: it turns subexpressions into constants that the later passes then see.
  static const std::vector<PassInfo> list = {
      {"fold_constants", fold_constants},
      {"eliminate_common_subexpressions", eliminate_common_subexpressions},
      {"eliminate_dead_code", eliminate_dead_code},
  };
  return list;
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
