// RelationGraph: validation at construction, lazily created formats, cheap structural views.
#include "graph/relation_graph.h"

#include <atomic>
#include <limits>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::graph {

std::string formats_str(uint8_t formats) {
  std::string s;
  const char* names[] = {"coo", "csr", "csc"};
  for (int i = 0; i < 3; ++i) {
    if (formats & (1u << i)) s += (s.empty() ? "" : ", ") + std::string(names[i]);
  }
  return s.empty() ? "none" : s;
}

namespace {

// Finds the first id outside [0, bound) and reports it; parallel scan, serial report.
template <typename I>
void check_ids(const IdArray& ids, int64_t bound, const char* what, const char* bound_what) {
  const I* p = ids.data<I>();
  std::atomic<int64_t> first_bad{std::numeric_limits<int64_t>::max()};
  parallel_for(0, ids.length, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (p[i] < 0 || p[i] >= bound) {
        int64_t cur = first_bad.load();
        while (i < cur && !first_bad.compare_exchange_weak(cur, i)) {
        }
        return;
      }
    }
  });
  const int64_t bad = first_bad.load();
  if (bad != std::numeric_limits<int64_t>::max()) {
    throw ValueError(str_cat(what, "[", bad, "] = ", static_cast<int64_t>(p[bad]),
                             p[bad] < 0 ? " is negative" : " is out of range", ": the graph has ",
                             bound, " ", bound_what));
  }
}

void check_counts(int64_t num_src, int64_t num_dst, int64_t num_edges, DType dtype) {
  NW_CHECK(num_src >= 0 && num_dst >= 0, ValueError, "num_nodes must be non-negative, got ",
           num_src, " source and ", num_dst, " destination nodes");
  if (dtype == DType::Int32) {
    constexpr int64_t lim = std::numeric_limits<int32_t>::max();
    NW_CHECK(num_src <= lim && num_dst <= lim && num_edges <= lim, ValueError,
             "int32 ids hold at most 2^31-1 nodes and edges; got ", std::max(num_src, num_dst),
             " nodes and ", num_edges, " edges (use idtype int64)");
  }
}

}  // namespace

RelationGraph::RelationGraph(int64_t num_src, int64_t num_dst, int64_t num_edges, DType id_dtype,
                             Device device, uint8_t allowed)
    : num_src_(num_src),
      num_dst_(num_dst),
      num_edges_(num_edges),
      id_dtype_(id_dtype),
      device_(device),
      allowed_(allowed) {}

RelationGraphPtr RelationGraph::from_coo(int64_t num_src, int64_t num_dst, IdArray src, IdArray dst,
                                         uint8_t allowed) {
  NW_CHECK(src.length == dst.length, ValueError, "src and dst must have the same length, got ",
           src.length, " and ", dst.length);
  check_id_dtype(src.dtype, "src");
  check_id_dtype(dst.dtype, "dst");
  NW_CHECK(src.dtype == dst.dtype, TypeError, "src and dst must have the same id dtype, got ",
           dtype_name(src.dtype), " and ", dtype_name(dst.dtype));
  NW_CHECK(src.device().is_cpu() && dst.device().is_cpu(), ValueError,
           "graphs are built on the CPU (move them with to())");
  NW_CHECK((allowed & kAllFormats) != 0, ValueError, "formats must name at least one format");
  check_counts(num_src, num_dst, src.length, src.dtype);
  dispatch_id(src.dtype, [&](auto* p) {
    using I = std::remove_pointer_t<decltype(p)>;
    check_ids<I>(src, num_src, "src", "source nodes");
    check_ids<I>(dst, num_dst, "dst", "destination nodes");
  });
  auto g = std::shared_ptr<RelationGraph>(
      new RelationGraph(num_src, num_dst, src.length, src.dtype, Device{}, allowed & kAllFormats));
  CooArrays coo{std::move(src), std::move(dst)};
  // COO is the input format; when it is not allowed, keep the cheapest allowed one instead.
  if (allowed & kCoo) {
    g->coo_ = std::move(coo);
  } else if (allowed & kCsc) {
    g->csc_ = coo_to_compressed(coo.dst, coo.src, num_dst);
  } else {
    g->csr_ = coo_to_compressed(coo.src, coo.dst, num_src);
  }
  return g;
}

