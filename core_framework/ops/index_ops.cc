// index ops (being written).
#include "core_framework/engine/op_registry.h"
namespace nodeweave {
void register_index_ops() {}
}  // namespace nodeweave
