// METIS partitioning: symmetrize one or several relations, narrow to METIS' idx_t, partition.
#include "sampling/metis_partition.h"

#include <metis.h>

#include <algorithm>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::sampling {

namespace {

// Adds one relation's edges, both directions, self-loops dropped: count == true tallies row sizes
// into cursor[row + 1], count == false writes neighbours at cursor[row]++.
template <typename Id>
void scatter_ends(const graph::CooArrays& coo, int64_t so, int64_t dof, bool count,
                  std::vector<int64_t>& cursor, std::vector<int64_t>& raw) {
  const Id* src = coo.src.data<Id>();
  const Id* dst = coo.dst.data<Id>();
  const int64_t m = coo.src.length;
  for (int64_t e = 0; e < m; ++e) {
    const int64_t u = so + src[e], v = dof + dst[e];
    if (u == v) continue;  // METIS rejects self-loops
    if (count) {
      ++cursor[static_cast<size_t>(u) + 1];
      ++cursor[static_cast<size_t>(v) + 1];
    } else {
      raw[static_cast<size_t>(cursor[u]++)] = v;
      raw[static_cast<size_t>(cursor[v]++)] = u;
    }
  }
}

// GKlib's random generator behind METIS is process-global state that METIS reseeds on entry:
// two concurrent partitions would interleave draws and lose their determinism.
std::mutex& metis_mutex() {
  static std::mutex mu;
  return mu;
}

const char* metis_status_name(int status) {
  switch (status) {
    case METIS_ERROR_INPUT:
      return "METIS_ERROR_INPUT";
    case METIS_ERROR_MEMORY:
      return "METIS_ERROR_MEMORY";
    default:
      return "METIS_ERROR";
  }
}

void check_weights(const MetisOptions& opt, int64_t n, const char* fn) {
  const int64_t ncon = opt.num_constraints;
  NW_CHECK(ncon >= 1 && static_cast<int64_t>(opt.node_weights.size()) == n * ncon, ValueError, fn,
           ": node weights must hold num_nodes x num_constraints = ", n, " x ", opt.num_constraints,
           " values, got ", opt.node_weights.size());
  // Sums per constraint must fit METIS' idx_t as well (int64 cannot overflow here: at most
  // 2^31 nodes of weight below 2^31).
  std::vector<int64_t> total(static_cast<size_t>(ncon), 0);
  for (int64_t i = 0; i < n * ncon; ++i) {
    const int64_t w = opt.node_weights[static_cast<size_t>(i)];
    NW_CHECK(w >= 0 && w < std::numeric_limits<idx_t>::max(), ValueError, fn,
             ": node weights must be non-negative ", sizeof(idx_t) * 8, "-bit integers, got ", w,
             " for node ", i / ncon);
    total[static_cast<size_t>(i % ncon)] += w;
  }
  for (int64_t c = 0; c < ncon; ++c) {
    NW_CHECK(total[static_cast<size_t>(c)] > 0, ValueError, fn, ": node weight constraint ", c,
             " is zero for every node; METIS cannot balance it");
    NW_CHECK(total[static_cast<size_t>(c)] < std::numeric_limits<idx_t>::max(), ValueError, fn,
             ": node weight constraint ", c, " sums to ", total[static_cast<size_t>(c)],
             ", beyond METIS' ", sizeof(idx_t) * 8, "-bit integers");
  }
}

template <typename T>
void release(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

}  // namespace

SymmetricAdjacency symmetric_adjacency(const std::vector<RelationSlice>& rels, int64_t n) {
  NW_CHECK(n >= 0, ValueError, "symmetric_adjacency: num_nodes must be >= 0, got ", n);
  for (size_t r = 0; r < rels.size(); ++r) {
    const RelationSlice& s = rels[r];
    NW_CHECK(s.rel != nullptr, ValueError, "symmetric_adjacency: relation ", r, " is null");
    NW_CHECK(s.rel->device().is_cpu(), ValueError, "symmetric_adjacency: relation ", r,
             " must be on the CPU, got ", s.rel->device().str());
    NW_CHECK(s.src_offset >= 0 && s.dst_offset >= 0 && s.src_offset + s.rel->num_src() <= n &&
                 s.dst_offset + s.rel->num_dst() <= n,
             ValueError, "symmetric_adjacency: relation ", r, " (", s.rel->num_src(), " x ",
             s.rel->num_dst(), " nodes at offsets ", s.src_offset, ", ", s.dst_offset,
             ") reaches past the ", n, " nodes");
  }
  SymmetricAdjacency adj;
  adj.indptr.assign(static_cast<size_t>(n + 1), 0);
  std::vector<int64_t> raw;
  for (bool count : {true, false}) {
    if (!count) {
      for (int64_t i = 0; i < n; ++i) adj.indptr[i + 1] += adj.indptr[i];
      raw.resize(static_cast<size_t>(adj.indptr[n]));
    }
    std::vector<int64_t>& cursor = adj.indptr;
    std::vector<int64_t> fill;
    if (!count) fill.assign(adj.indptr.begin(), adj.indptr.end() - 1);
    for (const RelationSlice& s : rels) {
      const graph::CooArrays& coo = s.rel->coo();
      graph::dispatch_id(s.rel->id_dtype(), [&](auto* tag) {
        using Id = std::remove_pointer_t<decltype(tag)>;
        scatter_ends<Id>(coo, s.src_offset, s.dst_offset, count, count ? cursor : fill, raw);
      });
    }
  }
  // Both directions of an undirected edge (and multi-edges) arrive twice: dedupe each row, which
  // also makes the adjacency independent of the edge order.
  std::vector<int64_t> kept(static_cast<size_t>(n), 0);
  parallel_for(0, n, 1024, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      auto first = raw.begin() + adj.indptr[i], last = raw.begin() + adj.indptr[i + 1];
      std::sort(first, last);
      kept[static_cast<size_t>(i)] = std::unique(first, last) - first;
    }
  });
  // Compact in place, rows in order: a row only ever moves towards the front.
  int64_t out = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t begin = adj.indptr[i];
    if (begin != out)
      std::copy(raw.begin() + begin, raw.begin() + begin + kept[static_cast<size_t>(i)],
                raw.begin() + out);
    adj.indptr[i] = out;
    out += kept[static_cast<size_t>(i)];
  }
  adj.indptr[n] = out;
  raw.resize(static_cast<size_t>(out));
  adj.indices = std::move(raw);
  return adj;
}

