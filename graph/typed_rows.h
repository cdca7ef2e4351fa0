// The compressed rows of a relation seen through its id type, for the walks of traversal.cc and
// shortest_dist.cc: row v of the out-edge CSR (or, walking edges backwards, of the in-edge CSC)
// holds the neighbours and edge ids of v in increasing edge id.
#pragma once
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core_framework/runtime/error.h"
#include "graph/relation_graph.h"

namespace nodeweave::graph {

template <typename I>
struct TypedRows {
  const I* indptr;
  const I* indices;  // the node at the other end of each entry
  const I* eids;

  explicit TypedRows(const CompressedArrays& c)
      : indptr(c.indptr.data<I>()), indices(c.indices.data<I>()), eids(c.eids.data<I>()) {}
  int64_t begin(int64_t v) const { return static_cast<int64_t>(indptr[v]); }
  int64_t end(int64_t v) const { return static_cast<int64_t>(indptr[v + 1]); }
  int64_t node(int64_t p) const { return static_cast<int64_t>(indices[p]); }
  int64_t edge(int64_t p) const { return static_cast<int64_t>(eids[p]); }
};

// The rows a walk over a relation from one node set to itself follows: out-edges, or in-edges with
// `reverse`. ValueError naming `fn` for a relation between two node sets or one off the CPU.
inline const CompressedArrays& walk_rows(const RelationGraph& g, bool reverse, const char* fn) {
  NW_CHECK(g.device().is_cpu(), ValueError, fn, ": the relation must be on the CPU, got ",
           g.device().str());
  NW_CHECK(g.num_src() == g.num_dst(), ValueError, fn,
           ": the relation must go from one node set to itself, got ", g.num_src(), " source and ",
           g.num_dst(), " destination nodes");
  return reverse ? g.in_csc() : g.out_csr();
}

// Node ids of a list given to a walk (sources, roots) must be nodes: IndexError naming `fn`, the
// list and the position otherwise.
inline void check_walk_nodes(const std::vector<int64_t>& ids, int64_t n, const char* fn,
                             const char* name) {
  for (size_t i = 0; i < ids.size(); ++i) {
    NW_CHECK(ids[i] >= 0 && ids[i] < n, IndexError, fn, ": ", name, "[", i, "] = ", ids[i],
             " is out of range: the graph has ", n, " nodes");
  }
}

// Calls fn(TypedRows<int32_t or int64_t>) for the graph's id type.
template <typename F>
auto with_typed_rows(const RelationGraph& g, const CompressedArrays& c, const F& fn) {
  return dispatch_id(g.id_dtype(), [&](auto* tag) {
    using I = std::remove_pointer_t<decltype(tag)>;
    return fn(TypedRows<I>(c));
  });
}

}  // namespace nodeweave::graph
