// relabel_by_part: counting sorts of nodes and edges by part, stable within a part.
#include "distributed/range_relabel.h"

#include <algorithm>

#include "core_framework/runtime/error.h"

namespace nodeweave::distributed {

namespace {

// Destination parts of relation r's edges, counted (count == true) into bucket[q + 1] or placed
// (count == false) at bucket[q]++ in `order`.
template <typename Id>
void bucket_edges(const graph::CooArrays& coo, const int64_t* part, bool count,
                  std::vector<int64_t>& bucket, std::vector<int64_t>& order) {
  const Id* dst = coo.dst.data<Id>();
  const int64_t m = coo.dst.length;
  for (int64_t e = 0; e < m; ++e) {
    const size_t q = static_cast<size_t>(part[dst[e]]);
    if (count)
      ++bucket[q + 1];
    else
      order[static_cast<size_t>(bucket[q]++)] = e;
  }
}

}  // namespace

RangeRelabel relabel_by_part(const TypedGraph& g, const std::vector<int64_t>& part,
                             int64_t num_parts) {
  const char* fn = "relabel_by_part";
  g.check(fn);
  const std::vector<int64_t> noff = g.node_offsets();
  const int64_t n = noff.back();
  NW_CHECK(num_parts >= 1, ValueError, fn, ": num_parts must be >= 1, got ", num_parts);
  NW_CHECK(static_cast<int64_t>(part.size()) == n, ValueError, fn,
           ": part must hold one part id per node (", n, "), got ", part.size());
  for (int64_t v = 0; v < n; ++v)
    NW_CHECK(part[v] >= 0 && part[v] < num_parts, ValueError, fn, ": part[", v, "] = ", part[v],
             " is outside [0, ", num_parts, ")");
  const size_t k = static_cast<size_t>(num_parts);
  const size_t nt = g.num_nodes.size();
  RangeRelabel out;
  out.num_parts = num_parts;
  out.node_offsets.resize(nt);
  out.orig_node.resize(nt);
  out.new_node.resize(nt);
  for (size_t t = 0; t < nt; ++t) {
    const int64_t* pt = part.data() + noff[t];
    const int64_t count = g.num_nodes[t];
    std::vector<int64_t>& off = out.node_offsets[t];
    off.assign(k + 1, 0);
    for (int64_t i = 0; i < count; ++i) ++off[static_cast<size_t>(pt[i]) + 1];
    for (size_t p = 0; p < k; ++p) off[p + 1] += off[p];
    std::vector<int64_t> fill(off.begin(), off.end() - 1);
    std::vector<int64_t>& orig = out.orig_node[t];
    std::vector<int64_t>& fresh = out.new_node[t];
    orig.resize(static_cast<size_t>(count));
    fresh.resize(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      const int64_t id = fill[static_cast<size_t>(pt[i])]++;
      orig[static_cast<size_t>(id)] = i;
      fresh[static_cast<size_t>(i)] = id;
    }
  }
  const size_t nr = g.relations.size();
  out.edge_offsets.resize(nr);
  out.orig_edge.resize(nr);
  out.new_edge.resize(nr);
  for (size_t r = 0; r < nr; ++r) {
    const TypedRelation& tr = g.relations[r];
    const graph::CooArrays& coo = tr.rel->coo();
    const int64_t* pdst = part.data() + noff[static_cast<size_t>(tr.dst_type)];
    std::vector<int64_t>& off = out.edge_offsets[r];
    std::vector<int64_t>& order = out.orig_edge[r];
    off.assign(k + 1, 0);
    order.resize(static_cast<size_t>(tr.rel->num_edges()));
    graph::dispatch_id(tr.rel->id_dtype(), [&](auto* tag) {
      using Id = std::remove_pointer_t<decltype(tag)>;
      bucket_edges<Id>(coo, pdst, true, off, order);
      for (size_t p = 0; p < k; ++p) off[p + 1] += off[p];
      std::vector<int64_t> fill(off.begin(), off.end() - 1);
      bucket_edges<Id>(coo, pdst, false, fill, order);
    });
    std::vector<int64_t>& fresh = out.new_edge[r];
    fresh.resize(order.size());
    for (size_t j = 0; j < order.size(); ++j) fresh[static_cast<size_t>(order[j])] = static_cast<int64_t>(j);
  }
  return out;
}

}  // namespace nodeweave::distributed
