// nodeweave._C.distributed: METIS over a heterograph's homogeneous view and the partitions with
// their HALO (distributed/). The GIL is released while C++ works; arrays leave without a copy.
#include "distributed/halo_parts.h"
#include "graph_arrays.h"
#include "metis_options.h"
#include "py_convert.h"

namespace nodeweave::py {
namespace {

using distributed::HaloParts;
using distributed::LocalPart;
using distributed::TypedGraph;
using RelationArg = std::tuple<Holder, int64_t, int64_t>;  // (relation, src type, dst type)

TypedGraph typed_graph(const std::vector<RelationArg>& rels, const std::vector<int64_t>& num_nodes) {
  TypedGraph g;
  g.num_nodes = num_nodes;
  for (const auto& [rel, st, dt] : rels) g.relations.push_back({rel, st, dt});
  return g;
}

pyb::list arrays(std::vector<std::vector<int64_t>>&& vs) {
  pyb::list out;
  for (auto& v : vs) out.append(vector_to_numpy(std::move(v)));
  return out;
}

// A read-only NumPy view of one of the partitioner's arrays, keeping the partitioner alive.
pyb::array view_of(const std::vector<int64_t>& v, pyb::object owner) {
  static int64_t dummy = 0;
  pyb::array_t<int64_t> arr({static_cast<pyb::ssize_t>(v.size())}, v.empty() ? &dummy : v.data(),
                            owner);
  arr.attr("setflags")(pyb::arg("write") = false);
  return arr;
}

// View `i` of a per-type list of id arrays (orig_node / orig_edge), IndexError naming `what`.
pyb::array typed_view(const std::vector<std::vector<int64_t>>& v, int64_t i, const char* what,
                      pyb::object owner) {
  NW_CHECK(i >= 0 && i < static_cast<int64_t>(v.size()), IndexError, what, " ", i,
           " is out of range");
  return view_of(v[static_cast<size_t>(i)], std::move(owner));
}

}  // namespace

void bind_distributed(pyb::module_& m) {
  m.def(
      "metis_assignment",
      [](const std::vector<RelationArg>& rels, const std::vector<int64_t>& num_nodes, int64_t k,
         const std::string& mode, const std::string& objtype, pyb::handle node_weights,
         int64_t seed) {
        const TypedGraph g = typed_graph(rels, num_nodes);
        const sampling::MetisOptions opt = metis_options(k, mode, objtype, node_weights, seed);
        sampling::MetisResult res;
        {
          pyb::gil_scoped_release nogil;
          g.check("metis_assignment");
          res = sampling::metis_partition(g.homogeneous_slices(), g.total_nodes(), opt);
        }
        return pyb::make_tuple(vector_to_numpy(std::move(res.part)), res.objective_value);
      },
      pyb::arg("relations"), pyb::arg("num_nodes"), pyb::arg("k"), pyb::arg("mode") = "k-way",
      pyb::arg("objtype") = "cut", pyb::arg("node_weights") = pyb::none(), pyb::arg("seed") = 0,
      "(part, objective value): METIS over the union of `relations` ((relation, src type, dst "
      "type) tuples) in homogeneous node ids, node types counted by `num_nodes`.");

  pyb::class_<HaloParts, std::shared_ptr<HaloParts>>(m, "HaloParts", R"doc(
The partitions of a typed graph with HALO nodes up to num_hops, after relabelling nodes and edges
into one contiguous range per type and part (distributed/halo_parts.h).)doc")
      .def(pyb::init([](const std::vector<RelationArg>& rels, const std::vector<int64_t>& num_nodes,
                        pyb::handle part, int64_t num_parts, int64_t num_hops) {
             TypedGraph g = typed_graph(rels, num_nodes);
             std::vector<int64_t> p = int64_vector(part, "part");
             pyb::gil_scoped_release nogil;
             return std::make_shared<HaloParts>(std::move(g), std::move(p), num_parts, num_hops);
           }),
           pyb::arg("relations"), pyb::arg("num_nodes"), pyb::arg("part"), pyb::arg("num_parts"),
           pyb::arg("num_hops"))
      .def_property_readonly("node_offsets",
                             [](const HaloParts& h) { return h.relabel().node_offsets; })
      .def_property_readonly("edge_offsets",
                             [](const HaloParts& h) { return h.relabel().edge_offsets; })
      .def(
          "orig_node_ids",
          [](pyb::object self, int64_t t) {
            return typed_view(self.cast<const HaloParts&>().relabel().orig_node, t, "node type",
                              self);
          },
          pyb::arg("ntype"), "new id -> input id of node type `ntype` (a read-only view)")
      .def(
          "orig_edge_ids",
          [](pyb::object self, int64_t r) {
            return typed_view(self.cast<const HaloParts&>().relabel().orig_edge, r, "relation",
                              self);
          },
          pyb::arg("relation"), "new id -> input id of relation `relation` (a read-only view)")
      .def(
          "extract",
          [](const HaloParts& h, int64_t p) {
            LocalPart lp;
            {
              pyb::gil_scoped_release nogil;
              lp = h.extract(p);
            }
            pyb::dict out;
            out["num_inner_nodes"] = lp.num_inner_nodes;
            out["node_ids"] = arrays(std::move(lp.node_ids));
            out["orig_node_ids"] = arrays(std::move(lp.orig_node_ids));
            out["num_inner_edges"] = lp.num_inner_edges;
            out["edge_ids"] = arrays(std::move(lp.edge_ids));
            out["orig_edge_ids"] = arrays(std::move(lp.orig_edge_ids));
            out["src"] = arrays(std::move(lp.src));
            out["dst"] = arrays(std::move(lp.dst));
            return out;
          },
          pyb::arg("part_id"),
          "Partition `part_id` as a dict of per-type lists: num_inner_nodes, node_ids, "
          "orig_node_ids (per node type), num_inner_edges, edge_ids, orig_edge_ids, src, dst "
          "(per relation; src/dst in local node ids).");
}

}  // namespace nodeweave::py