RelationGraphPtr RelationGraph::from_csr(int64_t num_src, int64_t num_dst, IdArray indptr,
                                         IdArray indices, IdArray eids, uint8_t allowed) {
  check_id_dtype(indptr.dtype, "indptr");
  NW_CHECK(indptr.dtype == indices.dtype, TypeError,
           "indptr and indices must have the same id dtype, got ", dtype_name(indptr.dtype),
           " and ", dtype_name(indices.dtype));
  NW_CHECK(indptr.length == num_src + 1, ValueError, "indptr must have num_src + 1 = ", num_src + 1,
           " entries, got ", indptr.length);
  NW_CHECK((allowed & kAllFormats) != 0, ValueError, "formats must name at least one format");
  const int64_t n = indices.length;
  check_counts(num_src, num_dst, n, indptr.dtype);
  dispatch_id(indptr.dtype, [&](auto* p) {
    using I = std::remove_pointer_t<decltype(p)>;
    const I* ip = indptr.data<I>();
    NW_CHECK(ip[0] == 0 && static_cast<int64_t>(ip[num_src]) == n, ValueError,
             "indptr must start at 0 and end at the number of indices (", n, "), got ", ip[0],
             " and ", ip[num_src]);
    for (int64_t r = 0; r < num_src; ++r) {
      NW_CHECK(ip[r] <= ip[r + 1], ValueError, "indptr must be non-decreasing: indptr[", r,
               "] = ", ip[r], " > indptr[", r + 1, "] = ", ip[r + 1]);
    }
    check_ids<I>(indices, num_dst, "indices", "destination nodes");
  });
  if (eids.length == 0 && n > 0) {
    eids = IdArray::empty(n, indptr.dtype);
    dispatch_id(indptr.dtype, [&](auto* p) {
      using I = std::remove_pointer_t<decltype(p)>;
      I* d = eids.data<I>();
      for (int64_t i = 0; i < n; ++i) d[i] = static_cast<I>(i);
    });
  } else {
    NW_CHECK(eids.length == n && eids.dtype == indptr.dtype, ValueError, "eids must have one ",
             dtype_name(indptr.dtype), " entry per index (", n, "), got ", eids.length, " ",
             dtype_name(eids.dtype));
    // eids must be a permutation of 0..n-1, or COO conversion would write out of bounds.
    dispatch_id(indptr.dtype, [&](auto* p) {
      using I = std::remove_pointer_t<decltype(p)>;
      const I* d = eids.data<I>();
      std::vector<char> seen(static_cast<size_t>(n), 0);
      for (int64_t i = 0; i < n; ++i) {
        NW_CHECK(d[i] >= 0 && d[i] < n && !seen[d[i]], ValueError,
                 "eids must be a permutation of 0..", n - 1, "; eids[", i, "] = ", d[i]);
        seen[d[i]] = 1;
      }
    });
  }
  auto g = std::shared_ptr<RelationGraph>(
      new RelationGraph(num_src, num_dst, n, indptr.dtype, Device{}, allowed & kAllFormats));
  g->csr_ = CompressedArrays{std::move(indptr), std::move(indices), std::move(eids)};
  if (!(allowed & kCsr)) {
    g->coo();  // materialize an allowed format, then drop the CSR
    if (allowed & kCsc) g->in_csc();
    g->csr_.reset();
  }
  return g;
}

uint8_t RelationGraph::created_formats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return (coo_ ? kCoo : 0) | (csr_ ? kCsr : 0) | (csc_ ? kCsc : 0);
}

void RelationGraph::check_allowed(uint8_t fmt, const char* what) const {
  NW_CHECK(allowed_ & fmt, ValueError, "the ", what, " format is not allowed for this graph (",
           "formats: ", formats_str(allowed_), "); create it with formats including '", what, "'");
}

