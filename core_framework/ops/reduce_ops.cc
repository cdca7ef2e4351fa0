// Reductions other than sum: registration entry for the family.
#include "core_framework/engine/op_registry.h"
#include "core_framework/ops/reduce_util.h"

namespace nodeweave {
void register_reduce_ops() { register_reduce_sum_op(); }
}  // namespace nodeweave
