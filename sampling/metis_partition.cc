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

// Calls fn(u, v) for the edges begin .. end - 1 of `rels` taken one after another as one edge list
// (rel_start: where each relation's edges start in it), ends in the homogeneous node ids.
template <typename F>
void for_edges(const std::vector<RelationSlice>& rels, const std::vector<int64_t>& rel_start,
               int64_t begin, int64_t end, const F& fn) {
  for (size_t r = 0; r < rels.size(); ++r) {
    const int64_t lo = std::max(begin, rel_start[r]), hi = std::min(end, rel_start[r + 1]);
    if (lo >= hi) continue;
    const RelationSlice& s = rels[r];
    const graph::CooArrays& coo = s.rel->coo();
    graph::dispatch_id(s.rel->id_dtype(), [&](auto* tag) {
      using Id = std::remove_pointer_t<decltype(tag)>;
      const Id* src = coo.src.data<Id>();
      const Id* dst = coo.dst.data<Id>();
      for (int64_t e = lo - rel_start[r]; e < hi - rel_start[r]; ++e)
        fn(s.src_offset + static_cast<int64_t>(src[e]), s.dst_offset + static_cast<int64_t>(dst[e]));
    });
  }
}

// The symmetric adjacency of `rels` with indices of type T (int64, or METIS' idx_t directly, which
// halves the memory and the traffic). Both scatter passes run in parallel: each thread counts,
// then fills, the rows of its own slice of the edge list at offsets of its own, so no two threads
// write one place; the per-row sort then makes the result independent of the thread count.
template <typename T>
void build_symmetric(const std::vector<RelationSlice>& rels, int64_t n, std::vector<int64_t>* indptr,
                     std::vector<T>* indices) {
  std::vector<int64_t> rel_start(rels.size() + 1, 0);
  for (size_t r = 0; r < rels.size(); ++r) {
    rel_start[r + 1] = rel_start[r] + rels[r].rel->num_edges();
    (void)rels[r].rel->coo();  // created (when lazily missing) before any thread reads it
  }
  const int64_t m = rel_start.back();
  // A count array per thread: at most as many threads as keep those arrays within the edge list's
  // size.
  const int64_t fit = n > 0 ? std::max<int64_t>(1, m / n) : 1;
  const int nt = static_cast<int>(
      std::min<int64_t>({static_cast<int64_t>(get_num_threads()), fit, m / 65536 + 1}));
  std::vector<std::vector<int64_t>> cursor(static_cast<size_t>(nt));
  const int64_t chunk = (m + nt - 1) / std::max(nt, 1);
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    std::vector<int64_t>& c = cursor[static_cast<size_t>(t)];
    c.assign(static_cast<size_t>(n), 0);
    for_edges(rels, rel_start, t * chunk, std::min(m, (t + 1) * chunk), [&](int64_t u, int64_t v) {
      if (u == v) return;  // METIS rejects self-loops
      ++c[static_cast<size_t>(u)];
      ++c[static_cast<size_t>(v)];
    });
  }
  indptr->assign(static_cast<size_t>(n + 1), 0);
  int64_t pos = 0;
  for (int64_t v = 0; v < n; ++v) {
    for (int t = 0; t < nt; ++t) {
      int64_t& c = cursor[static_cast<size_t>(t)][static_cast<size_t>(v)];
      const int64_t k = c;
      c = pos;
      pos += k;
    }
    (*indptr)[static_cast<size_t>(v) + 1] = pos;
  }
  std::vector<T>& raw = *indices;
  raw.resize(static_cast<size_t>(pos));
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    std::vector<int64_t>& c = cursor[static_cast<size_t>(t)];
    for_edges(rels, rel_start, t * chunk, std::min(m, (t + 1) * chunk), [&](int64_t u, int64_t v) {
      if (u == v) return;
      raw[static_cast<size_t>(c[static_cast<size_t>(u)]++)] = static_cast<T>(v);
      raw[static_cast<size_t>(c[static_cast<size_t>(v)]++)] = static_cast<T>(u);
    });
  }
  std::vector<std::vector<int64_t>>().swap(cursor);
  // Both directions of an undirected edge (and multi-edges) arrive twice: dedupe each row, which
  // also makes the adjacency independent of the edge order.
  std::vector<int64_t> kept(static_cast<size_t>(n), 0);
  const std::vector<int64_t>& ip = *indptr;
  parallel_for(0, n, 1024, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      auto first = raw.begin() + ip[i], last = raw.begin() + ip[i + 1];
      std::sort(first, last);
      kept[static_cast<size_t>(i)] = std::unique(first, last) - first;
    }
  });
  // Compact in place, rows in order: a row only ever moves towards the front.
  int64_t out = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t begin = (*indptr)[i];
    if (begin != out)
      std::copy(raw.begin() + begin, raw.begin() + begin + kept[static_cast<size_t>(i)],
                raw.begin() + out);
    (*indptr)[i] = out;
    out += kept[static_cast<size_t>(i)];
  }
  (*indptr)[n] = out;
  raw.resize(static_cast<size_t>(out));
}

