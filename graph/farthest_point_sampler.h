// Iterative farthest point sampling of a batch of point clouds (DGL's
// dgl.geometry.farthest_point_sampler, the down-sampling step of PointNet++): in each cloud, start
// at a given point, then repeatedly take the point whose squared Euclidean distance to the nearest
// point taken so far is largest. One pass over the cloud per pick, O(npoints * N * C) per cloud and
// O(N) extra memory; no pairwise distance matrix.
//
// Picks are exact and deterministic: distances are accumulated in float64 whatever the input type,
// coordinate by coordinate in order, and a tie for the farthest point goes to the lowest index, so
// the result is the same on every run and at any thread count. A point is never picked twice
// (npoints <= N): when the remaining points all coincide with picked ones (every distance 0), the
// lowest-indexed remaining point is taken. Clouds are spread over the threads; a batch with fewer
// clouds than threads splits each large cloud's distance update across them instead.
#pragma once
#include <cstdint>
#include <vector>

#include "core_framework/runtime/array_view.h"

namespace nodeweave::graph {

// pos: (B, N, C) float32 or float64, contiguous, on the CPU (TypeError / ValueError naming `pos`).
// npoints: in [0, N] (ValueError naming `npoints`). start: B indices, start[b] the first pick of
// cloud b, each in [0, N) (ValueError naming `start_idx` for a wrong count, IndexError for a value
// out of range); not read when npoints is 0.
// Returns B x npoints indices into each cloud, row-major, in the order they were picked.
std::vector<int64_t> farthest_point_sample(const ArrayView& pos, int64_t npoints,
                                           const std::vector<int64_t>& start);

}  // namespace nodeweave::graph
