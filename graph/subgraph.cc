// Subgraph extraction: choose between the edge scan and the row walk (see subgraph.h), pick the
// edges, build the result relation, and number the nodes (directly for the induced subgraph,
// through compaction for the others).
#include "graph/subgraph.h"

#include <algorithm>
#include <memory>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "graph/compact.h"
#include "graph/id_hash_map.h"

namespace nodeweave::graph {

namespace {

constexpr int64_t kEdgeBlock = int64_t{1} << 16;  // edges per counting block of the scan
constexpr int64_t kRowBlock = 256;                // rows per counting block of the walk

void check_ids(const char* fn, const char* name, const std::vector<int64_t>& ids, int64_t bound,
               const char* what) {
  for (size_t i = 0; i < ids.size(); ++i) {
    NW_CHECK(ids[i] >= 0 && ids[i] < bound, IndexError, fn, ": ", name, "[", i, "] = ", ids[i],
             " is out of range: the relation has ", bound, " ", what);
  }
}

// Membership of one side of the edges: every node, or the nodes of a list. The dense form is a
// bitset (2^20 nodes fit in 128 KiB, so the per-edge tests of a scan hit the L2 cache), with the
// nodes' positions in the list beside it only when the caller relabels through the list; the
// sparse form, for lists much shorter than the node count, is a hash map to positions.
template <typename I>
class NodeSet {
 public:
  NodeSet() = default;  // every node; position(id) == id

  // `positions`: position() is needed (then the list must be distinct).
  NodeSet(const std::vector<int64_t>& ids, int64_t num_nodes, bool distinct, bool positions,
          bool force_dense, const char* fn, const char* name)
      : all_(false) {
    dense_ = force_dense || static_cast<int64_t>(ids.size()) * 16 >= num_nodes;
    if (!dense_) {
      map_.reset(static_cast<int64_t>(ids.size()));
      for (int64_t id : ids) {
        const int64_t before = map_.size();
        map_.insert(id);
        NW_CHECK(!distinct || map_.size() > before, ValueError, fn, ": ", name, " holds node ", id,
                 " more than once");
      }
      return;
    }
    bits_.assign(static_cast<size_t>((num_nodes + 63) / 64), 0);
    for (int64_t id : ids) {
      uint64_t& word = bits_[id >> 6];
      const uint64_t bit = uint64_t{1} << (id & 63);
      NW_CHECK(!distinct || !(word & bit), ValueError, fn, ": ", name, " holds node ", id,
               " more than once");
      word |= bit;
    }
    if (positions) {
      pos_.reset(new I[static_cast<size_t>(num_nodes)]);  // read only at members
      for (size_t i = 0; i < ids.size(); ++i) pos_[ids[i]] = static_cast<I>(i);
    }
  }

  bool contains(int64_t id) const {
    if (all_) return true;
    return dense_ ? (bits_[id >> 6] >> (id & 63)) & 1 : map_.find(id) >= 0;
  }
  // The position of a member `id` in the list.
  int64_t position(int64_t id) const {
    if (all_) return id;
    return dense_ ? static_cast<int64_t>(pos_[id]) : map_.find(id);
  }

