// Graph kernels against the machine's memory bandwidth (DESIGN.md: SpMM is memory-bound).
// For an R-MAT graph (2^20 nodes, 2^24 edges; a=0.57 b=0.19 c=0.19 d=0.05, seed 1) and for DBLP
// (../shared/data/dblp_prone/dblp.ungraph, both directions), at feature sizes 16/64/256, it times
// copy_u-sum, u_mul_e-sum, copy_u-max, u_dot_v and edge_softmax, converts each to the bytes the
// kernel must move at least once, and prints that rate as a share of a STREAM-style copy loop run
// in the same process with the same thread count.
//
//   build/bench/bench_graph_kernels [threads] [data_dir]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core_framework/runtime/allocator.h"
#include "core_framework/runtime/generator.h"
#include "core_framework/runtime/parallel.h"
#include "graph/relation_graph.h"
#include "sparse/edge_softmax.h"
#include "sparse/sddmm.h"
#include "sparse/spmm.h"

using namespace nodeweave;
using graph::IdArray;
using graph::RelationGraph;

namespace {

double median_seconds(int reps, const std::function<void()>& fn) {
  fn();  // warm-up: first touch of outputs, caches
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto a = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void stream_copy(float* __restrict dst, const float* __restrict src, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}

// R-MAT edge generator: each edge descends `scale` levels choosing a quadrant with a/b/c/d.
graph::RelationGraphPtr rmat(int scale, int64_t edges, uint64_t seed) {
  const double a = 0.57, b = 0.19, c = 0.19;
  std::vector<int64_t> src(edges), dst(edges);
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < edges; ++e) {
    uint64_t state =
        seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(e) * 0xBF58476D1CE4E5B9ull;
    int64_t u = 0, v = 0;
    for (int l = 0; l < scale; ++l) {
      state += 0x9E3779B97F4A7C15ull;  // splitmix64 step
      uint64_t z = state;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      const double r = static_cast<double>(z >> 11) * 0x1.0p-53;
      const int q = r < a ? 0 : r < a + b ? 1 : r < a + b + c ? 2 : 3;
      u = (u << 1) | (q >> 1);
      v = (v << 1) | (q & 1);
    }
    src[e] = u;
    dst[e] = v;
  }
  const int64_t n = int64_t{1} << scale;
  return RelationGraph::from_coo(n, n,
                                 IdArray::from_host(src.data(), DType::Int64, edges, DType::Int64),
                                 IdArray::from_host(dst.data(), DType::Int64, edges, DType::Int64));
}

// SNAP edge list ("# comment", "a<TAB>b"), made undirected by adding both directions.
graph::RelationGraphPtr load_snap(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  std::vector<int64_t> src, dst;
  std::string line;
  int64_t n = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    int64_t a, b;
    if (!(ss >> a >> b)) continue;
    src.push_back(a);
    dst.push_back(b);
    src.push_back(b);
    dst.push_back(a);
    n = std::max(n, std::max(a, b) + 1);
  }
  const int64_t e = static_cast<int64_t>(src.size());
  return RelationGraph::from_coo(n, n,
                                 IdArray::from_host(src.data(), DType::Int64, e, DType::Int64),
                                 IdArray::from_host(dst.data(), DType::Int64, e, DType::Int64));
}

