// Static mode (core_framework/jit): the tracer, programs (text, passes) and the executor, as
// nodeweave._C.jit; nodeweave.core.jit builds the user-facing trace() on them.
#include "backend/native/op_util.h"
#include "core_framework/jit/dynamic_sizes.h"
#include "core_framework/jit/executor.h"
#include "core_framework/jit/fused_elementwise.h"
#include "core_framework/jit/ir_text.h"
#include "core_framework/jit/passes/passes.h"
#include "core_framework/jit/program_file.h"
#include "core_framework/jit/tracer.h"
#include "core_framework/optim/update_ops.h"
#include "graph_arrays.h"
#include "py_convert.h"

namespace nodeweave::py {

namespace {

TensorList tensor_list(const pyb::sequence& seq, const char* arg) {
  TensorList out;
  out.reserve(seq.size());
  for (auto item : seq) out.push_back(tensor_arg(item, arg));
  return out;
}

// The graphs of a call as the executor's object inputs.
std::vector<OpaquePtr> graph_objects(const std::vector<Holder>& graphs) {
  std::vector<OpaquePtr> out;
  out.reserve(graphs.size());
  for (const Holder& g : graphs) {
    NW_CHECK(g != nullptr, TypeError, "jit: a graph input is None");
    out.push_back(std::make_shared<backend::GraphAttr>(g));
  }
  return out;
}

// The first of g and the graphs it was made from (a reverse, other formats, another device or id
// type) that trace t takes as an input, or null.
const graph::RelationGraph* traced_input(const jit::Tracer& t, const graph::RelationGraph& g) {
  for (const graph::RelationGraph* from = &g; from; from = from->made_from().get())
    if (t.is_object_input(from)) return from;
  return nullptr;
}

}  // namespace

void note_structure_read(const graph::RelationGraph& g, const char* what) {
  jit::Tracer* t = jit::Tracer::current();
  if (!t) return;
  if (const graph::RelationGraph* in = traced_input(*t, g)) t->note_object_read(in, what);
}

void bind_jit(pyb::module_& m) {
  using jit::Executor;
  using jit::Program;
  using jit::Tracer;
  pyb::class_<Program>(m, "Program")
      .def("__str__", [](const Program& p) { return jit::print(p); })
      .def_static("parse", &jit::parse, pyb::arg("text"))
      .def(
          "run_passes",
          [](Program& p, const std::vector<std::string>& disabled) {
            backend::kinds();  // registers the graph-kernel fusion passes
            jit::run_passes(p, disabled);
          },
          pyb::arg("disabled") = std::vector<std::string>{})
      .def_property_readonly("num_nodes", [](const Program& p) { return p.nodes.size(); })
      .def_property_readonly("num_inputs", [](const Program& p) { return p.inputs.size(); })
      .def_property_readonly("num_outputs", [](const Program& p) { return p.outputs.size(); })
      .def("copy", [](const Program& p) { return Program(p); })
      .def(
          "fuse_elementwise",
          [](Program& p, int64_t min_elements) { jit::fuse_elementwise(p, min_elements); },
          pyb::arg("min_elements") = jit::kFuseMinElements,
          "The fuse_elementwise pass alone, with its size threshold (benchmarks sweep it).");
  m.def(
      "op_signatures",
      [] {
        backend::kinds();     // the graph ops
        optim::update_ops();  // the optimizer updates
        jit::fused_elementwise_kind();
        std::vector<std::string> all;
        for (int k = 0; k < num_registered_ops(); ++k)
          all.emplace_back(op_def(static_cast<OpKind>(k)).signature->text);
        return all;
      },
      "Every op of the table, as its signature declares it (docs/jit.md, 'The IR').");
  m.def("pass_names", [] {
    backend::kinds();
    std::vector<std::string> names;
    for (const auto& info : jit::pass_list()) names.emplace_back(info.name);
    return names;
  });
  // One per trace; finish() or abort() uninstalls it (the Python side guarantees one of them).
  pyb::class_<Tracer>(m, "Tracer")
      .def(pyb::init<>())
      .def(
          "add_input",
          [](Tracer& t, pyb::handle x, bool data) {
            return t.add_input(tensor_arg(x, "input"), data);
          },
          pyb::arg("x"), pyb::arg("data") = true)
      .def("finish",
           [](Tracer& t, const pyb::sequence& outs) {
             return t.finish(tensor_list(outs, "output"));
           })
      .def("add_graph_input",
           [](Tracer& t, const Holder& g) { return t.add_object_input(graph_objects({g})[0]); })
      .def_property_readonly("structure_read", &Tracer::object_read)
      .def_property_readonly(
          "grad_writes",
          [](const Tracer& t) {
            pyb::list out;
            for (const jit::GradWrite& w : t.grad_writes())
              out.append(pyb::make_tuple(w.leaf, w.output, w.none_at_entry));
            return out;
          },
          "After finish(): (leaf, output index or -1 for none, whether the leaf must have no "
          "gradient when a run starts) per leaf whose .grad the traced code wrote.")
      .def("abort", &Tracer::abort)
      .def("depends_on_input",
           [](const Tracer& t, pyb::handle x) { return t.depends_on_input(tensor_arg(x, "x")); });
  pyb::class_<Executor>(m, "Executor")
      .def(pyb::init<Program, bool>(), pyb::arg("program"), pyb::arg("plan_memory") = true)
      .def_property_readonly("planned_bytes",
                             [](const Executor& e) { return e.memory_plan().planned_bytes; })
      .def_property_readonly("arena_bytes",
                             [](const Executor& e) { return e.memory_plan().arena_bytes; })
      .def_property_readonly("in_place_bytes",
                             [](const Executor& e) { return e.memory_plan().in_place_bytes; })
      .def_property_readonly(
          "arena_bytes_without_in_place",
          [](const Executor& e) { return jit::plan_memory(e.program(), false).arena_bytes; })
      .def_property_readonly("buffer_of",
                             [](const Executor& e) { return e.memory_plan().buffer_of; })
      .def(
          "run",
          [](const Executor& e, const pyb::sequence& inputs, const std::vector<Holder>& graphs) {
            TensorList outs = e.run(tensor_list(inputs, "input"), graph_objects(graphs));
            pyb::list r;
            for (Tensor& t : outs) r.append(pyb::cast(std::move(t)));
            return r;
          },
          pyb::arg("inputs"), pyb::arg("graphs") = std::vector<Holder>{})
      .def_property_readonly("program", &Executor::program);
  pyb::class_<jit::DynamicProgram>(m, "DynamicProgram")
      .def_static(
          "generalize",
          [](const std::vector<const Program*>& traces) -> pyb::tuple {
            NW_CHECK(traces.size() >= 2, ValueError, "generalize: needs two traces or more, got ",
                     traces.size());
            std::string why;
            std::optional<jit::DynamicProgram> d = jit::generalize(traces, &why);
            if (!d) return pyb::make_tuple(pyb::none(), why);
            return pyb::make_tuple(std::move(*d), "");
          },
          pyb::arg("traces"))
      .def(
          "mismatch",
          [](const jit::DynamicProgram& d, const pyb::sequence& inputs,
             const std::vector<Holder>& graphs) {
            return d.mismatch(jit::call_sizes(tensor_list(inputs, "input"), graph_objects(graphs)));
          },
          pyb::arg("inputs"), pyb::arg("graphs"))
      .def(
          "instantiate",
          [](const jit::DynamicProgram& d, const pyb::sequence& inputs,
             const std::vector<Holder>& graphs) {
            return d.instantiate(
                jit::call_sizes(tensor_list(inputs, "input"), graph_objects(graphs)));
          },
          pyb::arg("inputs"), pyb::arg("graphs"));
  m.def("tracing", [] { return jit::Tracer::current() != nullptr; });
  // `with untraced():` runs host code the trace must not record (an optimizer making its state:
  // the program holds that state, it does not recreate it at each run).
  struct Untraced {
    DispatchObserver* previous = nullptr;
  };
  pyb::class_<Untraced>(m, "untraced")
      .def(pyb::init<>())
      .def("__enter__", [](Untraced& u) { u.previous = set_dispatch_observer(nullptr); })
      .def("__exit__", [](Untraced& u, const pyb::args&) { set_dispatch_observer(u.previous); });
  m.def(
      "capture_state",
      [](pyb::handle x) {
        if (jit::Tracer* t = jit::Tracer::current()) t->capture_state(tensor_arg(x, "t"));
      },
      pyb::arg("t"),
      "While tracing: holds t by reference in the program (state the host refreshes between "
      "runs), even when it was made during the trace.");
  m.def(
      "traces_graph",
      [](const Holder& g) {
        const jit::Tracer* t = jit::Tracer::current();
        return t && g && traced_input(*t, *g) != nullptr;
      },
      pyb::arg("graph"),
      "Whether a trace runs on this thread and takes `graph` (or a graph it was made from) as an "
      "input.");
  m.def(
      "note_graph_read",
      [](const Holder& g, const std::string& what) {
        if (g) note_structure_read(*g, what.c_str());
      },
      pyb::arg("graph"), pyb::arg("what"));
  // Loading needs the codecs of every opaque kind: the graph ops register theirs with the ops.
  m.def("save_program", &jit::save_program, pyb::arg("program"), pyb::arg("path"));
  m.def(
      "load_program",
      [](const std::string& path) {
        backend::kinds();
        return jit::load_program(path);
      },
      pyb::arg("path"));
  m.def("serialize_program",
        [](const Program& p) { return pyb::bytes(jit::serialize_program(p)); });
  m.def("deserialize_program", [](const pyb::bytes& b) {
    backend::kinds();
    return jit::deserialize_program(std::string(b), "program bytes");
  });
}

}  // namespace nodeweave::py
