// Helpers for the sparse-kernel tests: ArrayViews over std::vectors, random multigraphs with
// isolated nodes, self-loops and repeated edges, and their CSC views built independently of the
// library; expect_error for messages that must name the argument.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <initializer_list>
#include <string>
#include <random>
#include <vector>

#include "core_framework/runtime/array_view.h"
#include "core_framework/runtime/error.h"
#include "sparse/types.h"

namespace nodeweave::sparse::test_util {

inline std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

template <typename T>
ArrayView view(std::vector<T>& v, std::vector<int64_t> shape) {
  ArrayView a;
  a.data = v.data();
  a.dtype = DTypeOf<T>::value;
  a.strides = contiguous_strides(shape);
  a.shape = std::move(shape);
  return a;
}
template <typename T>
ArrayView view(const std::vector<T>& v, std::vector<int64_t> shape) {
  return view(const_cast<std::vector<T>&>(v), std::move(shape));
}

inline int64_t prod(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline std::vector<int64_t> with_rows(int64_t rows, const std::vector<int64_t>& feat) {
  std::vector<int64_t> s{rows};
  s.insert(s.end(), feat.begin(), feat.end());
  return s;
}

template <typename T>
std::vector<T> random_values(std::mt19937& rng, int64_t n, double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

// Edge list in edge-id order.
struct Graph {
  int64_t num_src = 0, num_dst = 0;
  std::vector<int64_t> src, dst;
  int64_t num_edges() const { return static_cast<int64_t>(src.size()); }
};

// Random multigraph: the last source and destination node stay isolated, node 0 has a self-loop,
// and one edge is repeated.
inline Graph random_graph(std::mt19937& rng, int64_t num_src, int64_t num_dst, int64_t num_edges) {
  Graph g;
  g.num_src = num_src;
  g.num_dst = num_dst;
  if (num_edges == 0) return g;
  std::uniform_int_distribution<int64_t> us(0, std::max<int64_t>(num_src - 2, 0));
  std::uniform_int_distribution<int64_t> vs(0, std::max<int64_t>(num_dst - 2, 0));
  for (int64_t e = 0; e < num_edges; ++e) {
    g.src.push_back(us(rng));
    g.dst.push_back(vs(rng));
  }
  g.src[0] = 0;
  g.dst[0] = 0;
  if (num_edges > 2) {
    g.src[num_edges - 1] = g.src[1];
    g.dst[num_edges - 1] = g.dst[1];
  }
  return g;
}

// Compressed rows of a graph with arrays of index type I. by_dst: rows are destinations (CSC, the
// in-edge view); otherwise sources. Entries of a row are in increasing edge id.
template <typename I>
struct Compressed {
  std::vector<I> indptr, indices, eids;
  int64_t num_rows = 0, num_cols = 0;
  CompressedView view() const {
    CompressedView v;
    v.indptr = test_util::view(indptr, {static_cast<int64_t>(indptr.size())});
    v.indices = test_util::view(indices, {static_cast<int64_t>(indices.size())});
    v.eids = test_util::view(eids, {static_cast<int64_t>(eids.size())});
    v.num_rows = num_rows;
    v.num_cols = num_cols;
    return v;
  }
};

template <typename I>
Compressed<I> compress(const Graph& g, bool by_dst) {
  Compressed<I> c;
  c.num_rows = by_dst ? g.num_dst : g.num_src;
  c.num_cols = by_dst ? g.num_src : g.num_dst;
  const auto& row = by_dst ? g.dst : g.src;
  const auto& col = by_dst ? g.src : g.dst;
  c.indptr.assign(c.num_rows + 1, 0);
  for (int64_t r = 0; r < c.num_rows; ++r) {
    c.indptr[r + 1] = c.indptr[r];
    for (int64_t e = 0; e < g.num_edges(); ++e) {
      if (row[e] != r) continue;
      c.indices.push_back(static_cast<I>(col[e]));
      c.eids.push_back(static_cast<I>(e));
      ++c.indptr[r + 1];
    }
  }
  return c;
}

template <typename I>
struct Coo {
  std::vector<I> src, dst;
  int64_t num_src = 0, num_dst = 0;
  CooView view() const {
    CooView v;
    v.src = test_util::view(src, {static_cast<int64_t>(src.size())});
    v.dst = test_util::view(dst, {static_cast<int64_t>(dst.size())});
    v.num_src = num_src;
    v.num_dst = num_dst;
    return v;
  }
};

template <typename I>
Coo<I> coo(const Graph& g) {
  Coo<I> c;
  c.src.assign(g.src.begin(), g.src.end());
  c.dst.assign(g.dst.begin(), g.dst.end());
  c.num_src = g.num_src;
  c.num_dst = g.num_dst;
  return c;
}

template <typename T>
double tolerance() {
  return sizeof(T) == 4 ? 2e-5 : 1e-12;
}

// Reference message op in double with NumPy broadcasting written out directly (independent of
// BcastInfo): returns out_shape and the messages for one (lhs row, rhs row) pair.
struct RefMessage {
  BinaryOp op;
  std::vector<int64_t> lhs_feat, rhs_feat, out_shape;

  RefMessage(BinaryOp op_, std::vector<int64_t> l, std::vector<int64_t> r)
      : op(op_), lhs_feat(std::move(l)), rhs_feat(std::move(r)) {
    if (op == BinaryOp::CopyLhs) {
      out_shape = lhs_feat;
      return;
    }
    if (op == BinaryOp::CopyRhs) {
      out_shape = rhs_feat;
      return;
    }
    const size_t rank = std::max(lhs_feat.size(), rhs_feat.size());
    out_shape.assign(rank, 1);
    for (size_t i = 0; i < rank; ++i) {
      const int64_t a = lhs_dim(rank, i), b = rhs_dim(rank, i);
      out_shape[i] = a == 1 ? b : a;
    }
    if (op == BinaryOp::Dot) out_shape.back() = 1;
  }
  int64_t lhs_dim(size_t rank, size_t i) const {
    const size_t pad = rank - lhs_feat.size();
    return i < pad ? 1 : lhs_feat[i - pad];
  }
  int64_t rhs_dim(size_t rank, size_t i) const {
    const size_t pad = rank - rhs_feat.size();
    return i < pad ? 1 : rhs_feat[i - pad];
  }

  template <typename T>
  std::vector<double> operator()(const T* l, const T* r) const {
    const int64_t out_len = prod(out_shape);
    std::vector<double> m(out_len);
    if (op == BinaryOp::CopyLhs || op == BinaryOp::CopyRhs) {
      const T* s = op == BinaryOp::CopyLhs ? l : r;
      for (int64_t k = 0; k < out_len; ++k) m[k] = s[k];
      return m;
    }
    const size_t rank = out_shape.size();
    // Walk the full broadcast index space (for Dot including the reduced last dim).
    std::vector<int64_t> full = out_shape;
    if (op == BinaryOp::Dot) full.back() = lhs_feat.back();
    std::vector<int64_t> idx(rank, 0);
    const int64_t total = prod(full);
    for (int64_t flat = 0; flat < total; ++flat) {
      int64_t lo = 0, ro = 0, oo = 0;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t ld = lhs_dim(rank, d), rd = rhs_dim(rank, d);
        lo = lo * ld + (ld == 1 ? 0 : idx[d]);
        ro = ro * rd + (rd == 1 ? 0 : idx[d]);
        oo = oo * out_shape[d] + (out_shape[d] == 1 ? 0 : idx[d]);
      }
      const double a = l[lo], b = r[ro];
      switch (op) {
        case BinaryOp::Add:
          m[oo] = a + b;
          break;
        case BinaryOp::Sub:
          m[oo] = a - b;
          break;
        case BinaryOp::Mul:
          m[oo] = a * b;
          break;
        case BinaryOp::Div:
          m[oo] = a / b;
          break;
        case BinaryOp::Dot:
          m[oo] += a * b;
          break;
        default:
          break;
      }
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < full[d]) break;
        idx[d] = 0;
      }
    }
    return m;
  }
};

// Expects `fn` to throw E whose message contains every fragment.
template <typename E, typename F>
void expect_error(F&& fn, std::initializer_list<const char*> fragments) {
  try {
    fn();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    for (const char* f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
          << "message '" << e.what() << "' lacks '" << f << "'";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

}  // namespace nodeweave::sparse::test_util
