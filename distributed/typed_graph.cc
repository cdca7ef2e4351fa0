// TypedGraph's checks and the homogeneous numbering of its nodes and edges.
#include "distributed/typed_graph.h"

#include <algorithm>

#include "core_framework/runtime/error.h"

namespace nodeweave::distributed {

void TypedGraph::check(const char* fn) const {
  const int64_t nt = static_cast<int64_t>(num_nodes.size());
  for (int64_t t = 0; t < nt; ++t)
    NW_CHECK(num_nodes[t] >= 0, ValueError, fn, ": node type ", t, " has a negative count ",
             num_nodes[t]);
  for (size_t r = 0; r < relations.size(); ++r) {
    const TypedRelation& tr = relations[r];
    NW_CHECK(tr.rel != nullptr, ValueError, fn, ": relation ", r, " is null");
    NW_CHECK(tr.src_type >= 0 && tr.src_type < nt && tr.dst_type >= 0 && tr.dst_type < nt,
             ValueError, fn, ": relation ", r, " names node types ", tr.src_type, " -> ",
             tr.dst_type, ", but there are ", nt);
    NW_CHECK(tr.rel->num_src() == num_nodes[tr.src_type] &&
                 tr.rel->num_dst() == num_nodes[tr.dst_type],
             ValueError, fn, ": relation ", r, " has ", tr.rel->num_src(), " x ",
             tr.rel->num_dst(), " nodes, its types ", num_nodes[tr.src_type], " x ",
             num_nodes[tr.dst_type]);
    NW_CHECK(tr.rel->device().is_cpu(), ValueError, fn, ": relation ", r,
             " must be on the CPU, got ", tr.rel->device().str());
  }
}

std::vector<int64_t> TypedGraph::node_offsets() const {
  std::vector<int64_t> off(num_nodes.size() + 1, 0);
  for (size_t t = 0; t < num_nodes.size(); ++t) off[t + 1] = off[t] + num_nodes[t];
  return off;
}

std::vector<int64_t> TypedGraph::edge_offsets() const {
  std::vector<int64_t> off(relations.size() + 1, 0);
  for (size_t r = 0; r < relations.size(); ++r)
    off[r + 1] = off[r] + relations[r].rel->num_edges();
  return off;
}

std::vector<sampling::RelationSlice> TypedGraph::homogeneous_slices() const {
  const std::vector<int64_t> off = node_offsets();
  std::vector<sampling::RelationSlice> out;
  for (const TypedRelation& tr : relations)
    out.push_back({tr.rel.get(), off[static_cast<size_t>(tr.src_type)],
                   off[static_cast<size_t>(tr.dst_type)]});
  return out;
}

int64_t range_of(const std::vector<int64_t>& offsets, int64_t id) {
  return std::upper_bound(offsets.begin(), offsets.end(), id) - offsets.begin() - 1;
}

}  // namespace nodeweave::distributed