 private:
  bool all_ = true, dense_ = true;
  std::vector<uint64_t> bits_;
  std::unique_ptr<I[]> pos_;
  IdHashMap map_;
};

struct Picked {
  IdArray src, dst;  // endpoints, relabelled through the node sets or not
  std::vector<int64_t> eids;
};

Picked allocate(int64_t n, DType dt) {
  Picked p;
  p.src = IdArray::empty(n, dt);
  p.dst = IdArray::empty(n, dt);
  p.eids.resize(static_cast<size_t>(n));
  return p;
}

// Every edge of the list whose ends are in both sets, in edge-id order: count per block, then
// write at the blocks' prefix offsets. Where a good share of a block's edges pass, the writes are
// branch-free (a mispredicted branch per edge would cost more than the test): every edge is
// written at the cursor, which only advances past kept ones. Positions are looked up afterwards,
// for the kept edges only.
template <typename I>
Picked scan(const CooArrays& coo, const NodeSet<I>& s, const NodeSet<I>& d, bool relabel) {
  const int64_t n = coo.src.length;
  const I* src = coo.src.data<I>();
  const I* dst = coo.dst.data<I>();
  const int64_t blocks = (n + kEdgeBlock - 1) / kEdgeBlock;
  std::vector<int64_t> offset(static_cast<size_t>(blocks) + 1, 0);
  parallel_for(0, blocks, 1, [&](int64_t bb, int64_t be) {
    for (int64_t b = bb; b < be; ++b) {
      int64_t c = 0;
      for (int64_t e = b * kEdgeBlock; e < std::min(n, (b + 1) * kEdgeBlock); ++e)
        c += s.contains(src[e]) & d.contains(dst[e]);
      offset[b + 1] = c;
    }
  });
  for (int64_t b = 0; b < blocks; ++b) offset[b + 1] += offset[b];
  Picked p = allocate(offset[blocks], coo.src.dtype);
  I* ps = p.src.data<I>();
  I* pd = p.dst.data<I>();
  int64_t* pe = p.eids.data();
  parallel_for(0, blocks, 1, [&](int64_t bb, int64_t be) {
    for (int64_t b = bb; b < be; ++b) {
      int64_t w = offset[b];
      const int64_t end = offset[b + 1];
      const int64_t first = b * kEdgeBlock, last = std::min(n, (b + 1) * kEdgeBlock);
      if (8 * (end - w) < last - first || 8 * (end - w) > 7 * (last - first)) {
        // Few or most edges kept: the branch predicts well and saves the writes.
        for (int64_t e = first; e < last; ++e) {
          if (!(s.contains(src[e]) & d.contains(dst[e]))) continue;
          ps[w] = src[e];
          pd[w] = dst[e];
          pe[w++] = e;
        }
        continue;
      }
      for (int64_t e = first; e < last && w < end; ++e) {
        // The cursor stays below `end` while a kept edge is still to come, so these writes never
        // reach the next block's slots.
        ps[w] = src[e];
        pd[w] = dst[e];
        pe[w] = e;
        w += s.contains(src[e]) & d.contains(dst[e]);
      }
    }
  });
  if (relabel) {
    parallel_for(0, offset[blocks], kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        ps[i] = static_cast<I>(s.position(ps[i]));
        pd[i] = static_cast<I>(d.position(pd[i]));
      }
    });
  }
  return p;
}

// The entries of rows `rows` (distinct) of `adj` whose column is in `cols`, sorted by edge id.
// Row i of the list is relabelled to i.
template <typename I>
Picked walk(const CompressedArrays& adj, const std::vector<int64_t>& rows, const NodeSet<I>& cols,
            bool rows_are_src, bool relabel) {
  const I* indptr = adj.indptr.data<I>();
  const I* indices = adj.indices.data<I>();
  const I* eids = adj.eids.data<I>();
  const auto nr = static_cast<int64_t>(rows.size());
  const int64_t blocks = (nr + kRowBlock - 1) / kRowBlock;
  std::vector<int64_t> offset(static_cast<size_t>(blocks) + 1, 0);
  parallel_for(0, blocks, 4, [&](int64_t bb, int64_t be) {
    for (int64_t b = bb; b < be; ++b) {
      int64_t c = 0;
      for (int64_t i = b * kRowBlock; i < std::min(nr, (b + 1) * kRowBlock); ++i) {
        for (I k = indptr[rows[i]]; k < indptr[rows[i] + 1]; ++k) c += cols.contains(indices[k]);
      }
      offset[b + 1] = c;
    }
  });
  for (int64_t b = 0; b < blocks; ++b) offset[b + 1] += offset[b];
  struct Entry {
    int64_t eid;
    I row, col;
  };
  std::vector<Entry> picked(static_cast<size_t>(offset[blocks]));
  parallel_for(0, blocks, 4, [&](int64_t bb, int64_t be) {
    for (int64_t b = bb; b < be; ++b) {
      int64_t w = offset[b];
      for (int64_t i = b * kRowBlock; i < std::min(nr, (b + 1) * kRowBlock); ++i) {
        const int64_t r = rows[i];
        for (I k = indptr[r]; k < indptr[r + 1]; ++k) {
          if (!cols.contains(indices[k])) continue;
          picked[w++] = {static_cast<int64_t>(eids[k]), static_cast<I>(relabel ? i : r),
                         relabel ? static_cast<I>(cols.position(indices[k])) : indices[k]};
        }
      }
    }
  });
  std::sort(picked.begin(), picked.end(),
            [](const Entry& a, const Entry& b) { return a.eid < b.eid; });
  Picked p = allocate(offset[blocks], adj.indices.dtype);
  I* row_out = (rows_are_src ? p.src : p.dst).data<I>();
  I* col_out = (rows_are_src ? p.dst : p.src).data<I>();
  for (size_t j = 0; j < picked.size(); ++j) {
    row_out[j] = picked[j].row;
    col_out[j] = picked[j].col;
    p.eids[j] = picked[j].eid;
  }
  return p;
}

// Which way to find the edges. The walk needs its compressed format to exist already (building it
// costs a pass over every edge, as much as the scan) and pays when the rows hold few edges: a
// walked entry costs a hash lookup and a share of the sort, a scanned edge two array reads.
enum class Route { kScan, kSrcRows, kDstRows };

