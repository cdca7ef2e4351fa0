// nodeweave._C.RelationGraph: the C++ relation graph seen from Python. Arrays come out as
// read-only NumPy views of the graph's own storage (graphs are immutable; a writable view would
// let a user corrupt every cached format) and go in as copies, converted to the id type.
#include "graph/relation_graph.h"
#include "graph_arrays.h"
#include "py_convert.h"

namespace nodeweave::py {
namespace {

using graph::IdArray;
using graph::RelationGraph;

std::vector<std::string> format_names(uint8_t f) {
  std::vector<std::string> out;
  if (f & graph::kCoo) out.push_back("coo");
  if (f & graph::kCsr) out.push_back("csr");
  if (f & graph::kCsc) out.push_back("csc");
  return out;
}

uint8_t parse_formats(pyb::handle obj) {
  if (obj.is_none()) return graph::kAllFormats;
  std::vector<std::string> names;
  if (pyb::isinstance<pyb::str>(obj)) {
    names.push_back(obj.cast<std::string>());
  } else {
    for (auto item : obj) names.push_back(pyb::str(item));
  }
  uint8_t f = 0;
  for (const std::string& n : names) {
    if (n == "coo")
      f |= graph::kCoo;
    else if (n == "csr")
      f |= graph::kCsr;
    else if (n == "csc")
      f |= graph::kCsc;
    else if (n == "any" || n == "all")
      f |= graph::kAllFormats;
    else
      throw ValueError(str_cat("formats: unknown format '", n, "' (use coo, csr, csc)"));
  }
  NW_CHECK(f != 0, ValueError, "formats must name at least one of coo, csr, csc");
  return f;
}

}  // namespace

void bind_graph(pyb::module_& m) {
  pyb::class_<RelationGraph, Holder>(m, "RelationGraph", R"doc(
One relation (edge type) of a graph: edges from num_src source to num_dst destination nodes, with
COO / CSR (out-edges) / CSC (in-edges) formats created on demand. Immutable.)doc")
      .def_static(
          "from_coo",
          [](int64_t num_src, int64_t num_dst, pyb::handle src, pyb::handle dst,
             const std::string& idtype, pyb::handle formats) {
            DType d = parse_idtype(idtype);
            return hold(RelationGraph::from_coo(num_src, num_dst, from_numpy(src, "src", d),
                                                from_numpy(dst, "dst", d), parse_formats(formats)));
          },
          pyb::arg("num_src"), pyb::arg("num_dst"), pyb::arg("src"), pyb::arg("dst"),
          pyb::arg("idtype") = "int64", pyb::arg("formats") = pyb::none())
      .def_static(
          "from_csr",
          [](int64_t num_src, int64_t num_dst, pyb::handle indptr, pyb::handle indices,
             pyb::handle eids, const std::string& idtype, pyb::handle formats) {
            DType d = parse_idtype(idtype);
            IdArray e = eids.is_none() ? IdArray::empty(0, d) : from_numpy(eids, "eids", d);
            return hold(RelationGraph::from_csr(num_src, num_dst, from_numpy(indptr, "indptr", d),
                                                from_numpy(indices, "indices", d), e,
                                                parse_formats(formats)));
          },
          pyb::arg("num_src"), pyb::arg("num_dst"), pyb::arg("indptr"), pyb::arg("indices"),
          pyb::arg("eids") = pyb::none(), pyb::arg("idtype") = "int64",
          pyb::arg("formats") = pyb::none())
      .def_property_readonly("num_src", &RelationGraph::num_src)
      .def_property_readonly("num_dst", &RelationGraph::num_dst)
      .def_property_readonly("num_edges", &RelationGraph::num_edges)
      .def_property_readonly("idtype",
                             [](const RelationGraph& g) { return dtype_name(g.id_dtype()); })
      .def_property_readonly("device", [](const RelationGraph& g) { return g.device().str(); })
      .def_property_readonly(
          "allowed_formats",
          [](const RelationGraph& g) { return format_names(g.allowed_formats()); })
      .def_property_readonly(
          "created_formats",
          [](const RelationGraph& g) { return format_names(g.created_formats()); })
      .def(
          "coo",
          [](const RelationGraph& g) {
            note_structure_read(g, "coo()");
            const auto& c = g.coo();
            return pyb::make_tuple(to_numpy(c.src), to_numpy(c.dst));
          },
          "(src, dst) in edge-id order, read-only NumPy arrays")
      .def(
          "csr",
          [](const RelationGraph& g) {
            note_structure_read(g, "csr()");
            const auto& c = g.out_csr();
            return pyb::make_tuple(to_numpy(c.indptr), to_numpy(c.indices), to_numpy(c.eids));
          },
          "(indptr, indices, eids) of out-edges; rows are source nodes")
      .def(
          "csc",
          [](const RelationGraph& g) {
            note_structure_read(g, "csc()");
            const auto& c = g.in_csc();
            return pyb::make_tuple(to_numpy(c.indptr), to_numpy(c.indices), to_numpy(c.eids));
          },
          "(indptr, indices, eids) of in-edges; rows are destination nodes")
      .def("in_degrees",
           [](const RelationGraph& g) {
             note_structure_read(g, "in_degrees()");
             return to_numpy(g.in_degrees());
           })
      .def("out_degrees",
           [](const RelationGraph& g) {
             note_structure_read(g, "out_degrees()");
             return to_numpy(g.out_degrees());
           })
      .def("reverse", [](const RelationGraph& g) { return hold(g.reverse()); })
      .def(
          "reverse_for_kernels",
          [](const RelationGraph& g) { return hold(g.reverse_for_kernels()); },
          "reverse(), with this graph's out-edge CSR built and cached first (for backward kernels)")
      .def("with_formats", [](const RelationGraph& g,
                              pyb::handle f) { return hold(g.with_formats(parse_formats(f))); })
      .def("to",
           [](const RelationGraph& g, pyb::handle dev) { return hold(g.to(parse_device(dev))); })
      .def("astype", [](const RelationGraph& g, const std::string& idtype) {
        return hold(g.astype(parse_idtype(idtype)));
      });
}

}  // namespace nodeweave::py
