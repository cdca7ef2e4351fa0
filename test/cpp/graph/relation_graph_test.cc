// RelationGraph: format conversions agree with each other, rows keep edge-id order, bad ids and
// shapes raise, reverse/with_formats/astype share or convert what they should.
#include "graph/relation_graph.h"

#include <gtest/gtest.h>

#include "core_framework/runtime/error.h"

#include <random>
#include <vector>

namespace nodeweave::graph {
namespace {

template <typename I>
IdArray ids(const std::vector<int64_t>& v) {
  std::vector<I> t(v.begin(), v.end());
  return IdArray::from_host(t.data(), DTypeOf<I>::value, static_cast<int64_t>(t.size()),
                            DTypeOf<I>::value);
}

template <typename I>
std::vector<int64_t> vals(const IdArray& a) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < a.length; ++i) out.push_back(a.data<I>()[i]);
  return out;
}

template <typename I>
class RelationGraphTest : public ::testing::Test {};
using IdTypes = ::testing::Types<int32_t, int64_t>;
TYPED_TEST_SUITE(RelationGraphTest, IdTypes);

TYPED_TEST(RelationGraphTest, FormatsAgreeOnRandomMultigraph) {
  using I = TypeParam;
  std::mt19937 rng(3);
  const int64_t ns = 7, nd = 5, ne = 40;  // multi-edges certain, node 4 of src likely isolated
  std::vector<int64_t> s(ne), d(ne);
  for (int64_t i = 0; i < ne; ++i) {
    s[i] = rng() % (ns - 1);
    d[i] = rng() % nd;
  }
  auto g = RelationGraph::from_coo(ns, nd, ids<I>(s), ids<I>(d));
  const auto& csc = g->in_csc();
  const auto& csr = g->out_csr();
  auto ip = vals<I>(csc.indptr), ix = vals<I>(csc.indices), ei = vals<I>(csc.eids);
  ASSERT_EQ(ip.size(), static_cast<size_t>(nd + 1));
  for (int64_t v = 0; v < nd; ++v) {
    for (int64_t k = ip[v]; k < ip[v + 1]; ++k) {
      EXPECT_EQ(d[ei[k]], v);
      EXPECT_EQ(s[ei[k]], ix[k]);
      if (k > ip[v]) EXPECT_LT(ei[k - 1], ei[k]) << "rows keep edge-id order";
    }
  }
  auto op = vals<I>(csr.indptr), ox = vals<I>(csr.indices), oe = vals<I>(csr.eids);
  for (int64_t u = 0; u < ns; ++u) {
    for (int64_t k = op[u]; k < op[u + 1]; ++k) {
      EXPECT_EQ(s[oe[k]], u);
      EXPECT_EQ(d[oe[k]], ox[k]);
    }
  }
  // A graph built from CSC only recovers the same COO.
  auto only_csc = g->with_formats(kCsc);
  EXPECT_EQ(only_csc->created_formats(), kCsc);
  auto g2 = RelationGraph::from_csr(ns, nd, csr.indptr, csr.indices, csr.eids);
  EXPECT_EQ(vals<I>(g2->coo().src), s);
  EXPECT_EQ(vals<I>(g2->coo().dst), d);
  auto deg = vals<int64_t>(g->in_degrees());
  for (int64_t v = 0; v < nd; ++v) EXPECT_EQ(deg[v], ip[v + 1] - ip[v]);
  auto r = g->reverse();
  EXPECT_EQ(r->num_src(), nd);
  EXPECT_EQ(vals<I>(r->coo().src), d);
  EXPECT_EQ(r->out_csr().indptr.storage, csc.indptr.storage) << "reverse shares arrays";
}

// Backward kernels reverse the graph on every call: reverse_for_kernels() converts once, caching
// the out-edge CSR on the original, so every reversed graph shares one CSC.
TYPED_TEST(RelationGraphTest, ReverseForKernelsConvertsOnce) {
  using I = TypeParam;
  auto g = RelationGraph::from_coo(4, 3, ids<I>({0, 3, 1, 3}), ids<I>({2, 0, 2, 1}));
  g->in_csc();  // what a forward kernel creates
  EXPECT_FALSE(g->created_formats() & kCsr);
  auto r1 = g->reverse_for_kernels();
  EXPECT_TRUE(g->created_formats() & kCsr) << "the CSR is cached on the original";
  EXPECT_TRUE(r1->created_formats() & kCsc);
  auto r2 = g->reverse_for_kernels();
  EXPECT_EQ(r1->in_csc().indptr.storage, r2->in_csc().indptr.storage);
  EXPECT_EQ(r1->in_csc().indptr.storage, g->out_csr().indptr.storage);
  EXPECT_EQ(vals<I>(r2->coo().src), (std::vector<int64_t>{2, 0, 2, 1}));
  // A graph that may not hold a CSR is reversed as it is.
  auto coo_only = g->with_formats(kCoo);
  EXPECT_EQ(coo_only->reverse_for_kernels()->created_formats(), kCoo);
}

