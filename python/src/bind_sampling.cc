// nodeweave._C.sampling: the sampling layer seen from Python. Every entry point takes the graph's
// C++ relation graphs and NumPy id arrays, releases the GIL while it samples, and returns NumPy
// arrays that own their C++ storage.
#include "core_framework/runtime/generator.h"
#include "py_convert.h"

namespace nodeweave::py {

void bind_sampling(pyb::module_& m) {
  m.def(
      "draw_seed", []() { return default_generator().next_seed(); },
      "A fresh 64-bit sampler seed from the default generator (nodeweave.core.manual_seed "
      "reseeds it), for calls that are not given a random_seed.");
}

}  // namespace nodeweave::py
