// GraphAttr's side of programs that take graphs as inputs (core_framework/jit/object_input.h):
// which input graph an op's graph was made from (through reverse(), with_formats(), astype()), how
// to make it again from another graph, and the sizes a program's shapes may follow.
#include "backend/native/graph_ops.h"

namespace nodeweave::backend {

std::vector<std::pair<const void*, int>> GraphAttr::lineage() const {
  std::vector<std::pair<const void*, int>> out;
  int d = 0;
  for (const graph::RelationGraph* g = graph.get(); g;) {
    out.emplace_back(g, d);
    if (g->reverse_of()) {
      d ^= kReversed;
      g = g->reverse_of().get();
    } else if (g->same_edges_as() && g->same_edges_as()->device() == graph->device()) {
      g = g->same_edges_as().get();  // other formats or id type: the same graph to a kernel
    } else {
      break;  // a graph on another device is not the one the kernel walks
    }
  }
  return out;
}

OpaquePtr GraphAttr::derived(int derivation) const {
  NW_CHECK(derivation == kReversed, std::logic_error, "relation_graph: no derivation ", derivation);
  // The graph every backward pass walks, as gspmm_op.cc makes it.
  return std::make_shared<GraphAttr>(graph->reverse_for_kernels());
}

std::vector<int64_t> GraphAttr::sizes() const {
  return {graph->num_src(), graph->num_dst(), graph->num_edges()};
}

}  // namespace nodeweave::backend
