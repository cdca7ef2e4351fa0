// Bindings (being written).
#include "py_convert.h"
namespace nodeweave::py {
void bind_extra_ops(pyb::module_&) {}
}  // namespace nodeweave::py
