// Fused GAT entry points: validate the graph views and every array against them and against each
// other (one head count H, one feature width D, one float dtype, one device), then run the CPU
// kernel. There is no CUDA kernel yet, so CUDA arrays stop here with NotImplementedError.
#include "sparse/gat_fused.h"

#include <cmath>
#include <string>
#include <vector>

#include "core_framework/runtime/error.h"
#include "sparse/checks.h"
#include "sparse/cpu/cpu_kernels.h"

namespace nodeweave::sparse {

namespace {

// A node-indexed float array of el's dtype with `rows` rows.
void check_node_array(const char* fn, const char* name, const ArrayView& v, const ArrayView& el,
                      int64_t rows, const char* rows_what) {
  detail::check_features(fn, name, v);
  detail::check_same_dtype(fn, name, v, "el", el);
  detail::check_rows(fn, name, v, rows, rows_what);
}

// Attention scores: (rows, H) or (rows, H, 1), the trailing 1 being how DGL's GATConv shapes them.
void check_score_shape(const char* fn, const char* name, const ArrayView& v) {
  const bool ok = v.shape.size() == 2 || (v.shape.size() == 3 && v.shape[2] == 1);
  NW_CHECK(ok, ValueError, fn, ": ", name,
           " must have shape (rows, heads) or (rows, heads, 1), got ", shape_str(v.shape));
}

void check_shape(const char* fn, const char* name, const ArrayView& v,
                 const std::vector<int64_t>& want, const char* what) {
  NW_CHECK(v.shape == want, ValueError, fn, ": ", name, " must have shape ", shape_str(want), " (",
           what, "), got ", shape_str(v.shape));
}

// Checks the arguments forward and backward share and returns D (H is el.shape[1]).
int64_t check_forward_args(const char* fn, const CompressedView& in_rows, const ArrayView& el,
                           const ArrayView& er, const ArrayView& feat, const ArrayView& out,
                           const ArrayView& stats, const char* out_name, const char* stats_name) {
  detail::check_compressed(str_cat(fn, ": in_rows").c_str(), in_rows);
  const int64_t num_dst = in_rows.num_rows, num_src = in_rows.num_cols;
  check_node_array(fn, "el", el, el, num_src, "the number of source nodes (in_rows.num_cols)");
  check_node_array(fn, "er", er, el, num_dst, "the number of destination nodes (in_rows.num_rows)");
  check_node_array(fn, "feat", feat, el, num_src, "the number of source nodes (in_rows.num_cols)");
  check_node_array(fn, out_name, out, el, num_dst,
                   "the number of destination nodes (in_rows.num_rows)");
  check_node_array(fn, stats_name, stats, el, num_dst,
                   "the number of destination nodes (in_rows.num_rows)");
  check_score_shape(fn, "el", el);
  check_score_shape(fn, "er", er);
  const int64_t heads = el.shape[1];
  NW_CHECK(er.shape[1] == heads, ValueError, fn, ": er has ", er.shape[1], " heads but el has ",
           heads, " (er ", shape_str(er.shape), ", el ", shape_str(el.shape), ")");
  NW_CHECK(feat.shape.size() == 3, ValueError, fn,
           ": feat must have shape (num_src, heads, D), got ", shape_str(feat.shape));
  NW_CHECK(feat.shape[1] == heads, ValueError, fn, ": feat has ", feat.shape[1],
           " heads but el has ", heads, " (feat ", shape_str(feat.shape), ", el ",
           shape_str(el.shape), ")");
  const int64_t d = feat.shape[2];
  check_shape(fn, out_name, out, {num_dst, heads, d}, "num_dst, heads, D");
  check_shape(fn, stats_name, stats, {num_dst, heads, 2}, "num_dst, heads, 2");
  return d;
}

void check_slope(const char* fn, double slope) {
  NW_CHECK(std::isfinite(slope), ValueError, fn, ": slope must be finite, got ", slope);
}

void check_dropout(const char* fn, const GatDropout& dropout) {
  NW_CHECK(dropout.p >= 0 && dropout.p <= 1, ValueError, fn,
           ": the attention dropout probability must be in [0, 1], got ", dropout.p);
}

// The kernel reads every array on the host; a CUDA array (all are on one device by now) cannot
// take the CPU path.
void check_not_cuda(const char* fn, const ArrayView& el) {
  NW_CHECK(!el.device.is_cuda(), NotImplementedError, fn,
           ": the fused GAT kernel has no CUDA implementation yet (arrays are on ", el.device.str(),
           "); use the unfused gsddmm / edge_softmax / gspmm pipeline on the GPU");
}

}  // namespace

void gat_aggregate_forward(const CompressedView& in_rows, const ArrayView& el, const ArrayView& er,
                           const ArrayView& feat, double slope, const GatDropout& dropout,
                           ArrayView out, ArrayView stats) {
  const char* fn = "gat_aggregate_forward";
  check_forward_args(fn, in_rows, el, er, feat, out, stats, "out", "stats");
  check_slope(fn, slope);
  check_dropout(fn, dropout);
  detail::check_same_device(fn, {{"in_rows.indptr", &in_rows.indptr},
                                 {"el", &el},
                                 {"er", &er},
                                 {"feat", &feat},
                                 {"out", &out},
                                 {"stats", &stats}});
  check_not_cuda(fn, el);
  cpu::gat_aggregate_forward(in_rows, el, er, feat, slope, dropout, out, stats);
}

void gat_aggregate_backward(const CompressedView& in_rows, const CompressedView& out_rows,
                            const ArrayView& el, const ArrayView& er, const ArrayView& feat,
                            const ArrayView& out, const ArrayView& stats, const ArrayView& grad_out,
                            double slope, const GatDropout& dropout, ArrayView grad_el,
                            ArrayView grad_er, ArrayView grad_feat) {
  const char* fn = "gat_aggregate_backward";
  const int64_t d = check_forward_args(fn, in_rows, el, er, feat, out, stats, "out", "stats");
  const int64_t heads = el.shape[1];
  // out_rows must be the transpose of in_rows: the values themselves are not compared (that costs
  // a pass over the graph), only what a mismatch would turn into out-of-bounds reads.
  detail::check_compressed(str_cat(fn, ": out_rows").c_str(), out_rows);
  NW_CHECK(out_rows.num_rows == in_rows.num_cols && out_rows.num_cols == in_rows.num_rows,
           ValueError, fn, ": out_rows must be the out-edge view of in_rows' graph: it is ",
           out_rows.num_rows, " x ", out_rows.num_cols, " but in_rows is ", in_rows.num_rows, " x ",
           in_rows.num_cols, " (out_rows has rows = sources, in_rows rows = destinations)");
  NW_CHECK(out_rows.num_edges() == in_rows.num_edges(), ValueError, fn, ": out_rows has ",
           out_rows.num_edges(), " edges but in_rows has ", in_rows.num_edges());
  NW_CHECK(out_rows.indptr.dtype == in_rows.indptr.dtype, TypeError, fn,
           ": out_rows and in_rows must share one index dtype, got ",
           dtype_name(out_rows.indptr.dtype), " and ", dtype_name(in_rows.indptr.dtype));
  const int64_t num_dst = in_rows.num_rows, num_src = in_rows.num_cols;
  check_node_array(fn, "grad_out", grad_out, el, num_dst,
                   "the number of destination nodes (in_rows.num_rows)");
  check_shape(fn, "grad_out", grad_out, {num_dst, heads, d}, "the shape of out");
  check_node_array(fn, "grad_el", grad_el, el, num_src,
                   "the number of source nodes (in_rows.num_cols)");
  check_shape(fn, "grad_el", grad_el, el.shape, "the shape of el");
  check_node_array(fn, "grad_er", grad_er, el, num_dst,
                   "the number of destination nodes (in_rows.num_rows)");
  check_shape(fn, "grad_er", grad_er, er.shape, "the shape of er");
  check_node_array(fn, "grad_feat", grad_feat, el, num_src,
                   "the number of source nodes (in_rows.num_cols)");
  check_shape(fn, "grad_feat", grad_feat, feat.shape, "the shape of feat");
  check_slope(fn, slope);
  check_dropout(fn, dropout);
  detail::check_same_device(fn, {{"in_rows.indptr", &in_rows.indptr},
                                 {"out_rows.indptr", &out_rows.indptr},
                                 {"el", &el},
                                 {"er", &er},
                                 {"feat", &feat},
                                 {"out", &out},
                                 {"stats", &stats},
                                 {"grad_out", &grad_out},
                                 {"grad_el", &grad_el},
                                 {"grad_er", &grad_er},
                                 {"grad_feat", &grad_feat}});
  check_not_cuda(fn, el);
  cpu::gat_aggregate_backward(in_rows, out_rows, el, er, feat, out, stats, grad_out, slope,
                              dropout, grad_el, grad_er, grad_feat);
}

}  // namespace nodeweave::sparse