template <typename I>
int64_t row_entries(const CompressedArrays& adj, const std::vector<int64_t>& rows) {
  const I* indptr = adj.indptr.data<I>();
  int64_t n = 0;
  for (int64_t r : rows) n += static_cast<int64_t>(indptr[r + 1] - indptr[r]);
  return n;
}

template <typename I>
Route choose(const RelationGraph& g, const std::vector<int64_t>* src_rows,
             const std::vector<int64_t>* dst_rows) {
  const uint8_t made = g.created_formats();
  int64_t best = g.num_edges() + (src_rows ? g.num_src() : 0) + (dst_rows ? g.num_dst() : 0);
  Route route = Route::kScan;
  if (src_rows && (made & kCsr)) {
    const int64_t cost =
        8 * row_entries<I>(g.out_csr(), *src_rows) + 2 * static_cast<int64_t>(src_rows->size());
    if (cost < best) best = cost, route = Route::kSrcRows;
  }
  if (dst_rows && (made & kCsc)) {
    const int64_t cost =
        8 * row_entries<I>(g.in_csc(), *dst_rows) + 2 * static_cast<int64_t>(dst_rows->size());
    if (cost < best) route = Route::kDstRows;
  }
  return route;
}

RelationGraphPtr build(int64_t num_src, int64_t num_dst, const IdArray& src, const IdArray& dst) {
  return RelationGraph::from_coo(num_src, num_dst, src, dst);
}

// The result of edge/in/out subgraphs: nodes kept, or renumbered through compaction.
Subgraph finish(const RelationGraph& g, CooArrays edges, std::vector<int64_t>&& eids,
                Relabel relabel, const char* fn) {
  Subgraph out;
  out.eids = std::move(eids);
  if (relabel == Relabel::kKeep) {
    out.graph = build(g.num_src(), g.num_dst(), edges.src, edges.dst);
    return out;
  }
  const bool shared = relabel == Relabel::kShared;
  NW_CHECK(!shared || g.num_src() == g.num_dst(), ValueError, fn,
           ": a shared numbering of both sides needs as many source as destination nodes, got ",
           g.num_src(), " and ", g.num_dst());
  const std::vector<int64_t> counts =
      shared ? std::vector<int64_t>{g.num_src()} : std::vector<int64_t>{g.num_src(), g.num_dst()};
  CompactedEdges c =
      compact_edges(counts, {TypedEdges{0, shared ? 0 : 1, std::move(edges)}}, {}, g.id_dtype());
  out.src_nodes = std::move(c.node_ids[0]);
  out.dst_nodes = shared ? out.src_nodes : std::move(c.node_ids[1]);
  out.graph = build(static_cast<int64_t>(out.src_nodes.size()),
                    static_cast<int64_t>(out.dst_nodes.size()), c.edges[0].src, c.edges[0].dst);
  return out;
}

void check_cpu(const RelationGraph& g, const char* fn) {
  NW_CHECK(g.device().is_cpu(), ValueError, fn, ": the relation must be on the CPU, got ",
           g.device().str());
}

template <typename I>
Subgraph induced(const RelationGraph& g, const std::vector<int64_t>& src_nodes,
                 const std::vector<int64_t>& dst_nodes, bool relabel) {
  const char* fn = "node_subgraph";
  check_ids(fn, "src_nodes", src_nodes, g.num_src(), "source nodes");
  check_ids(fn, "dst_nodes", dst_nodes, g.num_dst(), "destination nodes");
  Picked p;
  switch (choose<I>(g, &src_nodes, &dst_nodes)) {
    case Route::kScan: {
      const NodeSet<I> s(src_nodes, g.num_src(), true, relabel, true, fn, "src_nodes");
      // A relation from a node type to itself gets one list for both sides: one set serves both.
      const bool same = &src_nodes == &dst_nodes && g.num_src() == g.num_dst();
      const NodeSet<I> d =
          same ? NodeSet<I>()
               : NodeSet<I>(dst_nodes, g.num_dst(), true, relabel, true, fn, "dst_nodes");
      p = scan(edge_list(g), s, same ? s : d, relabel);
      break;
    }
    case Route::kSrcRows: {
      // Built only to refuse a repeated row, which the walk would list twice.
      const NodeSet<I> rows(src_nodes, g.num_src(), true, false, false, fn, "src_nodes");
      const NodeSet<I> d(dst_nodes, g.num_dst(), true, relabel, false, fn, "dst_nodes");
      p = walk(g.out_csr(), src_nodes, d, true, relabel);
      break;
    }
    case Route::kDstRows: {
      // Built only to refuse a repeated row, which the walk would list twice.
      const NodeSet<I> rows(dst_nodes, g.num_dst(), true, false, false, fn, "dst_nodes");
      const NodeSet<I> s(src_nodes, g.num_src(), true, relabel, false, fn, "src_nodes");
      p = walk(g.in_csc(), dst_nodes, s, false, relabel);
      break;
    }
  }
  Subgraph out;
  out.eids = std::move(p.eids);
  if (relabel) {
    out.src_nodes = src_nodes;
    out.dst_nodes = dst_nodes;
  }
  out.graph = build(relabel ? static_cast<int64_t>(src_nodes.size()) : g.num_src(),
                    relabel ? static_cast<int64_t>(dst_nodes.size()) : g.num_dst(), p.src, p.dst);
  return out;
}