SymmetricAdjacency symmetric_adjacency(const graph::RelationGraph& g) {
  NW_CHECK(g.num_src() == g.num_dst(), ValueError,
           "metis_partition: the graph must have one node type (a square relation), got ",
           g.num_src(), " source and ", g.num_dst(), " destination nodes");
  NW_CHECK(g.device().is_cpu(), ValueError, "metis_partition: the graph must be on the CPU, got ",
           g.device().str());
  return symmetric_adjacency({RelationSlice{&g, 0, 0}}, g.num_src());
}

MetisResult metis_partition(SymmetricAdjacency&& adj, const MetisOptions& opt) {
  const char* fn = "metis_partition";
  const int64_t n = adj.num_nodes();
  NW_CHECK(opt.num_parts >= 1, ValueError, fn, ": k (the number of parts) must be >= 1, got ",
           opt.num_parts);
  NW_CHECK(opt.num_parts <= std::max<int64_t>(n, 1), ValueError, fn,
           ": k (the number of parts) must be at most the number of nodes, ", n, ", got ",
           opt.num_parts);
  NW_CHECK(opt.seed >= 0 && opt.seed < std::numeric_limits<idx_t>::max(), ValueError, fn,
           ": seed must be a non-negative ", sizeof(idx_t) * 8, "-bit integer for METIS, got ",
           opt.seed);
  NW_CHECK(opt.mode == MetisMode::kKway || opt.objective == MetisObjective::kCut, ValueError, fn,
           ": the communication-volume objective needs k-way mode (recursive bisection minimises "
           "the edge cut)");
  const int64_t ncon = opt.node_weights.empty() ? 0 : opt.num_constraints;
  if (!opt.node_weights.empty()) check_weights(opt, n, fn);
  constexpr int64_t kMaxIdx = std::numeric_limits<idx_t>::max();
  NW_CHECK(n < kMaxIdx && adj.indptr[n] < kMaxIdx, ValueError, fn, ": the graph (", n, " nodes, ",
           adj.indptr[n], " symmetric adjacency entries) is too large for METIS' ",
           sizeof(idx_t) * 8, "-bit indices");
  MetisResult result;
  if (opt.num_parts == 1) {
    result.part.assign(static_cast<size_t>(n), 0);
    return result;
  }
  // Narrow, then free the int64 copy before METIS allocates its own coarsened graphs.
  std::vector<idx_t> xadj(adj.indptr.begin(), adj.indptr.end());
  release(adj.indptr);
  std::vector<idx_t> adjncy(adj.indices.begin(), adj.indices.end());
  release(adj.indices);
  std::vector<idx_t> vwgt(opt.node_weights.begin(), opt.node_weights.end());
  idx_t nvtxs = static_cast<idx_t>(n), nparts = static_cast<idx_t>(opt.num_parts);
  idx_t ncon_m = static_cast<idx_t>(std::max<int64_t>(ncon, 1)), objval = 0;
  std::vector<idx_t> part(static_cast<size_t>(n), 0);
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(opt.seed);
  options[METIS_OPTION_NUMBERING] = 0;
  options[METIS_OPTION_OBJTYPE] =
      opt.objective == MetisObjective::kCut ? METIS_OBJTYPE_CUT : METIS_OBJTYPE_VOL;
  // An edgeless graph's adjncy may have a null data(); METIS is handed a valid (unread) address.
  idx_t dummy = 0;
  idx_t* adjncy_ptr = adjncy.empty() ? &dummy : adjncy.data();
  int status;
  {
    std::lock_guard<std::mutex> lock(metis_mutex());
    auto call = opt.mode == MetisMode::kKway ? METIS_PartGraphKway : METIS_PartGraphRecursive;
    status = call(&nvtxs, &ncon_m, xadj.data(), adjncy_ptr, vwgt.empty() ? nullptr : vwgt.data(),
                  /*vsize=*/nullptr, /*adjwgt=*/nullptr, &nparts, /*tpwgts=*/nullptr,
                  /*ubvec=*/nullptr, options, &objval, part.data());
  }
  if (status == METIS_ERROR_INPUT)
    throw ValueError(str_cat(fn, ": METIS rejected the input (", metis_status_name(status), ")"));
  if (status != METIS_OK)
    throw std::runtime_error(
        str_cat(fn, ": METIS failed (", metis_status_name(status), ", code ", status, ")"));
  result.part.assign(part.begin(), part.end());
  result.objective_value = objval;
  return result;
}

std::vector<int64_t> metis_partition(const graph::RelationGraph& g, const MetisOptions& opt) {
  // The square/CPU checks of symmetric_adjacency come after the argument checks callers see first.
  NW_CHECK(opt.num_parts >= 1, ValueError,
           "metis_partition: k (the number of parts) must be >= 1, got ", opt.num_parts);
  NW_CHECK(g.num_src() == g.num_dst(), ValueError,
           "metis_partition: the graph must have one node type (a square relation), got ",
           g.num_src(), " source and ", g.num_dst(), " destination nodes");
  NW_CHECK(opt.num_parts <= g.num_src(), ValueError,
           "metis_partition: k (the number of parts) must be at most the number of nodes, ",
           g.num_src(), ", got ", opt.num_parts);
  return metis_partition(symmetric_adjacency(g), opt).part;
}

}  // namespace nodeweave::sampling
