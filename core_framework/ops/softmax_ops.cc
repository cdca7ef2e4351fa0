// softmax ops (being written).
#include "core_framework/engine/op_registry.h"
namespace nodeweave {
void register_softmax_ops() {}
}  // namespace nodeweave