namespace {
// Why not convert on the device: the CUDA graph is made by to(), which builds every allowed
// format first, so a missing format on a GPU graph means it was not allowed.
void require_cpu(Device d) {
  NW_CHECK(d.is_cpu(), ValueError,
           "graph formats are created on the CPU; this format was not built before to(", d.str(),
           ")");
}
}  // namespace

const CooArrays& RelationGraph::coo() const {
  check_allowed(kCoo, "coo");
  std::lock_guard<std::mutex> lock(mu_);
  if (!coo_) {
    require_cpu(device_);
    if (csr_) {
      coo_ = compressed_to_coo(*csr_, num_src_);
    } else {
      CooArrays t = compressed_to_coo(*csc_, num_dst_);
      coo_ = CooArrays{std::move(t.dst), std::move(t.src)};
    }
  }
  return *coo_;
}

const CompressedArrays& RelationGraph::out_csr() const {
  check_allowed(kCsr, "csr");
  std::lock_guard<std::mutex> lock(mu_);
  if (!csr_) {
    require_cpu(device_);
    if (coo_) {
      csr_ = coo_to_compressed(coo_->src, coo_->dst, num_src_);
    } else {
      CooArrays t = compressed_to_coo(*csc_, num_dst_);  // (dst, src) per edge
      csr_ = coo_to_compressed(t.dst, t.src, num_src_);
    }
  }
  return *csr_;
}

const CompressedArrays& RelationGraph::in_csc() const {
  check_allowed(kCsc, "csc");
  std::lock_guard<std::mutex> lock(mu_);
  if (!csc_) {
    require_cpu(device_);
    if (coo_) {
      csc_ = coo_to_compressed(coo_->dst, coo_->src, num_dst_);
    } else {
      CooArrays t = compressed_to_coo(*csr_, num_src_);
      csc_ = coo_to_compressed(t.dst, t.src, num_dst_);
    }
  }
  return *csc_;
}

namespace {
IdArray histogram(const IdArray& ids, int64_t n) {
  IdArray out = IdArray::empty(n, DType::Int64);
  int64_t* d = out.data<int64_t>();
  std::fill(d, d + n, 0);
  dispatch_id(ids.dtype, [&](auto* p) {
    using I = std::remove_pointer_t<decltype(p)>;
    const I* v = ids.data<I>();
    for (int64_t i = 0; i < ids.length; ++i) ++d[v[i]];
  });
  return out;
}
}  // namespace

IdArray RelationGraph::in_degrees() const {
  NW_CHECK(device_.is_cpu(), ValueError, "in_degrees: move the graph to the CPU first");
  uint8_t made = created_formats();
  if ((made & kCsc) || !(allowed_ & kCoo)) {
    if (allowed_ & kCsc) return degrees_from_indptr(in_csc().indptr);
  }
  return histogram(coo().dst, num_dst_);
}

IdArray RelationGraph::out_degrees() const {
  NW_CHECK(device_.is_cpu(), ValueError, "out_degrees: move the graph to the CPU first");
  uint8_t made = created_formats();
  if ((made & kCsr) || !(allowed_ & kCoo)) {
    if (allowed_ & kCsr) return degrees_from_indptr(out_csr().indptr);
  }
  return histogram(coo().src, num_src_);
}

RelationGraphPtr RelationGraph::reverse() const {
  auto g = std::shared_ptr<RelationGraph>(
      new RelationGraph(num_dst_, num_src_, num_edges_, id_dtype_, device_,
                        static_cast<uint8_t>((allowed_ & kCoo) | ((allowed_ & kCsr) ? kCsc : 0) |
                                             ((allowed_ & kCsc) ? kCsr : 0))));
  std::lock_guard<std::mutex> lock(mu_);
  if (coo_) g->coo_ = CooArrays{coo_->dst, coo_->src};
  if (csr_) g->csc_ = csr_;
  if (csc_) g->csr_ = csc_;
  g->reverse_of_ = shared_from_this();
  return g;
}

