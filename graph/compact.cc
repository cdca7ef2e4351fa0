// Compaction: per node type, mark the endpoints, number the marked nodes, relabel every relation.
// Blocks of a fixed size are counted, then written at their prefix offsets, so the numbering is
// the same at any thread count.
#include "graph/compact.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <string>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "graph/id_hash_map.h"
#include "graph/subgraph.h"

namespace nodeweave::graph {

namespace {

constexpr const char* kFn = "compact_graphs";
constexpr int64_t kBlock = int64_t{1} << 16;

template <typename I>
struct Ends {
  const I* ids;
  int64_t length;
  int rel;
  const char* side;  // "src" or "dst", for messages
};

// Reports the first id of `e` outside [0, bound) as an IndexError.
template <typename I>
void check_ends(const Ends<I>& e, int64_t bound, int type) {
  std::atomic<int64_t> first_bad{std::numeric_limits<int64_t>::max()};
  parallel_for(0, e.length, kGrainSize, [&](int64_t b, int64_t end) {
    for (int64_t i = b; i < end; ++i) {
      if (e.ids[i] < 0 || e.ids[i] >= bound) {
        int64_t cur = first_bad.load();
        while (i < cur && !first_bad.compare_exchange_weak(cur, i)) {
        }
        return;
      }
    }
  });
  const int64_t bad = first_bad.load();
  NW_CHECK(bad == std::numeric_limits<int64_t>::max(), IndexError, kFn, ": relations[", e.rel, "].",
           e.side, "[", bad, "] = ", static_cast<int64_t>(e.ids[bad]),
           " is out of range: node type ", type, " has ", bound, " nodes");
}

// New ids of one node type: a dense id -> new id array, or a hash map when the type's endpoints
// are few against its node count.
template <typename I>
struct Numbering {
  bool dense = true;
  std::vector<I> new_id;
  IdHashMap map;
  std::vector<int64_t> ids;  // original id of each new node
};

template <typename I>
Numbering<I> number_dense(int64_t n, const std::vector<Ends<I>>& ends,
                          const std::vector<int64_t>& preserve) {
  Numbering<I> out;
  // Several threads may mark one node; relaxed atomic stores make that well-defined at the cost
  // of a plain store.
  std::unique_ptr<std::atomic<uint8_t>[]> mark(new std::atomic<uint8_t>[static_cast<size_t>(n)]());
  for (const Ends<I>& e : ends) {
    parallel_for(0, e.length, kGrainSize, [&](int64_t b, int64_t end) {
      for (int64_t i = b; i < end; ++i) mark[e.ids[i]].store(1, std::memory_order_relaxed);
    });
  }
  out.new_id.resize(static_cast<size_t>(n));
  for (int64_t id : preserve) {
    if (mark[id].load(std::memory_order_relaxed) == 2) continue;  // a repeat
    mark[id].store(2, std::memory_order_relaxed);
    out.new_id[id] = static_cast<I>(out.ids.size());
    out.ids.push_back(id);
  }
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<int64_t> offset(static_cast<size_t>(blocks) + 1, 0);
  parallel_for(0, blocks, 1, [&](int64_t bb, int64_t be) {
    for (int64_t b = bb; b < be; ++b) {
      int64_t c = 0;
      for (int64_t id = b * kBlock; id < std::min(n, (b + 1) * kBlock); ++id)
        c += mark[id].load(std::memory_order_relaxed) == 1;
      offset[b + 1] = c;
    }
  });
  offset[0] = static_cast<int64_t>(out.ids.size());
  for (int64_t b = 0; b < blocks; ++b) offset[b + 1] += offset[b];
  out.ids.resize(static_cast<size_t>(offset[blocks]));
  parallel_for(0, blocks, 1, [&](int64_t bb, int64_t be) {
    for (int64_t b = bb; b < be; ++b) {
      int64_t pos = offset[b];
      for (int64_t id = b * kBlock; id < std::min(n, (b + 1) * kBlock); ++id) {
        if (mark[id].load(std::memory_order_relaxed) != 1) continue;
        out.new_id[id] = static_cast<I>(pos);
        out.ids[pos++] = id;
      }
    }
  });
  return out;
}

template <typename I>
Numbering<I> number_sparse(const std::vector<Ends<I>>& ends, const std::vector<int64_t>& preserve) {
  Numbering<I> out;
  out.dense = false;
  std::vector<int64_t> used;
  for (const Ends<I>& e : ends) used.insert(used.end(), e.ids, e.ids + e.length);
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  out.map.reset(static_cast<int64_t>(preserve.size() + used.size()));
  // Preserved ids first; inserting an id again keeps its first number.
  for (int64_t id : preserve) out.map.insert(id);
  for (int64_t id : used) out.map.insert(id);
  out.ids = out.map.ids();
  return out;
}

template <typename I>
void relabel(const Numbering<I>& num, const IdArray& in, IdArray& out) {
  out = IdArray::empty(in.length, in.dtype);
  const I* src = in.data<I>();
  I* dst = out.data<I>();
  if (num.dense) {
    parallel_for(0, in.length, kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i] = num.new_id[src[i]];
    });
  } else {
    parallel_for(0, in.length, kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i] = static_cast<I>(num.map.find(src[i]));
    });
  }
}