// Arrays come from the runtime allocator, the memory engine tensors get, so the figures include
// what it does for large blocks (2 MiB alignment and transparent-huge-page advice).
template <typename T>
class Buffer {
 public:
  explicit Buffer(int64_t n, T fill = T(0))
      : n_(n), p_(static_cast<T*>(get_allocator(Device{})->allocate(bytes()))) {
    std::fill_n(p_, n_, fill);
  }
  ~Buffer() { get_allocator(Device{})->deallocate(p_, bytes()); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  T* data() { return p_; }

 private:
  size_t bytes() const { return static_cast<size_t>(n_) * sizeof(T); }
  int64_t n_;
  T* p_;
};

template <typename T>
ArrayView view2(Buffer<T>& v, int64_t rows, int64_t cols) {
  ArrayView a;
  a.data = v.data();
  a.dtype = DTypeOf<T>::value;
  a.shape = {rows, cols};
  a.strides = {cols, 1};
  return a;
}

sparse::CompressedView in_view(const RelationGraph& g) {
  const auto& c = g.in_csc();
  return {c.indptr.view(), c.indices.view(), c.eids.view(), g.num_dst(), g.num_src()};
}

void bench_graph(const char* name, const RelationGraph& g, double stream_gbs) {
  const int64_t n = g.num_dst(), e = g.num_edges();
  sparse::CompressedView csc = in_view(g);
  sparse::CooView coo{g.coo().src.view(), g.coo().dst.view(), g.num_src(), g.num_dst()};
  std::printf("\n%s: %lld nodes, %lld edges\n", name, static_cast<long long>(n),
              static_cast<long long>(e));
  std::printf("%-14s %5s %10s %9s %8s\n", "kernel", "d", "ms", "GB/s", "vs copy");
  for (int64_t d : {16, 64, 256}) {
    Buffer<float> x(n * d, 1.0f), out(n * d), w(e, 0.5f), ee(e), es(e);
    Buffer<int64_t> arg(n * d);
    auto report = [&](const char* k, double sec, double bytes) {
      const double gbs = bytes / sec / 1e9;
      std::printf("%-14s %5lld %10.2f %9.2f %7.0f%%\n", k, static_cast<long long>(d), sec * 1e3,
                  gbs, 100.0 * gbs / stream_gbs);
    };
    // Minimum traffic: the CSC (indptr + indices, 8 B each), one source row per edge, one output
    // row per node; plus what each kernel reads or writes on top.
    const double base = 8.0 * (n + 1) + 8.0 * e + 4.0 * d * e + 4.0 * d * n;
    sparse::SpmmArgs s;
    s.in_edges = csc;
    s.lhs = view2(x, n, d);
    s.out = view2(out, n, d);
    s.op = sparse::BinaryOp::CopyLhs;
    report("copy_u-sum", median_seconds(5, [&] { sparse::spmm(s); }), base);
    sparse::SpmmArgs m = s;
    m.op = sparse::BinaryOp::Mul;
    m.rhs = view2(w, e, 1);
    report("u_mul_e-sum", median_seconds(5, [&] { sparse::spmm(m); }), base + 12.0 * e);
    sparse::SpmmArgs mx = s;
    mx.reduce = sparse::ReduceOp::Max;
    mx.arg_lhs = view2(arg, n, d);
    report("copy_u-max", median_seconds(5, [&] { sparse::spmm(mx); }), base + 8.0 * n * d);
    sparse::SddmmArgs dot;
    dot.edges = coo;
    dot.op = sparse::BinaryOp::Dot;
    dot.lhs = view2(x, n, d);
    dot.rhs = view2(x, n, d);
    dot.out = view2(ee, e, 1);
    report("u_dot_v", median_seconds(5, [&] { sparse::sddmm(dot); }),
           16.0 * e + 8.0 * d * e + 4.0 * e);
    if (d == 16) {  // edge_softmax works on per-edge scores: one size is enough
      report("edge_softmax",
             median_seconds(
                 5, [&] { sparse::edge_softmax_forward(csc, view2(ee, e, 1), view2(es, e, 1)); }),
             8.0 * (n + 1) + 8.0 * e + 8.0 * e);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : get_num_threads();
  const std::string data_dir = argc > 2 ? argv[2] : "../shared/data";
  set_num_threads(threads);
  omp_set_num_threads(threads);
  const int64_t sn = int64_t{1} << 25;  // 128 MiB per array: far beyond the caches
  Buffer<float> a(sn, 1.0f), b(sn);
  const double t = median_seconds(9, [&] { stream_copy(b.data(), a.data(), sn); });
  const double stream = 8.0 * sn / t / 1e9;
  std::printf("threads=%d  STREAM-style copy: %.2f GB/s (read + write)\n", threads, stream);
  {
    auto g = rmat(20, int64_t{1} << 24, 1);
    bench_graph("R-MAT 2^20 nodes, 2^24 edges", *g, stream);
  }
  auto dblp = load_snap(data_dir + "/dblp_prone/dblp.ungraph");
  if (dblp) {
    bench_graph("DBLP (both directions)", *dblp, stream);
  } else {
    std::printf("\nDBLP: %s/dblp_prone/dblp.ungraph not found (pass the data directory)\n",
                data_dir.c_str());
  }
  return 0;
}