template <typename I>
Subgraph neighbors(const RelationGraph& g, const std::vector<int64_t>& nodes, Relabel relabel,
                   bool in_edges) {
  const char* fn = in_edges ? "in_subgraph" : "out_subgraph";
  const int64_t side = in_edges ? g.num_dst() : g.num_src();
  check_ids(fn, "nodes", nodes, side, in_edges ? "destination nodes" : "source nodes");
  Picked p;
  const Route route = in_edges ? choose<I>(g, nullptr, &nodes) : choose<I>(g, &nodes, nullptr);
  if (route == Route::kScan) {
    const NodeSet<I> set(nodes, side, false, false, true, fn, "nodes"), every;
    p = in_edges ? scan(edge_list(g), every, set, false) : scan(edge_list(g), set, every, false);
  } else {
    std::vector<int64_t> rows = nodes;  // a repeated node must not repeat its edges
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    p = walk(in_edges ? g.in_csc() : g.out_csr(), rows, NodeSet<I>(), !in_edges, false);
  }
  return finish(g, CooArrays{p.src, p.dst}, std::move(p.eids), relabel, fn);
}

template <typename I>
Subgraph edges_by_id(const RelationGraph& g, const std::vector<int64_t>& eids, Relabel relabel) {
  const char* fn = "edge_subgraph";
  check_ids(fn, "eids", eids, g.num_edges(), "edges");
  const CooArrays coo = edge_list(g);
  const I* src = coo.src.data<I>();
  const I* dst = coo.dst.data<I>();
  const auto n = static_cast<int64_t>(eids.size());
  CooArrays picked{IdArray::empty(n, g.id_dtype()), IdArray::empty(n, g.id_dtype())};
  I* ps = picked.src.data<I>();
  I* pd = picked.dst.data<I>();
  parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      ps[i] = src[eids[i]];
      pd[i] = dst[eids[i]];
    }
  });
  return finish(g, std::move(picked), std::vector<int64_t>(eids), relabel, fn);
}

template <typename F>
Subgraph dispatch(const RelationGraph& g, const char* fn, const F& f) {
  check_cpu(g, fn);
  return dispatch_id(g.id_dtype(), f);
}

}  // namespace

CooArrays edge_list(const RelationGraph& g) {
  check_cpu(g, "edge_list");
  if (g.allowed_formats() & kCoo) return g.coo();
  if (g.created_formats() & kCsr) return compressed_to_coo(g.out_csr(), g.num_src());
  const CooArrays t = compressed_to_coo(g.in_csc(), g.num_dst());  // (dst, src) per edge
  return CooArrays{t.dst, t.src};
}

Subgraph induced_subgraph(const RelationGraph& g, const std::vector<int64_t>& src_nodes,
                          const std::vector<int64_t>& dst_nodes, bool relabel) {
  return dispatch(g, "node_subgraph", [&](auto* tag) {
    using I = std::remove_pointer_t<decltype(tag)>;
    return induced<I>(g, src_nodes, dst_nodes, relabel);
  });
}

Subgraph edge_subgraph(const RelationGraph& g, const std::vector<int64_t>& eids, Relabel relabel) {
  return dispatch(g, "edge_subgraph", [&](auto* tag) {
    using I = std::remove_pointer_t<decltype(tag)>;
    return edges_by_id<I>(g, eids, relabel);
  });
}

Subgraph in_subgraph(const RelationGraph& g, const std::vector<int64_t>& nodes, Relabel relabel) {
  return dispatch(g, "in_subgraph", [&](auto* tag) {
    using I = std::remove_pointer_t<decltype(tag)>;
    return neighbors<I>(g, nodes, relabel, true);
  });
}

Subgraph out_subgraph(const RelationGraph& g, const std::vector<int64_t>& nodes, Relabel relabel) {
  return dispatch(g, "out_subgraph", [&](auto* tag) {
    using I = std::remove_pointer_t<decltype(tag)>;
    return neighbors<I>(g, nodes, relabel, false);
  });
}

}  // namespace nodeweave::graph
