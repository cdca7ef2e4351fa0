// Subgraphs of one relation against brute-force loops over its COO, on random graphs with both id
// types: the induced subgraph (edge scan on a COO-only graph, row walks once CSR/CSC exist), the
// edge subgraph in the given order, in/out subgraphs, each with every numbering; a relation
// without the COO format; the same result at 1 and 2 threads; typed errors naming the argument.
#include "graph/subgraph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::graph {
namespace {

struct Coo {
  std::vector<int64_t> src, dst;
};

Coo random_coo(int64_t ns, int64_t nd, int64_t e, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Coo c;
  for (int64_t i = 0; i < e; ++i) {
    c.src.push_back(static_cast<int64_t>(rng() % ns));
    // Hubs: a quarter of the edges go to the first four nodes (long rows in the CSC).
    c.dst.push_back(static_cast<int64_t>(rng() % 4 == 0 ? rng() % 4 : rng() % nd));
  }
  return c;
}

RelationGraphPtr make(int64_t ns, int64_t nd, const Coo& c, DType dt,
                      uint8_t formats = kAllFormats) {
  const auto n = static_cast<int64_t>(c.src.size());
  return RelationGraph::from_coo(ns, nd, IdArray::from_host(c.src.data(), DType::Int64, n, dt),
                                 IdArray::from_host(c.dst.data(), DType::Int64, n, dt), formats);
}

std::vector<int64_t> vec(const IdArray& a) {
  std::vector<int64_t> v(static_cast<size_t>(a.length));
  for (int64_t i = 0; i < a.length; ++i)
    v[i] = a.dtype == DType::Int32 ? a.data<int32_t>()[i] : a.data<int64_t>()[i];
  return v;
}

std::vector<int64_t> sample(int64_t n, int64_t k, uint64_t seed) {
  std::vector<int64_t> all(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) all[i] = i;
  std::shuffle(all.begin(), all.end(), std::mt19937_64(seed));
  all.resize(static_cast<size_t>(k));
  return all;
}

// The expected subgraph: edges (in `order`), their endpoints mapped through src_map / dst_map.
struct Expected {
  std::vector<int64_t> eids, src, dst;
};

void expect_graph(const Subgraph& s, const Expected& want, int64_t num_src, int64_t num_dst) {
  EXPECT_EQ(s.eids, want.eids);
  EXPECT_EQ(vec(s.graph->coo().src), want.src);
  EXPECT_EQ(vec(s.graph->coo().dst), want.dst);
  EXPECT_EQ(s.graph->num_src(), num_src);
  EXPECT_EQ(s.graph->num_dst(), num_dst);
}

Expected brute_induced(const Coo& c, const std::vector<int64_t>& sn, const std::vector<int64_t>& dn,
                       bool relabel) {
  std::map<int64_t, int64_t> sp, dp;
  for (size_t i = 0; i < sn.size(); ++i) sp[sn[i]] = static_cast<int64_t>(i);
  for (size_t i = 0; i < dn.size(); ++i) dp[dn[i]] = static_cast<int64_t>(i);
  Expected x;
  for (size_t e = 0; e < c.src.size(); ++e) {
    if (!sp.count(c.src[e]) || !dp.count(c.dst[e])) continue;
    x.eids.push_back(static_cast<int64_t>(e));
    x.src.push_back(relabel ? sp[c.src[e]] : c.src[e]);
    x.dst.push_back(relabel ? dp[c.dst[e]] : c.dst[e]);
  }
  return x;
}

TEST(InducedSubgraph, MatchesBruteForceOnBothRoutesAndIdTypes) {
  for (DType dt : {DType::Int32, DType::Int64}) {
    const Coo c = random_coo(300, 300, 5000, 1);
    for (int64_t k : {3, 40, 250}) {
      const std::vector<int64_t> nodes = sample(300, k, k);
      const std::vector<int64_t> other = sample(300, k + 5, k + 1);
      for (bool relabel : {true, false}) {
        // A fresh graph holds only COO: the scan. Once CSR and CSC exist, small sets walk rows.
        for (bool compressed : {false, true}) {
          auto g = make(300, 300, c, dt);
          if (compressed) g->out_csr(), g->in_csc();
          const int64_t n1 = relabel ? k : 300, n2 = relabel ? k + 5 : 300;
          expect_graph(induced_subgraph(*g, nodes, nodes, relabel),
                       brute_induced(c, nodes, nodes, relabel), n1, n1);
          expect_graph(induced_subgraph(*g, nodes, other, relabel),
                       brute_induced(c, nodes, other, relabel), n1, n2);
          expect_graph(induced_subgraph(*g, other, nodes, relabel),
                       brute_induced(c, other, nodes, relabel), n2, n1);
          const Subgraph s = induced_subgraph(*g, nodes, other, relabel);
          EXPECT_EQ(s.src_nodes, relabel ? nodes : std::vector<int64_t>{});
          EXPECT_EQ(s.dst_nodes, relabel ? other : std::vector<int64_t>{});
        }
      }
    }
  }
}

TEST(InducedSubgraph, BipartiteAndEmpty) {
  const Coo c = random_coo(50, 20, 400, 2);
  const auto g = make(50, 20, c, DType::Int64);
  const std::vector<int64_t> s = {49, 0, 7}, d = {19, 3};
  expect_graph(induced_subgraph(*g, s, d, true), brute_induced(c, s, d, true), 3, 2);
  expect_graph(induced_subgraph(*g, {}, d, true), Expected{}, 0, 2);
  const auto empty = make(5, 5, Coo{}, DType::Int32);
  expect_graph(induced_subgraph(*empty, {1, 2}, {1, 2}, true), Expected{}, 2, 2);
}

Expected brute_edges(const Coo& c, const std::vector<int64_t>& eids, Relabel relabel,
                     std::vector<int64_t>* src_nodes, std::vector<int64_t>* dst_nodes) {
  std::set<int64_t> su, du;
  for (int64_t e : eids) su.insert(c.src[e]), du.insert(c.dst[e]);
  if (relabel == Relabel::kShared) {
    su.insert(du.begin(), du.end());
    du = su;
  }
  src_nodes->assign(su.begin(), su.end());
  dst_nodes->assign(du.begin(), du.end());
  auto pos = [](const std::vector<int64_t>& v, int64_t x) {
    return static_cast<int64_t>(std::lower_bound(v.begin(), v.end(), x) - v.begin());
  };
  Expected x;
  for (int64_t e : eids) {
    x.eids.push_back(e);
    x.src.push_back(relabel == Relabel::kKeep ? c.src[e] : pos(*src_nodes, c.src[e]));
    x.dst.push_back(relabel == Relabel::kKeep ? c.dst[e] : pos(*dst_nodes, c.dst[e]));
  }
  if (relabel == Relabel::kKeep) src_nodes->clear(), dst_nodes->clear();
  return x;
}

TEST(EdgeSubgraph, GivenOrderAndEveryNumbering) {
  for (DType dt : {DType::Int32, DType::Int64}) {
    const Coo c = random_coo(200, 200, 3000, 3);
    std::vector<int64_t> eids = sample(3000, 700, 4);
    eids.push_back(eids[0]);  // a repeat
    for (uint8_t formats : {uint8_t{kAllFormats}, uint8_t{kCsc}, uint8_t{kCsr}}) {
      const auto g = make(200, 200, c, dt, formats);
      for (Relabel r : {Relabel::kKeep, Relabel::kPerSide, Relabel::kShared}) {
        std::vector<int64_t> sn, dn;
        const Expected want = brute_edges(c, eids, r, &sn, &dn);
        const Subgraph s = edge_subgraph(*g, eids, r);
        expect_graph(s, want, r == Relabel::kKeep ? 200 : static_cast<int64_t>(sn.size()),
                     r == Relabel::kKeep ? 200 : static_cast<int64_t>(dn.size()));
        EXPECT_EQ(s.src_nodes, sn);
        EXPECT_EQ(s.dst_nodes, dn);
      }
    }
  }
}

TEST(NeighborSubgraphs, InAndOutMatchBruteForce) {
  for (DType dt : {DType::Int32, DType::Int64}) {
    const Coo c = random_coo(400, 400, 6000, 5);
    for (int64_t k : {2, 30, 300}) {
      std::vector<int64_t> nodes = sample(400, k, 10 + k);
      nodes.push_back(nodes[0]);  // repeated nodes count once
      for (bool compressed : {false, true}) {
        auto g = make(400, 400, c, dt);
        if (compressed) g->out_csr(), g->in_csc();
        for (bool in : {true, false}) {
          const std::set<int64_t> set(nodes.begin(), nodes.end());
          std::vector<int64_t> eids;
          for (size_t e = 0; e < c.src.size(); ++e)
            if (set.count(in ? c.dst[e] : c.src[e])) eids.push_back(static_cast<int64_t>(e));
          for (Relabel r : {Relabel::kKeep, Relabel::kShared, Relabel::kPerSide}) {
            std::vector<int64_t> sn, dn;
            const Expected want = brute_edges(c, eids, r, &sn, &dn);
            const Subgraph s = in ? in_subgraph(*g, nodes, r) : out_subgraph(*g, nodes, r);
            expect_graph(s, want, r == Relabel::kKeep ? 400 : static_cast<int64_t>(sn.size()),
                         r == Relabel::kKeep ? 400 : static_cast<int64_t>(dn.size()));
            EXPECT_EQ(s.src_nodes, sn);
            EXPECT_EQ(s.dst_nodes, dn);
          }
        }
      }
    }
  }
}

TEST(Subgraphs, SameAtOneAndTwoThreads) {
  const Coo c = random_coo(50000, 50000, 300000, 6);  // several scan blocks
  const auto g = make(50000, 50000, c, DType::Int64);
  const std::vector<int64_t> nodes = sample(50000, 20000, 7);
  const std::vector<int64_t> eids = sample(300000, 150000, 8);
  auto run = [&] {
    std::vector<Subgraph> out;
    out.push_back(induced_subgraph(*g, nodes, nodes, true));
    out.push_back(edge_subgraph(*g, eids, Relabel::kShared));
    out.push_back(in_subgraph(*g, nodes, Relabel::kShared));
    return out;
  };
  const int before = get_num_threads();
  set_num_threads(1);
  const auto one = run();
  set_num_threads(2);
  const auto two = run();
  set_num_threads(before);
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].eids, two[i].eids);
    EXPECT_EQ(vec(one[i].graph->coo().src), vec(two[i].graph->coo().src));
    EXPECT_EQ(vec(one[i].graph->coo().dst), vec(two[i].graph->coo().dst));
    EXPECT_EQ(one[i].src_nodes, two[i].src_nodes);
  }
  EXPECT_EQ(one[0].eids, brute_induced(c, nodes, nodes, true).eids);
}

