// autograd entry points: backward over several roots, grad(), grad mode; and the op profiler.
#include "core_framework/autograd/engine.h"
#include "core_framework/engine/op_def.h"
#include "core_framework/engine/op_profiler.h"
#include "py_convert.h"

namespace nodeweave::py {

namespace {
TensorList tensor_seq(pyb::handle obj, const char* arg) {
  TensorList out;
  if (pyb::isinstance<Tensor>(obj)) return {obj.cast<Tensor>()};
  if (obj.is_none()) return out;
  for (auto item : obj) {
    if (item.is_none()) {
      out.push_back(Tensor());
    } else {
      out.push_back(tensor_arg(item, arg));
    }
  }
  return out;
}
}  // namespace

void bind_autograd(pyb::module_& m) {
  m.def("_backward",
        [](pyb::handle tensors, pyb::handle grads, bool retain_graph, bool create_graph) {
          backward(tensor_seq(tensors, "tensors"), tensor_seq(grads, "grad_tensors"), retain_graph,
                   create_graph);
        });
  m.def("_grad", [](pyb::handle outputs, pyb::handle inputs, pyb::handle grads, bool retain_graph,
                    bool create_graph, bool allow_unused) {
    TensorList r =
        grad(tensor_seq(outputs, "outputs"), tensor_seq(inputs, "inputs"),
             tensor_seq(grads, "grad_outputs"), retain_graph, create_graph, allow_unused);
    pyb::tuple out(r.size());
    for (size_t i = 0; i < r.size(); ++i) out[i] = r[i].defined() ? pyb::cast(r[i]) : pyb::none();
    return out;
  });
  // The op profiler (core_framework/engine/op_profiler.h); nodeweave.core.profiler wraps it.
  m.def("_profiler_enable", &set_op_profiling);
  m.def("_profiler_enabled", &op_profiling);
  m.def("_profiler_reset", &reset_op_profile);
  m.def("_profiler_table", [] {
    pyb::list out;
    for (const OpProfileEntry& e : op_profile())
      out.append(pyb::make_tuple(op_def(e.kind).name, e.calls, static_cast<double>(e.nanos) * 1e-9));
    return out;
  });
}

}  // namespace nodeweave::py
