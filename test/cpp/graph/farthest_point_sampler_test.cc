// Farthest point sampling against a brute force that recomputes every point's distance to the whole
// picked set at each step (no running minimum), on random float32/float64 clouds; lattice ties go
// to the lowest index; coincident points are never picked twice; the team path (one large cloud
// split over threads) gives the same picks at 1 and 2 threads; typed errors.
#include "graph/farthest_point_sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::graph {
namespace {

template <typename T>
ArrayView cloud_view(const std::vector<T>& v, int64_t b, int64_t n, int64_t c) {
  ArrayView a = host_vector_view(v, DTypeOf<T>::value);
  a.shape = {b, n, c};
  a.strides = {n * c, c, 1};
  return a;
}

// The picks of one cloud by definition: each next pick maximises the distance to its nearest
// picked point among the points not picked yet, the lowest index among equals.
template <typename T>
std::vector<int64_t> brute_force(const T* pts, int64_t n, int64_t c, int64_t npoints,
                                 int64_t start) {
  std::vector<int64_t> picked{start};
  std::vector<bool> taken(n, false);
  taken[start] = true;
  while (static_cast<int64_t>(picked.size()) < npoints) {
    int64_t arg = -1;
    double far = -1;
    for (int64_t j = 0; j < n; ++j) {
      if (taken[j]) continue;
      double nearest = INFINITY;
      for (int64_t p : picked) {
        double s = 0;
        for (int64_t d = 0; d < c; ++d) {
          const double t =
              static_cast<double>(pts[j * c + d]) - static_cast<double>(pts[p * c + d]);
          s += t * t;
        }
        nearest = std::min(nearest, s);
      }
      if (nearest > far) {
        far = nearest;
        arg = j;
      }
    }
    picked.push_back(arg);
    taken[arg] = true;
  }
  return picked;
}

template <typename T>
void check_random_clouds(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  const int64_t b = 4, n = 60, c = 3, npoints = 17;
  std::vector<T> pts(b * n * c);
  for (T& x : pts) x = static_cast<T>(u(rng));
  const std::vector<int64_t> start{0, 59, 13, 7};
  const std::vector<int64_t> got = farthest_point_sample(cloud_view(pts, b, n, c), npoints, start);
  ASSERT_EQ(got.size(), static_cast<size_t>(b * npoints));
  for (int64_t k = 0; k < b; ++k) {
    const std::vector<int64_t> want = brute_force(&pts[k * n * c], n, c, npoints, start[k]);
    EXPECT_EQ(std::vector<int64_t>(got.begin() + k * npoints, got.begin() + (k + 1) * npoints),
              want)
        << "cloud " << k;
  }
}

TEST(FarthestPointSampler, MatchesBruteForce) {
  for (uint64_t seed = 0; seed < 3; ++seed) {
    check_random_clouds<float>(seed);
    check_random_clouds<double>(seed);
  }
}

TEST(FarthestPointSampler, TiesGoToTheLowestIndexAndNoPointRepeats) {
  // The centre of a unit square and its corners, from corner 1 = (0, 0): the opposite corner 4
  // comes first (squared distance 2), then corners 2 and 3 tie at 1 from the picked ones and the
  // lower goes first, then 3, then the centre (1/2 from every corner).
  const std::vector<double> square{0.5, 0.5, 0, 0, 1, 0, 0, 1, 1, 1};
  EXPECT_EQ(farthest_point_sample(cloud_view(square, 1, 5, 2), 5, {1}),
            (std::vector<int64_t>{1, 4, 2, 3, 0}));
  // Five coincident points: every distance is 0, each pick is the lowest index not yet picked.
  const std::vector<float> same(5 * 3, 2.5f);
  EXPECT_EQ(farthest_point_sample(cloud_view(same, 1, 5, 3), 5, {3}),
            (std::vector<int64_t>{3, 0, 1, 2, 4}));
  // One picked point is the whole answer; npoints = 0 reads nothing.
  EXPECT_EQ(farthest_point_sample(cloud_view(same, 1, 5, 3), 1, {4}), (std::vector<int64_t>{4}));
  EXPECT_TRUE(farthest_point_sample(cloud_view(same, 1, 5, 3), 0, {99}).empty());
}

TEST(FarthestPointSampler, OneLargeCloudIsTheSameAtAnyThreadCount) {
  // 40000 points x 3 coordinates is more than a grain per pick and there are fewer clouds than
  // threads, so two threads share the cloud. Small integer coordinates make many exact ties, which
  // must still go to the lowest index across the threads' slices.
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> u(0, 7);
  const int64_t n = 40000, c = 3, npoints = 12;
  std::vector<float> pts(n * c);
  for (float& x : pts) x = static_cast<float>(u(rng));
  const ArrayView view = cloud_view(pts, 1, n, c);
  const int before = get_num_threads();
  set_num_threads(1);
  const std::vector<int64_t> one = farthest_point_sample(view, npoints, {5});
  set_num_threads(2);
  const std::vector<int64_t> two = farthest_point_sample(view, npoints, {5});
  set_num_threads(before);
  EXPECT_EQ(one, two);
  EXPECT_EQ(two, brute_force(pts.data(), n, c, npoints, 5));
}

TEST(FarthestPointSampler, Errors) {
  const std::vector<double> pts(2 * 4 * 3, 0.0);
  const ArrayView ok = cloud_view(pts, 2, 4, 3);
  EXPECT_THROW(farthest_point_sample(ok, 5, {0, 0}), ValueError);   // npoints > N
  EXPECT_THROW(farthest_point_sample(ok, -1, {0, 0}), ValueError);  // negative npoints
  EXPECT_THROW(farthest_point_sample(ok, 2, {0}), ValueError);      // one start per cloud
  EXPECT_THROW(farthest_point_sample(ok, 2, {0, 4}), IndexError);   // start out of range
  EXPECT_THROW(farthest_point_sample(ok, 2, {-1, 0}), IndexError);
  ArrayView flat = ok;
  flat.shape = {8, 3};
  flat.strides = {3, 1};
  EXPECT_THROW(farthest_point_sample(flat, 2, {0, 0}), ValueError);  // not (B, N, C)
  const std::vector<int64_t> ints(2 * 4 * 3, 0);
  ArrayView int_view = host_int64_view(ints);
  int_view.shape = {2, 4, 3};
  int_view.strides = {12, 3, 1};
  EXPECT_THROW(farthest_point_sample(int_view, 2, {0, 0}), TypeError);
  std::vector<double> nan = pts;
  nan[7] = NAN;
  EXPECT_THROW(farthest_point_sample(cloud_view(nan, 2, 4, 3), 2, {0, 0}), ValueError);
  ArrayView strided = ok;
  strided.strides = {1, 6, 2};
  EXPECT_THROW(farthest_point_sample(strided, 2, {0, 0}), ValueError);  // not contiguous
}

}  // namespace
}  // namespace nodeweave::graph
