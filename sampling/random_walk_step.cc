// Checks and preparation shared by the walk samplers: relation structure, edge weights laid out as
// per-row alias tables (sampling/edge_weights.h), start nodes and probabilities.
#include <cmath>
#include <string>
#include <type_traits>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "sampling/random_walk_step.h"

namespace nodeweave::sampling::walk_detail {

namespace {

void check_structure(const char* fn, const char* what, const WalkRelation& rel) {
  NW_CHECK(rel.out_csr != nullptr, ValueError, fn, ": ", what, " ", rel.name,
           " has no out-edge CSR");
  const graph::CompressedArrays& c = *rel.out_csr;
  const DType dt = c.indptr.dtype;
  NW_CHECK(dt == DType::Int32 || dt == DType::Int64, TypeError, fn, ": ", what, " ", rel.name,
           " ids must be int32 or int64, got ", dtype_name(dt));
  NW_CHECK(c.indices.dtype == dt && c.eids.dtype == dt, TypeError, fn, ": ", what, " ", rel.name,
           " mixes id dtypes");
  NW_CHECK(c.indptr.length == rel.num_src + 1, ValueError, fn, ": ", what, " ", rel.name,
           " indptr has length ", c.indptr.length, " but the relation has ", rel.num_src,
           " source nodes");
  NW_CHECK(c.eids.length == c.indices.length, ValueError, fn, ": ", what, " ", rel.name, " has ",
           c.indices.length, " entries but ", c.eids.length, " edge ids");
  NW_CHECK(c.indptr.device().is_cpu(), ValueError, fn, ": ", what, " ", rel.name,
           " must be on the CPU, got ", c.indptr.device().str());
}

template <typename W>
void check_weights(const char* fn, const char* what, const W* w, int64_t n) {
  for (int64_t e = 0; e < n; ++e) {
    const double x = static_cast<double>(w[e]);
    NW_CHECK(std::isfinite(x) && x >= 0, ValueError, fn, ": ", what,
             " must hold finite non-negative probabilities, got ", x, " for edge ", e);
  }
}

}  // namespace

PreparedRelation prepare_relation(const char* fn, const char* what, const WalkRelation& rel) {
  check_structure(fn, what, rel);
  PreparedRelation p;
  p.rel = &rel;
  const ArrayView& w = rel.prob;
  if (w.data == nullptr && w.shape.empty()) return p;  // uniform
  const int64_t num_edges = rel.out_csr->indices.length;
  NW_CHECK(w.dtype == DType::Float32 || w.dtype == DType::Float64, TypeError, fn, ": ", what,
           " of ", rel.name, " must be float32 or float64, got ", dtype_name(w.dtype));
  NW_CHECK(w.shape.size() == 1 && w.shape[0] == num_edges, ValueError, fn, ": ", what, " of ",
           rel.name, " must hold one value per edge (shape [", num_edges, "]), got shape ",
           shape_str(w.shape));
  NW_CHECK(w.shape[0] <= 1 || (w.strides.size() == 1 && w.strides[0] == 1), ValueError, fn, ": ",
           what, " of ", rel.name, " must be contiguous");
  NW_CHECK(w.device.is_cpu(), ValueError, fn, ": ", what, " of ", rel.name,
           " must be on the CPU, got ", w.device.str());
  const std::string label = str_cat(what, " of ", rel.name);
  if (w.dtype == DType::Float32)
    check_weights(fn, label.c_str(), w.ptr<float>(), num_edges);
  else
    check_weights(fn, label.c_str(), w.ptr<double>(), num_edges);
  p.weighted = true;
  p.rows = build_weighted_rows(*rel.out_csr, rel.num_src, w);
  return p;
}

std::vector<PreparedRelation> prepare_relations(const char* fn,
                                                const std::vector<WalkRelation>& relations) {
  NW_CHECK(!relations.empty(), ValueError, fn, ": needs at least one relation");
  std::vector<PreparedRelation> prepared;
  prepared.reserve(relations.size());
  for (const WalkRelation& r : relations) prepared.push_back(prepare_relation(fn, "prob", r));
  const DType id_dtype = relations[0].out_csr->indptr.dtype;
  for (const WalkRelation& r : relations)
    NW_CHECK(r.out_csr->indptr.dtype == id_dtype, TypeError, fn, ": relations mix id dtypes (",
             dtype_name(id_dtype), " and ", dtype_name(r.out_csr->indptr.dtype), ")");
  return prepared;
}

void check_metapath(const char* fn, const std::vector<WalkRelation>& rels,
                    const std::vector<int64_t>& metapath) {
  const int64_t n = static_cast<int64_t>(rels.size());
  for (size_t k = 0; k < metapath.size(); ++k) {
    NW_CHECK(metapath[k] >= 0 && metapath[k] < n, ValueError, fn, ": metapath[", k,
             "] = ", metapath[k], " is not a relation index (there are ", n, " relations)");
    if (k == 0) continue;
    const WalkRelation& prev = rels[metapath[k - 1]];
    const WalkRelation& cur = rels[metapath[k]];
    NW_CHECK(cur.src_type == prev.dst_type, ValueError, fn, ": metapath[", k, "] ", cur.name,
             " leaves from node type ", cur.src_type, " but metapath[", k - 1, "] ", prev.name,
             " arrives at node type ", prev.dst_type);
    NW_CHECK(cur.num_src == prev.num_dst, ValueError, fn, ": metapath[", k, "] ", cur.name, " has ",
             cur.num_src, " source nodes but metapath[", k - 1, "] ", prev.name, " has ",
             prev.num_dst, " destination nodes");
  }
}

std::vector<int64_t> read_starts(const char* fn, const char* what, const ArrayView& starts,
                                 int64_t num_nodes, const std::string& node_what) {
  NW_CHECK(starts.dtype == DType::Int32 || starts.dtype == DType::Int64, TypeError, fn, ": ", what,
           " must hold int32 or int64 node ids, got ", dtype_name(starts.dtype));
  NW_CHECK(starts.shape.size() == 1, ValueError, fn, ": ", what, " must be 1-D, got shape ",
           shape_str(starts.shape));
  const int64_t n = starts.shape[0];
  NW_CHECK(n <= 1 || (starts.strides.size() == 1 && starts.strides[0] == 1), ValueError, fn, ": ",
           what, " must be contiguous");
  NW_CHECK(starts.device.is_cpu(), ValueError, fn, ": ", what, " must be on the CPU, got ",
           starts.device.str());
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    out[i] = starts.dtype == DType::Int32 ? starts.ptr<int32_t>()[i] : starts.ptr<int64_t>()[i];
    NW_CHECK(out[i] >= 0 && out[i] < num_nodes, IndexError, fn, ": ", what, "[", i, "] = ", out[i],
             " is out of range: there are ", num_nodes, " ", node_what);
  }
  return out;
}

void check_probability(const char* fn, const char* what, double p) {
  NW_CHECK(p >= 0 && p <= 1, ValueError, fn, ": ", what, " must be in [0, 1], got ", p);
}

}  // namespace nodeweave::sampling::walk_detail
