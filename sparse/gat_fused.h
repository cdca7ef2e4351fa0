// Fused GAT edge pipeline: attention logits, leaky ReLU, edge softmax and the weighted aggregation
// of source features in one kernel, forward and backward. Per edge e = (u -> v) and head h:
//   s[e,h] = el[u,h] + er[v,h],   l = leaky_relu(s, slope),   a = softmax of l over v's in-edges,
//   out[v,h,:] = sum_{e into v} a[e,h] * k[e,h] * feat[u,h,:]   (0 for a destination without edges)
// with k the attention dropout's keep mask (GatDropout; 1 without dropout).
// The unfused pipeline (gSDDMM u_add_v, a leaky ReLU, edge_softmax, gSpMM u_mul_e) writes and reads
// several (num_edges, H) arrays; here nothing of size num_edges is ever stored, in either
// direction: the forward keeps per-destination statistics (row max, 1 / row sum) from which the
// backward recomputes a[e,h].
#pragma once
#include <cstdint>

#include "sparse/types.h"

namespace nodeweave::sparse {

// Attention dropout inside the pipeline: edge e's attention in head h is scaled by 1 / (1 - p)
// when keep_at(seed, e * H + h) (core_framework/runtime/generator.h), else zeroed, which is the
// mask bernoulli_mask draws for the (num_edges, H, 1) attention with the same seed. The backward
// redraws it from the seed instead of storing it. p = 0: no dropout.
struct GatDropout {
  double p = 0;
  uint64_t seed = 0;
};

// in_rows: the in-edge (CSC) view, rows = destination nodes, indices = source nodes.
// el: (num_src, H) or (num_src, H, 1); er: (num_dst, H) or (num_dst, H, 1); feat: (num_src, H, D).
// Writes out: (num_dst, H, D) and stats: (num_dst, H, 2) = (row max of l, 1 / sum exp(l - max))
// per destination and head, (0, 0) for a destination without in-edges.
// All float arrays contiguous, one dtype (float32 or float64); CPU only for now (CUDA arrays raise
// NotImplementedError). Invalid arguments raise ValueError/TypeError naming the argument.
void gat_aggregate_forward(const CompressedView& in_rows, const ArrayView& el, const ArrayView& er,
                           const ArrayView& feat, double slope, const GatDropout& dropout,
                           ArrayView out, ArrayView stats);

// Gradients of a loss with gradient grad_out (shaped like out) w.r.t. el, er and feat, from the
// forward's out and stats. out_rows: the out-edge (CSR) view of the same graph, rows = source
// nodes, indices = destinations. grad_el/grad_er/grad_feat are shaped like el/er/feat and fully
// overwritten. `out` and `stats` must be what gat_aggregate_forward wrote for these el, er, feat
// and slope. Two passes, each parallel over rows with one writer per output row (no atomics), so
// results do not depend on the thread count; the only temporary is node-sized (num_dst x 4H).
void gat_aggregate_backward(const CompressedView& in_rows, const CompressedView& out_rows,
                            const ArrayView& el, const ArrayView& er, const ArrayView& feat,
                            const ArrayView& out, const ArrayView& stats, const ArrayView& grad_out,
                            double slope, const GatDropout& dropout, ArrayView grad_el,
                            ArrayView grad_er, ArrayView grad_feat);

}  // namespace nodeweave::sparse
