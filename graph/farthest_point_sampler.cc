// Farthest point sampling. Each cloud keeps, per point, the squared distance to the nearest point
// picked so far; a pick lowers those distances by the new point and takes the largest. Picked
// points hold a sentinel below every distance, so they are skipped and never picked again.
//
// Two ways to use the threads, chosen per call: many clouds -> one cloud per task (no
// synchronisation at all); few large clouds -> one thread team per cloud, each thread updating a
// fixed slice of the points and the farthest points of the slices combined in slice order after a
// barrier (so ties still go to the lowest index and the picks do not depend on the thread count).
#include "graph/farthest_point_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::graph {

namespace {

constexpr const char* kFn = "farthest_point_sampler";
constexpr double kTaken = -1.0;  // below every squared distance: the point is already picked
constexpr double kInf = std::numeric_limits<double>::infinity();

// The farthest point of a slice; idx -1 for an empty slice.
struct Farthest {
  double dist = -kInf;
  int64_t idx = -1;
};

template <typename T>
double squared_distance(const T* a, const T* b, int64_t c) {
  double s = 0;
  for (int64_t d = 0; d < c; ++d) {
    const double t = static_cast<double>(a[d]) - static_cast<double>(b[d]);
    s += t * t;
  }
  return s;
}

// Lowers near[j] by the distance to the new pick `p` for j in [lo, hi) and returns the farthest
// point of the slice (strict >: the lowest index among equals).
template <typename T>
Farthest update(const T* cloud, int64_t c, int64_t p, double* near, int64_t lo, int64_t hi) {
  const T* q = cloud + p * c;
  Farthest best;
  for (int64_t j = lo; j < hi; ++j) {
    if (near[j] == kTaken) continue;
    near[j] = std::min(near[j], squared_distance(cloud + j * c, q, c));
    if (near[j] > best.dist) best = {near[j], j};
  }
  return best;
}

// One cloud on the calling thread; `near` is scratch.
template <typename T>
void sample_cloud(const T* cloud, int64_t n, int64_t c, int64_t npoints, int64_t start,
                  int64_t* out, std::vector<double>& near) {
  near.assign(static_cast<size_t>(n), kInf);
  int64_t p = start;
  for (int64_t i = 0;; ++i) {
    out[i] = p;
    near[p] = kTaken;
    if (i + 1 == npoints) return;
    p = update(cloud, c, p, near.data(), 0, n).idx;
  }
}

// One cloud on a team of `threads` threads, each owning a contiguous slice of the points.
template <typename T>
void sample_cloud_team(const T* cloud, int64_t n, int64_t c, int64_t npoints, int64_t start,
                       int64_t* out, int threads) {
  std::vector<double> near(static_cast<size_t>(n), kInf);
  std::vector<Farthest> slice_best(static_cast<size_t>(threads));
  int64_t p = start;  // the latest pick, read by every thread after the single below
  out[0] = p;
  near[p] = kTaken;
#pragma omp parallel num_threads(threads)
  {
    const int64_t tid = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t chunk = (n + nt - 1) / nt;
    const int64_t lo = std::min(n, tid * chunk), hi = std::min(n, lo + chunk);
    for (int64_t i = 1; i < npoints; ++i) {
      slice_best[tid] = update(cloud, c, p, near.data(), lo, hi);
#pragma omp barrier
#pragma omp single
      {
        Farthest best = slice_best[0];
        for (int64_t t = 1; t < nt; ++t)
          if (slice_best[t].dist > best.dist) best = slice_best[t];
        p = best.idx;
        out[i] = p;
        near[p] = kTaken;
      }  // the single's closing barrier publishes p before the next update
    }
  }
}

// NaN or infinite coordinates would make "farthest" meaningless; say so instead of picking.
template <typename T>
void check_finite(const T* pos, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    NW_CHECK(std::isfinite(pos[i]), ValueError, kFn, ": pos holds a NaN or infinite coordinate (",
             pos[i], " at flat index ", i, ")");
}

template <typename T>
void sample_batch(const T* pos, int64_t b, int64_t n, int64_t c, int64_t npoints,
                  const std::vector<int64_t>& start, int64_t* out) {
  check_finite(pos, b * n * c);
  const int threads = get_num_threads();
  const int64_t per_pick = std::max<int64_t>(1, n * c);  // elements one pick reads in one cloud
  const int64_t team = std::min<int64_t>(threads, (per_pick + kGrainSize - 1) / kGrainSize);
  if (b >= threads || team < 2 || omp_in_parallel()) {
    // Clouds per task: a cloud costs npoints passes over its n * c values.
    const int64_t grain = std::max<int64_t>(1, kGrainSize / (per_pick * npoints));
    parallel_for(0, b, grain, [&](int64_t lo, int64_t hi) {
      std::vector<double> near;
      for (int64_t k = lo; k < hi; ++k)
        sample_cloud(pos + k * n * c, n, c, npoints, start[k], out + k * npoints, near);
    });
    return;
  }
  for (int64_t k = 0; k < b; ++k)
    sample_cloud_team(pos + k * n * c, n, c, npoints, start[k], out + k * npoints,
                      static_cast<int>(team));
}

}  // namespace

std::vector<int64_t> farthest_point_sample(const ArrayView& pos, int64_t npoints,
                                           const std::vector<int64_t>& start) {
  NW_CHECK(pos.device.is_cpu(), ValueError, kFn, ": pos must be on the CPU, got ",
           pos.device.str());
  NW_CHECK(pos.dtype == DType::Float32 || pos.dtype == DType::Float64, TypeError, kFn,
           ": pos must be float32 or float64, got ", dtype_name(pos.dtype));
  NW_CHECK(pos.shape.size() == 3, ValueError, kFn,
           ": pos must have shape (B, N, C) (clouds, points, coordinates), got ",
           shape_str(pos.shape));
  NW_CHECK(pos.is_contiguous(), ValueError, kFn, ": pos must be contiguous");
  const int64_t b = pos.shape[0], n = pos.shape[1], c = pos.shape[2];
  NW_CHECK(npoints >= 0 && npoints <= n, ValueError, kFn,
           ": npoints must be in [0, N] where N = ", n, " points per cloud, got ", npoints);
  NW_CHECK(static_cast<int64_t>(start.size()) == b, ValueError, kFn,
           ": start_idx must hold one index per cloud (", b, "), got ", start.size());
  std::vector<int64_t> out(static_cast<size_t>(b * npoints));
  if (out.empty()) return out;
  NW_CHECK(pos.data != nullptr, ValueError, kFn, ": pos has no data");
  for (int64_t k = 0; k < b; ++k)
    NW_CHECK(start[k] >= 0 && start[k] < n, IndexError, kFn, ": start_idx[", k, "] = ", start[k],
             " is out of range: each cloud has ", n, " points");
  if (pos.dtype == DType::Float32)
    sample_batch(pos.ptr<const float>(), b, n, c, npoints, start, out.data());
  else
    sample_batch(pos.ptr<const double>(), b, n, c, npoints, start, out.data());
  return out;
}

}  // namespace nodeweave::graph