RelationGraphPtr RelationGraph::reverse_for_kernels() const {
  if ((allowed_ & kCsr) && device_.is_cpu()) out_csr();  // a no-op once it exists
  return reverse();
}

RelationGraphPtr RelationGraph::with_formats(uint8_t formats) const {
  formats &= kAllFormats;
  NW_CHECK(formats != 0, ValueError, "formats must name at least one of coo, csr, csc");
  // Make sure one requested format exists before sharing.
  uint8_t made = created_formats();
  if (!(made & formats)) {
    NW_CHECK(device_.is_cpu(), ValueError, "formats(): convert on the CPU before moving the graph");
    auto tmp = std::shared_ptr<RelationGraph>(
        new RelationGraph(num_src_, num_dst_, num_edges_, id_dtype_, device_, kAllFormats));
    {
      std::lock_guard<std::mutex> lock(mu_);
      tmp->coo_ = coo_;
      tmp->csr_ = csr_;
      tmp->csc_ = csc_;
    }
    if (formats & kCsc)
      tmp->in_csc();
    else if (formats & kCsr)
      tmp->out_csr();
    else
      tmp->coo();
    tmp->same_edges_as_ = shared_from_this();
    return tmp->with_formats(formats);
  }
  auto g = std::shared_ptr<RelationGraph>(
      new RelationGraph(num_src_, num_dst_, num_edges_, id_dtype_, device_, formats));
  g->same_edges_as_ = shared_from_this();
  std::lock_guard<std::mutex> lock(mu_);
  if (coo_ && (formats & kCoo)) g->coo_ = coo_;
  if (csr_ && (formats & kCsr)) g->csr_ = csr_;
  if (csc_ && (formats & kCsc)) g->csc_ = csc_;
  return g;
}

RelationGraphPtr RelationGraph::to(Device device) const {
  if (device == device_) return shared_from_this();
  if (device_.is_cpu()) {
    // Everything a kernel may ask for must exist before the arrays leave the CPU.
    if (allowed_ & kCoo) coo();
    if (allowed_ & kCsr) out_csr();
    if (allowed_ & kCsc) in_csc();
  }
  auto g = std::shared_ptr<RelationGraph>(
      new RelationGraph(num_src_, num_dst_, num_edges_, id_dtype_, device, allowed_));
  g->same_edges_as_ = shared_from_this();
  std::lock_guard<std::mutex> lock(mu_);
  auto move = [&](const CompressedArrays& c) {
    return CompressedArrays{c.indptr.to(device), c.indices.to(device), c.eids.to(device)};
  };
  if (coo_) g->coo_ = CooArrays{coo_->src.to(device), coo_->dst.to(device)};
  if (csr_) g->csr_ = move(*csr_);
  if (csc_) g->csc_ = move(*csc_);
  return g;
}

RelationGraphPtr RelationGraph::astype(DType id_dtype) const {
  check_id_dtype(id_dtype, "idtype");
  if (id_dtype == id_dtype_) return shared_from_this();
  NW_CHECK(device_.is_cpu(), ValueError, "astype: change the id type on the CPU");
  check_counts(num_src_, num_dst_, num_edges_, id_dtype);
  auto g = std::shared_ptr<RelationGraph>(
      new RelationGraph(num_src_, num_dst_, num_edges_, id_dtype, device_, allowed_));
  g->same_edges_as_ = shared_from_this();
  std::lock_guard<std::mutex> lock(mu_);
  auto conv = [&](const CompressedArrays& c) {
    return CompressedArrays{c.indptr.astype(id_dtype), c.indices.astype(id_dtype),
                            c.eids.astype(id_dtype)};
  };
  if (coo_) g->coo_ = CooArrays{coo_->src.astype(id_dtype), coo_->dst.astype(id_dtype)};
  if (csr_) g->csr_ = conv(*csr_);
  if (csc_) g->csc_ = conv(*csc_);
  return g;
}

}  // namespace nodeweave::graph