template <typename E>
void expect_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    FAIL() << "expected an exception mentioning " << needle;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Subgraphs, BadInputsRaiseNamedErrors) {
  const Coo c = random_coo(10, 8, 40, 9);
  for (bool compressed : {false, true}) {
    auto g = make(10, 8, c, DType::Int64);
    if (compressed) g->out_csr(), g->in_csc();
    expect_error<IndexError>(
        [&] {
          induced_subgraph(*g, {1, 10}, {0}, true);
        },
        "src_nodes[1] = 10 is out of range");
    expect_error<IndexError>([&] { induced_subgraph(*g, {1}, {-1}, true); }, "dst_nodes[0] = -1");
    expect_error<ValueError>(
        [&] {
          induced_subgraph(*g, {1, 2, 1}, {0}, true);
        },
        "src_nodes holds node 1 more than once");
    expect_error<ValueError>(
        [&] {
          induced_subgraph(*g, {1}, {3, 3}, false);
        },
        "dst_nodes holds node 3 more than once");
    expect_error<IndexError>(
        [&] {
          edge_subgraph(*g, {0, 40}, Relabel::kKeep);
        },
        "eids[1] = 40 is out of range: the relation has 40 edges");
    expect_error<IndexError>([&] { in_subgraph(*g, {8}, Relabel::kKeep); }, "nodes[0] = 8");
    expect_error<IndexError>([&] { out_subgraph(*g, {10}, Relabel::kKeep); }, "nodes[0] = 10");
    expect_error<ValueError>([&] { edge_subgraph(*g, {0}, Relabel::kShared); },
                             "as many source as destination");
  }
}

}  // namespace
}  // namespace nodeweave::graph
