// nodeweave._C graph algorithms of graph/ (traversal.h, shortest_dist.h) for
// nodeweave.graph.algorithms: a relation graph and NumPy node lists in; int64 NumPy arrays out
// (owning their C++ buffers), frontiers as (ids, sections[, labels]) for Python to split. The GIL
// is released while the graph is walked.
#include <utility>

#include "graph/shortest_dist.h"
#include "graph/traversal.h"
#include "graph_arrays.h"
#include "py_convert.h"

namespace nodeweave::py {

namespace {

using graph::Frontiers;
using graph::RelationGraph;

pyb::tuple frontier_tuple(Frontiers&& f, bool labels) {
  if (!labels)
    return pyb::make_tuple(vector_to_numpy(std::move(f.ids)),
                           vector_to_numpy(std::move(f.sections)));
  return pyb::make_tuple(vector_to_numpy(std::move(f.ids)), owned_array(std::move(f.labels)),
                         vector_to_numpy(std::move(f.sections)));
}

template <typename F>
pyb::tuple walk(pyb::handle sources, const F& f) {
  const std::vector<int64_t> ids = int64_vector(sources, "sources");
  Frontiers out;
  {
    pyb::gil_scoped_release nogil;
    out = f(ids);
  }
  return frontier_tuple(std::move(out), false);
}

}  // namespace

void bind_graph_algorithms(pyb::module_& m) {
  m.def(
      "bfs_nodes",
      [](const RelationGraph& rel, pyb::handle sources, bool reverse) {
        return walk(sources, [&](const auto& s) { return graph::bfs_nodes(rel, s, reverse); });
      },
      pyb::arg("rel"), pyb::arg("sources"), pyb::arg("reverse") = false,
      "(ids, sections): breadth-first node frontiers from `sources`.");
  m.def(
      "bfs_edges",
      [](const RelationGraph& rel, pyb::handle sources, bool reverse) {
        return walk(sources, [&](const auto& s) { return graph::bfs_edges(rel, s, reverse); });
      },
      pyb::arg("rel"), pyb::arg("sources"), pyb::arg("reverse") = false,
      "(ids, sections): the BFS tree edges reaching each node frontier after the first.");
  m.def(
      "topological_nodes",
      [](const RelationGraph& rel, bool reverse) {
        Frontiers out;
        {
          pyb::gil_scoped_release nogil;
          out = graph::topological_nodes(rel, reverse);
        }
        return frontier_tuple(std::move(out), false);
      },
      pyb::arg("rel"), pyb::arg("reverse") = false,
      "(ids, sections): topological layers; ValueError on a cycle.");
  m.def(
      "dfs_labeled_edges",
      [](const RelationGraph& rel, pyb::handle sources, bool reverse, bool reverse_edges,
         bool nontree_edges) {
        const std::vector<int64_t> ids = int64_vector(sources, "sources");
        Frontiers out;
        {
          pyb::gil_scoped_release nogil;
          out = graph::dfs_labeled_edges(rel, ids, reverse, reverse_edges, nontree_edges);
        }
        return frontier_tuple(std::move(out), true);
      },
      pyb::arg("rel"), pyb::arg("sources"), pyb::arg("reverse") = false,
      pyb::arg("reverse_edges") = false, pyb::arg("nontree_edges") = false,
      "(edge ids, labels as int8, sections): depth-first edge frontiers, one search per source.");
  m.def(
      "shortest_paths",
      [](const RelationGraph& rel, pyb::handle roots, bool with_paths) -> pyb::tuple {
        const std::vector<int64_t> ids = int64_vector(roots, "roots");
        graph::ShortestPaths sp;
        {
          pyb::gil_scoped_release nogil;
          sp = graph::shortest_paths(rel, ids, with_paths);
        }
        const pyb::ssize_t r = sp.num_roots, n = sp.num_nodes, len = sp.max_len;
        pyb::object dist = owned_array(std::move(sp.dist), {r, n});
        if (!with_paths) return pyb::make_tuple(dist, pyb::none());
        pyb::object paths = owned_array(std::move(sp.paths), {r, n, len});
        return pyb::make_tuple(dist, paths);
      },
      pyb::arg("rel"), pyb::arg("roots"), pyb::arg("with_paths") = false,
      "(dist, paths): hop counts (roots x nodes, -1 unreachable) and, with_paths, the edge ids of "
      "one shortest path per pair padded with -1 (roots x nodes x longest distance); else None.");
}

}  // namespace nodeweave::py
