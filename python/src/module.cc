// nodeweave._C: the native engine as a Python extension module.
#include "py_convert.h"

namespace nodeweave::py {
namespace {

void register_exceptions() {
  // Most derived first: our TypeError/ValueError both derive from std::invalid_argument.
  pyb::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    }
  });
}

}  // namespace
}  // namespace nodeweave::py

PYBIND11_MODULE(_C, m) {
  using namespace nodeweave::py;
  m.doc() = "nodeweave native engine";
  register_exceptions();
  bind_tensor(m);
  bind_ops(m);
  bind_autograd(m);
  bind_extra_ops(m);
  bind_indexing(m);
  bind_numpy(m);
  bind_interop(m);
  bind_optim(m);
  bind_graph(m);
  bind_graph_ops(m);
  bind_dlpack_kernels(m);
  bind_subgraph(m);
  pyb::module_ sampling = m.def_submodule("sampling", "samplers (sampling/)");
  bind_sampling(sampling);
  bind_negative_sampling(sampling);
  bind_random_walks(sampling);
  bind_subgraph_samplers(sampling);
}
