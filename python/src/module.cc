// nodeweave._C: the native engine as a Python extension module.
#include "core_framework/jit/executor.h"
#include "core_framework/jit/tracer.h"
#include "py_convert.h"

namespace nodeweave::py {
namespace {

// C++ errors become nodeweave.errors' classes: each is NodeweaveError and the built-in exception
// it names. The classes live in a pure-Python module (no import of _C), so importing it here while
// the nodeweave package is still initializing is safe.
void register_exceptions() {
  const pyb::module_ errors = pyb::module_::import("nodeweave.errors");
  // Held for the life of the process (never released): the translator may run during shutdown.
  const auto held = [&](const char* name) {
    return pyb::object(errors.attr(name)).release().ptr();
  };
  static PyObject* const value_error = held("ValueError");
  static PyObject* const type_error = held("TypeError");
  static PyObject* const index_error = held("IndexError");
  static PyObject* const not_implemented = held("NotImplementedError");
  static PyObject* const runtime_error = held("RuntimeError");
  static PyObject* const tracing_error = held("TracingError");
  static PyObject* const guard_failure = held("GuardFailure");
  // Most derived first: our TypeError/ValueError both derive from std::invalid_argument.
  pyb::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const TypeError& e) {
      PyErr_SetString(type_error, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(value_error, e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(index_error, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(not_implemented, e.what());
    } catch (const jit::GuardFailure& e) {
      PyErr_SetString(guard_failure, e.what());
    } catch (const jit::TracingError& e) {
      PyErr_SetString(tracing_error, e.what());
    } catch (const pyb::builtin_exception&) {
      throw;  // pybind11's own (stop_iteration, cast_error, ...): its default translator's
    } catch (const std::invalid_argument& e) {  // the standard library's, thrown inside ours
      PyErr_SetString(value_error, e.what());
    } catch (const std::out_of_range& e) {
      PyErr_SetString(index_error, e.what());
    } catch (const std::overflow_error&) {
      throw;  // OverflowError, as pybind11 maps it
    } catch (const std::range_error&) {
      throw;                                 // ValueError, as pybind11 maps it
    } catch (const std::runtime_error& e) {  // the library's RuntimeError (error.h)
      PyErr_SetString(runtime_error, e.what());
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
  bind_graph_algorithms(m);
  bind_geometry(m);
  pyb::module_ sampling = m.def_submodule("sampling", "samplers (sampling/)");
  bind_sampling(sampling);
  bind_negative_sampling(sampling);
  bind_random_walks(sampling);
  bind_subgraph_samplers(sampling);
  pyb::module_ distributed = m.def_submodule("distributed", "graph partitioning (distributed/)");
  bind_distributed(distributed);
  bind_mpi(distributed);
  bind_kge(m);
  pyb::module_ jit = m.def_submodule("_jit", "static mode: tracer, programs, executor (core_framework/jit)");
  bind_jit(jit);
}
