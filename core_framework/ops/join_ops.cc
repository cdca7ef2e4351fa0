// join ops (being written).
#include "core_framework/engine/op_registry.h"
namespace nodeweave {
void register_join_ops() {}
}  // namespace nodeweave