void check_types(const std::vector<int64_t>& num_nodes, size_t r, int src_type, int dst_type) {
  const int types = static_cast<int>(num_nodes.size());
  for (int t : {src_type, dst_type}) {
    NW_CHECK(t >= 0 && t < types, ValueError, kFn, ": relations[", r, "] names node type ", t,
             "; there are ", types, " node types");
  }
}

template <typename I>
CompactedEdges compact(const std::vector<int64_t>& num_nodes,
                       const std::vector<TypedEdges>& relations,
                       const std::vector<std::vector<int64_t>>& always_preserve, bool trusted) {
  const int types = static_cast<int>(num_nodes.size());
  CompactedEdges out;
  out.edges.resize(relations.size());
  std::vector<Numbering<I>> nums(static_cast<size_t>(types));
  for (int t = 0; t < types; ++t) {
    std::vector<Ends<I>> ends;
    int64_t m = 0;
    for (size_t r = 0; r < relations.size(); ++r) {
      const TypedEdges& rel = relations[r];
      if (rel.src_type == t)
        ends.push_back({rel.edges.src.data<I>(), rel.edges.src.length, static_cast<int>(r), "src"});
      if (rel.dst_type == t)
        ends.push_back({rel.edges.dst.data<I>(), rel.edges.dst.length, static_cast<int>(r), "dst"});
    }
    for (const Ends<I>& e : ends) {
      if (!trusted) check_ends(e, num_nodes[t], t);
      m += e.length;
    }
    static const std::vector<int64_t> none;
    const std::vector<int64_t>& pre = always_preserve.empty() ? none : always_preserve[t];
    for (size_t i = 0; i < pre.size(); ++i) {
      NW_CHECK(pre[i] >= 0 && pre[i] < num_nodes[t], IndexError, kFn, ": always_preserve[", t, "][",
               i, "] = ", pre[i], " is out of range: node type ", t, " has ", num_nodes[t],
               " nodes");
    }
    // Dense costs O(nodes) and streams; sparse costs O(m log m) and hashes: dense pays from
    // about one endpoint per 16 nodes.
    nums[t] = m * 16 >= num_nodes[t] ? number_dense<I>(num_nodes[t], ends, pre)
                                     : number_sparse<I>(ends, pre);
  }
  for (size_t r = 0; r < relations.size(); ++r) {
    relabel(nums[relations[r].src_type], relations[r].edges.src, out.edges[r].src);
    relabel(nums[relations[r].dst_type], relations[r].edges.dst, out.edges[r].dst);
  }
  for (auto& n : nums) out.node_ids.push_back(std::move(n.ids));
  return out;
}

void check_common(const std::vector<int64_t>& num_nodes,
                  const std::vector<std::vector<int64_t>>& always_preserve, DType idtype) {
  check_id_dtype(idtype, "idtype");
  for (size_t t = 0; t < num_nodes.size(); ++t) {
    NW_CHECK(num_nodes[t] >= 0, ValueError, kFn, ": num_nodes[", t, "] must be >= 0, got ",
             num_nodes[t]);
  }
  NW_CHECK(always_preserve.empty() || always_preserve.size() == num_nodes.size(), ValueError, kFn,
           ": always_preserve must have one list per node type (", num_nodes.size(), "), got ",
           always_preserve.size());
}

