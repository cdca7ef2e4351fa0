// Bindings (being written).
#include "py_convert.h"
namespace nodeweave::py {
void bind_interop(pyb::module_&) {}
}  // namespace nodeweave::py
