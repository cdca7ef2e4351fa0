// Temporary: registration entries for families still being written.
#include "core_framework/engine/op_registry.h"
namespace nodeweave {
void register_softmax_ops() {}
void register_join_ops() {}
void register_index_ops() {}
void register_sort_ops() {}
void register_misc_ops() {}
}  // namespace nodeweave
