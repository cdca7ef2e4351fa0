// Views of a relation graph's formats for the sparse kernels.
#include "backend/graph_views.h"

namespace nodeweave::backend {
namespace {
sparse::CompressedView compressed(const graph::CompressedArrays& c, int64_t rows, int64_t cols) {
  sparse::CompressedView v;
  v.indptr = c.indptr.view();
  v.indices = c.indices.view();
  v.eids = c.eids.view();
  v.num_rows = rows;
  v.num_cols = cols;
  return v;
}
}  // namespace

sparse::CompressedView in_view(const graph::RelationGraph& g) {
  return compressed(g.in_csc(), g.num_dst(), g.num_src());
}
sparse::CompressedView out_view(const graph::RelationGraph& g) {
  return compressed(g.out_csr(), g.num_src(), g.num_dst());
}
sparse::CooView coo_view(const graph::RelationGraph& g) {
  sparse::CooView v;
  v.src = g.coo().src.view();
  v.dst = g.coo().dst.view();
  v.num_src = g.num_src();
  v.num_dst = g.num_dst();
  return v;
}

}  // namespace nodeweave::backend
