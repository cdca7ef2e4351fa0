// nodeweave._C subgraph primitives (graph/subgraph.h, graph/compact.h) for the Python transforms:
// relation graphs and NumPy id lists in, new relation graphs and int64 NumPy arrays (owning their
// C++ buffers) out. The GIL is released while the graphs are built.
#include <string>

#include "graph/compact.h"
#include "graph/subgraph.h"
#include "graph_arrays.h"
#include "py_convert.h"

namespace nodeweave::py {

namespace {

using graph::Relabel;
using graph::RelationGraph;
using graph::Subgraph;

Relabel parse_relabel(const std::string& s) {
  if (s == "keep") return Relabel::kKeep;
  if (s == "per_side") return Relabel::kPerSide;
  if (s == "shared") return Relabel::kShared;
  throw ValueError(str_cat("relabel must be 'keep', 'per_side' or 'shared', got '", s, "'"));
}

pyb::object ids_or_none(std::vector<int64_t>&& v, Relabel r) {
  if (r == Relabel::kKeep) return pyb::none();
  return vector_to_numpy(std::move(v));
}

// (graph, eids, src_nodes, dst_nodes); the node lists are None when nodes kept their ids.
pyb::tuple subgraph_tuple(Subgraph&& s, Relabel r) {
  return pyb::make_tuple(hold(s.graph), vector_to_numpy(std::move(s.eids)),
                         ids_or_none(std::move(s.src_nodes), r),
                         ids_or_none(std::move(s.dst_nodes), r));
}

template <typename F>
pyb::tuple by_nodes(const RelationGraph& rel, pyb::handle nodes, const std::string& relabel,
                    const F& f) {
  const std::vector<int64_t> ids = int64_vector(nodes, "nodes");
  const Relabel r = parse_relabel(relabel);
  Subgraph s;
  {
    pyb::gil_scoped_release nogil;
    s = f(rel, ids, r);
  }
  return subgraph_tuple(std::move(s), r);
}

}  // namespace

void bind_subgraph(pyb::module_& m) {
  m.def(
      "induced_subgraph",
      [](const RelationGraph& rel, pyb::handle src_nodes, pyb::handle dst_nodes, bool relabel) {
        const std::vector<int64_t> s = int64_vector(src_nodes, "src_nodes");
        // One list object for both sides (a relation from a node type to itself): pass it once,
        // so the C++ side builds one membership set.
        const bool same = src_nodes.is(dst_nodes);
        const std::vector<int64_t> d =
            same ? std::vector<int64_t>{} : int64_vector(dst_nodes, "dst_nodes");
        Subgraph out;
        {
          pyb::gil_scoped_release nogil;
          out = graph::induced_subgraph(rel, s, same ? s : d, relabel);
        }
        return pyb::make_tuple(hold(out.graph), vector_to_numpy(std::move(out.eids)));
      },
      pyb::arg("rel"), pyb::arg("src_nodes"), pyb::arg("dst_nodes"), pyb::arg("relabel"),
      "(graph, eids): the edges from src_nodes to dst_nodes in increasing edge id; with relabel, "
      "node i of each side is the i-th id of its list.");
  m.def(
      "edge_subgraph",
      [](const RelationGraph& rel, pyb::handle eids, const std::string& relabel) {
        const std::vector<int64_t> ids = int64_vector(eids, "eids");
        const Relabel r = parse_relabel(relabel);
        Subgraph s;
        {
          pyb::gil_scoped_release nogil;
          s = graph::edge_subgraph(rel, ids, r);
        }
        return subgraph_tuple(std::move(s), r);
      },
      pyb::arg("rel"), pyb::arg("eids"), pyb::arg("relabel") = "keep",
      "(graph, eids, src_nodes, dst_nodes): edges eids in that order; relabel 'keep', 'per_side' "
      "or 'shared' (node lists in increasing id, None for 'keep').");
  m.def(
      "in_subgraph",
      [](const RelationGraph& rel, pyb::handle nodes, const std::string& relabel) {
        return by_nodes(rel, nodes, relabel, graph::in_subgraph);
      },
      pyb::arg("rel"), pyb::arg("nodes"), pyb::arg("relabel") = "keep",
      "(graph, eids, src_nodes, dst_nodes): every edge entering `nodes`, in increasing edge id.");
  m.def(
      "out_subgraph",
      [](const RelationGraph& rel, pyb::handle nodes, const std::string& relabel) {
        return by_nodes(rel, nodes, relabel, graph::out_subgraph);
      },
      pyb::arg("rel"), pyb::arg("nodes"), pyb::arg("relabel") = "keep",
      "(graph, eids, src_nodes, dst_nodes): every edge leaving `nodes`, in increasing edge id.");
  m.def(
      "compact_relations",
      [](const std::vector<int64_t>& num_nodes, const std::vector<pyb::tuple>& relations,
         pyb::handle always_preserve, const std::string& idtype) {
        std::vector<graph::TypedRelation> rels;
        for (const pyb::tuple& t : relations) {
          NW_CHECK(t.size() == 3, ValueError,
                   "compact_relations: relations must be (src_type, dst_type, graph) tuples");
          rels.push_back({t[0].cast<int>(), t[1].cast<int>(), t[2].cast<Holder>()});
        }
        std::vector<std::vector<int64_t>> preserve;
        if (!always_preserve.is_none()) {
          for (pyb::handle h : always_preserve)
            preserve.push_back(h.is_none() ? std::vector<int64_t>{}
                                           : int64_vector(h, "always_preserve"));
        }
        const DType dt = parse_idtype(idtype);
        graph::CompactedRelations c;
        {
          pyb::gil_scoped_release nogil;
          c = graph::compact_relations(num_nodes, rels, preserve, dt);
        }
        pyb::list graphs, nodes;
        for (const auto& g : c.graphs) graphs.append(hold(g));
        for (auto& ids : c.node_ids) nodes.append(vector_to_numpy(std::move(ids)));
        return pyb::make_tuple(graphs, nodes);
      },
      pyb::arg("num_nodes"), pyb::arg("relations"), pyb::arg("always_preserve"), pyb::arg("idtype"),
      "(graphs, node_ids): relations (src_type, dst_type, graph) renumbered to the nodes with an "
      "edge (always_preserve per type first); node_ids[t] holds each new node's original id.");
}

}  // namespace nodeweave::py