CompactedEdges dispatch(const std::vector<int64_t>& num_nodes,
                        const std::vector<TypedEdges>& relations,
                        const std::vector<std::vector<int64_t>>& always_preserve, DType idtype,
                        bool trusted) {
  return dispatch_id(idtype, [&](auto* tag) {
    using I = std::remove_pointer_t<decltype(tag)>;
    return compact<I>(num_nodes, relations, always_preserve, trusted);
  });
}

}  // namespace

CompactedEdges compact_edges(const std::vector<int64_t>& num_nodes,
                             const std::vector<TypedEdges>& relations,
                             const std::vector<std::vector<int64_t>>& always_preserve,
                             DType idtype) {
  check_common(num_nodes, always_preserve, idtype);
  for (size_t r = 0; r < relations.size(); ++r) {
    const TypedEdges& rel = relations[r];
    check_types(num_nodes, r, rel.src_type, rel.dst_type);
    NW_CHECK(rel.edges.src.dtype == idtype && rel.edges.dst.dtype == idtype, TypeError, kFn,
             ": relations[", r, "] has ", dtype_name(rel.edges.src.dtype), "/",
             dtype_name(rel.edges.dst.dtype), " ids, expected ", dtype_name(idtype));
    NW_CHECK(rel.edges.src.length == rel.edges.dst.length, ValueError, kFn, ": relations[", r,
             "]: src has ", rel.edges.src.length, " ids but dst has ", rel.edges.dst.length);
    NW_CHECK(rel.edges.src.device().is_cpu() && rel.edges.dst.device().is_cpu(), ValueError, kFn,
             ": relations[", r, "] must be on the CPU");
  }
  return dispatch(num_nodes, relations, always_preserve, idtype, /*trusted=*/false);
}

CompactedRelations compact_relations(const std::vector<int64_t>& num_nodes,
                                     const std::vector<TypedRelation>& relations,
                                     const std::vector<std::vector<int64_t>>& always_preserve,
                                     DType idtype) {
  check_common(num_nodes, always_preserve, idtype);
  std::vector<TypedEdges> edges;
  for (size_t r = 0; r < relations.size(); ++r) {
    const TypedRelation& rel = relations[r];
    check_types(num_nodes, r, rel.src_type, rel.dst_type);
    NW_CHECK(rel.graph != nullptr, ValueError, kFn, ": relations[", r, "] has no graph");
    const RelationGraph& g = *rel.graph;
    NW_CHECK(g.id_dtype() == idtype, TypeError, kFn, ": relations[", r, "] has ",
             dtype_name(g.id_dtype()), " ids, expected ", dtype_name(idtype));
    NW_CHECK(g.num_src() == num_nodes[rel.src_type] && g.num_dst() == num_nodes[rel.dst_type],
             ValueError, kFn, ": relations[", r, "] has ", g.num_src(), " source and ", g.num_dst(),
             " destination nodes, but node types ", rel.src_type, " and ", rel.dst_type, " have ",
             num_nodes[rel.src_type], " and ", num_nodes[rel.dst_type]);
    NW_CHECK(g.device().is_cpu(), ValueError, kFn, ": relations[", r, "] must be on the CPU");
    edges.push_back({rel.src_type, rel.dst_type, edge_list(g)});
  }
  // A relation graph's ids were checked when it was built.
  CompactedEdges c = dispatch(num_nodes, edges, always_preserve, idtype, /*trusted=*/true);
  CompactedRelations out;
  for (size_t r = 0; r < relations.size(); ++r) {
    const auto ns = static_cast<int64_t>(c.node_ids[relations[r].src_type].size());
    const auto nd = static_cast<int64_t>(c.node_ids[relations[r].dst_type].size());
    out.graphs.push_back(RelationGraph::from_coo(ns, nd, c.edges[r].src, c.edges[r].dst));
  }
  out.node_ids = std::move(c.node_ids);
  return out;
}

}  // namespace nodeweave::graph