void check_slices(const std::vector<RelationSlice>& rels, int64_t n) {
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
  check_slices(rels, n);
  SymmetricAdjacency adj;
  build_symmetric(rels, n, &adj.indptr, &adj.indices);
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

namespace {

constexpr int64_t kMaxIdx = std::numeric_limits<idx_t>::max();

void check_options(const MetisOptions& opt, int64_t n, const char* fn) {
  NW_CHECK(opt.num_parts >= 1, ValueError, fn, ": k (the number of parts) must be >= 1, got ",
           opt.num_parts);
  NW_CHECK(opt.num_parts <= std::max<int64_t>(n, 1), ValueError, fn,
           ": k (the number of parts) must be at most the number of nodes, ", n, ", got ",
           opt.num_parts);
  NW_CHECK(opt.seed >= 0 && opt.seed < kMaxIdx, ValueError, fn, ": seed must be a non-negative ",
           sizeof(idx_t) * 8, "-bit integer for METIS, got ", opt.seed);
  NW_CHECK(opt.mode == MetisMode::kKway || opt.objective == MetisObjective::kCut, ValueError, fn,
           ": the communication-volume objective needs k-way mode (recursive bisection minimises "
           "the edge cut)");
  if (!opt.node_weights.empty()) check_weights(opt, n, fn);
}

void check_size(int64_t n, int64_t entries, const char* fn) {
  NW_CHECK(n < kMaxIdx && entries < kMaxIdx, ValueError, fn, ": the graph (", n, " nodes, ",
           entries, " symmetric adjacency entries) is too large for METIS' ", sizeof(idx_t) * 8,
           "-bit indices");
}

// Runs METIS on a checked adjacency, in METIS' own integer type.
MetisResult run_metis(int64_t n, std::vector<idx_t>& xadj, std::vector<idx_t>& adjncy,
                      const MetisOptions& opt, const char* fn) {
  MetisResult result;
  if (opt.num_parts == 1) {
    result.part.assign(static_cast<size_t>(n), 0);
    return result;
  }
  const int64_t ncon = opt.node_weights.empty() ? 0 : opt.num_constraints;
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

}  // namespace

MetisResult metis_partition(SymmetricAdjacency&& adj, const MetisOptions& opt) {
  const char* fn = "metis_partition";
  const int64_t n = adj.num_nodes();
  check_options(opt, n, fn);
  check_size(n, adj.indptr[static_cast<size_t>(n)], fn);
  // Narrow, then free the int64 copy before METIS allocates its own coarsened graphs.
  std::vector<idx_t> xadj(adj.indptr.begin(), adj.indptr.end());
  release(adj.indptr);
  std::vector<idx_t> adjncy(adj.indices.begin(), adj.indices.end());
  release(adj.indices);
  return run_metis(n, xadj, adjncy, opt, fn);
}

MetisResult metis_partition(const std::vector<RelationSlice>& rels, int64_t num_nodes,
                            const MetisOptions& opt) {
  const char* fn = "metis_partition";
  check_slices(rels, num_nodes);
  check_options(opt, num_nodes, fn);
  check_size(num_nodes, 0, fn);
  std::vector<int64_t> indptr;
  std::vector<idx_t> adjncy;
  build_symmetric(rels, num_nodes, &indptr, &adjncy);
  check_size(num_nodes, indptr[static_cast<size_t>(num_nodes)], fn);
  std::vector<idx_t> xadj(indptr.begin(), indptr.end());
  release(indptr);
  return run_metis(num_nodes, xadj, adjncy, opt, fn);
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
  NW_CHECK(g.device().is_cpu(), ValueError, "metis_partition: the graph must be on the CPU, got ",
           g.device().str());
  return metis_partition({RelationSlice{&g, 0, 0}}, g.num_src(), opt).part;
}

}  // namespace nodeweave::sampling