TYPED_TEST(RelationGraphTest, LargeGraphUsesParallelSortAndStaysStable) {
  using I = TypeParam;
  std::mt19937 rng(5);
  const int64_t n = 1000, ne = 300000;
  std::vector<int64_t> s(ne), d(ne);
  for (int64_t i = 0; i < ne; ++i) {
    s[i] = rng() % n;
    d[i] = rng() % n;
  }
  auto g = RelationGraph::from_coo(n, n, ids<I>(s), ids<I>(d));
  auto ip = vals<I>(g->in_csc().indptr), ei = vals<I>(g->in_csc().eids);
  for (int64_t v = 0; v < n; ++v) {
    for (int64_t k = ip[v]; k < ip[v + 1]; ++k) {
      ASSERT_EQ(d[ei[k]], v);
      if (k > ip[v]) ASSERT_LT(ei[k - 1], ei[k]);
    }
  }
}

TEST(RelationGraph, EmptyAndEdgeless) {
  auto g = RelationGraph::from_coo(0, 0, ids<int64_t>({}), ids<int64_t>({}));
  EXPECT_EQ(g->in_csc().indptr.length, 1);
  EXPECT_EQ(g->out_degrees().length, 0);
  auto h = RelationGraph::from_coo(3, 3, ids<int64_t>({}), ids<int64_t>({}));
  EXPECT_EQ(vals<int64_t>(h->in_degrees()), (std::vector<int64_t>{0, 0, 0}));
}

TEST(RelationGraph, BadInputsRaise) {
  EXPECT_THROW(RelationGraph::from_coo(3, 3, ids<int64_t>({0, 1}), ids<int64_t>({0})), ValueError);
  EXPECT_THROW(RelationGraph::from_coo(3, 3, ids<int64_t>({0, 3}), ids<int64_t>({0, 1})),
               ValueError);
  EXPECT_THROW(RelationGraph::from_coo(3, 3, ids<int64_t>({0, 1}), ids<int64_t>({-1, 1})),
               ValueError);
  EXPECT_THROW(RelationGraph::from_coo(3, 3, ids<int32_t>({0}), ids<int64_t>({0})), TypeError);
  EXPECT_THROW(RelationGraph::from_coo(-1, 3, ids<int64_t>({}), ids<int64_t>({})), ValueError);
  // indptr not monotone, eids not a permutation
  EXPECT_THROW(
      RelationGraph::from_csr(2, 2, ids<int64_t>({0, 2, 1}), ids<int64_t>({0}), ids<int64_t>({})),
      ValueError);
  EXPECT_THROW(RelationGraph::from_csr(2, 2, ids<int64_t>({0, 1, 2}), ids<int64_t>({0, 1}),
                                       ids<int64_t>({1, 1})),
               ValueError);
  auto g = RelationGraph::from_coo(2, 2, ids<int64_t>({0}), ids<int64_t>({1}), kCsr);
  EXPECT_THROW(g->in_csc(), ValueError);
  try {
    RelationGraph::from_coo(3, 3, ids<int64_t>({0, 7}), ids<int64_t>({0, 1}));
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("src[1] = 7"), std::string::npos) << e.what();
  }
}

TEST(RelationGraph, AsTypeConvertsEveryFormat) {
  auto g = RelationGraph::from_coo(3, 2, ids<int64_t>({2, 0, 1}), ids<int64_t>({1, 1, 0}));
  g->in_csc();
  auto h = g->astype(DType::Int32);
  EXPECT_EQ(h->id_dtype(), DType::Int32);
  EXPECT_EQ(vals<int32_t>(h->in_csc().indices), (std::vector<int64_t>{1, 2, 0}));
}

}  // namespace
}  // namespace nodeweave::graph
