// misc ops (being written).
#include "core_framework/engine/op_registry.h"
namespace nodeweave {
void register_misc_ops() {}
}  // namespace nodeweave
