// Bindings (being written).
#include "py_convert.h"
namespace nodeweave::py {
void bind_indexing(pyb::module_&) {}
}  // namespace nodeweave::py
