// HaloParts: each part checked against a brute-force set reference of the HALO rules (inner nodes,
// num_hops in-edge rings, in-edges of rings below num_hops, out-edges of inner nodes) on random
// homogeneous and two-type graphs, the local numbering (inner first by new id, then HALO by new
// id), local endpoints that give back the input's edges, every edge inner in exactly one part, and
// the errors.
#include "distributed/halo_parts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "core_framework/runtime/error.h"

namespace nodeweave::distributed {
namespace {

using graph::IdArray;
using graph::RelationGraph;

struct Edges {
  std::vector<int64_t> s, d;
  int64_t st, dt;
};

TypedGraph build(const std::vector<int64_t>& num_nodes, const std::vector<Edges>& rels,
                 DType idtype) {
  TypedGraph g;
  g.num_nodes = num_nodes;
  for (const Edges& r : rels) {
    const int64_t e = static_cast<int64_t>(r.s.size());
    g.relations.push_back(
        {RelationGraph::from_coo(num_nodes[r.st], num_nodes[r.dt],
                                 IdArray::from_host(r.s.data(), DType::Int64, e, idtype),
                                 IdArray::from_host(r.d.data(), DType::Int64, e, idtype)),
         r.st, r.dt});
  }
  return g;
}

// Nodes are (type, id) pairs, edges (relation, id) pairs.
using Node = std::pair<int64_t, int64_t>;
using Edge = std::pair<int64_t, int64_t>;

// The rules of halo_parts.h written with sets, one edge at a time.
void reference(const std::vector<int64_t>& num_nodes, const std::vector<Edges>& rels,
               const std::vector<std::vector<int64_t>>& part, int64_t p, int64_t hops,
               std::set<Node>* nodes, std::set<Edge>* edges) {
  std::set<Node> inner;
  for (size_t t = 0; t < num_nodes.size(); ++t)
    for (int64_t i = 0; i < num_nodes[t]; ++i)
      if (part[t][i] == p) inner.insert({static_cast<int64_t>(t), i});
  std::set<Node> seen = inner, ring = inner;
  std::set<Node> into;  // rings 0 .. hops - 1
  for (int64_t h = 0; h < hops; ++h) {
    into.insert(ring.begin(), ring.end());
    std::set<Node> next;
    for (size_t r = 0; r < rels.size(); ++r)
      for (size_t e = 0; e < rels[r].s.size(); ++e)
        if (ring.count({rels[r].dt, rels[r].d[e]})) {
          const Node u{rels[r].st, rels[r].s[e]};
          if (!seen.count(u)) next.insert(u);
        }
    seen.insert(next.begin(), next.end());
    ring = next;
  }
  *nodes = seen;
  edges->clear();
  for (size_t r = 0; r < rels.size(); ++r)
    for (size_t e = 0; e < rels[r].s.size(); ++e) {
      const Node u{rels[r].st, rels[r].s[e]}, v{rels[r].dt, rels[r].d[e]};
      if (into.count(v) || inner.count(u)) edges->insert({static_cast<int64_t>(r), e});
      if (inner.count(u)) nodes->insert(v);
    }
}

void check_parts(const std::vector<int64_t>& num_nodes, const std::vector<Edges>& rels,
                 const std::vector<std::vector<int64_t>>& part, int64_t k, int64_t hops,
                 DType idtype) {
  std::vector<int64_t> homo;
  for (const auto& pt : part) homo.insert(homo.end(), pt.begin(), pt.end());
  const HaloParts hp(build(num_nodes, rels, idtype), homo, k, hops);
  const RangeRelabel& rl = hp.relabel();
  std::vector<std::vector<int64_t>> inner_count(rels.size());
  for (size_t r = 0; r < rels.size(); ++r) inner_count[r].assign(rels[r].s.size(), 0);
  for (int64_t p = 0; p < k; ++p) {
    const LocalPart lp = hp.extract(p);
    std::set<Node> want_nodes, got_nodes;
    std::set<Edge> want_edges, got_edges;
    reference(num_nodes, rels, part, p, hops, &want_nodes, &want_edges);
    for (size_t t = 0; t < num_nodes.size(); ++t) {
      const auto& ids = lp.node_ids[t];
      const int64_t inner = lp.num_inner_nodes[t];
      EXPECT_EQ(inner, rl.node_offsets[t][p + 1] - rl.node_offsets[t][p]);
      for (size_t i = 0; i < ids.size(); ++i) {
        if (static_cast<int64_t>(i) < inner) EXPECT_EQ(ids[i], rl.node_offsets[t][p] + i);
        else if (static_cast<int64_t>(i) > inner) EXPECT_LT(ids[i - 1], ids[i]);
        EXPECT_EQ(lp.orig_node_ids[t][i], rl.orig_node[t][ids[i]]);
        EXPECT_EQ(part[t][lp.orig_node_ids[t][i]] == p, static_cast<int64_t>(i) < inner);
        got_nodes.insert({static_cast<int64_t>(t), lp.orig_node_ids[t][i]});
      }
    }
    EXPECT_EQ(got_nodes, want_nodes) << "part " << p;
    for (size_t r = 0; r < rels.size(); ++r) {
      const auto& ids = lp.edge_ids[r];
      const int64_t inner = lp.num_inner_edges[r];
      for (size_t i = 0; i < ids.size(); ++i) {
        const int64_t x = lp.orig_edge_ids[r][i];
        EXPECT_EQ(rl.orig_edge[r][ids[i]], x);
        if (static_cast<int64_t>(i) < inner) {
          EXPECT_EQ(ids[i], rl.edge_offsets[r][p] + i);
          ++inner_count[r][x];
        } else if (static_cast<int64_t>(i) > inner) {
          EXPECT_LT(ids[i - 1], ids[i]);
        }
        EXPECT_EQ(part[rels[r].dt][rels[r].d[x]] == p, static_cast<int64_t>(i) < inner);
        // Local endpoints name the input edge's endpoints.
        EXPECT_EQ(lp.orig_node_ids[rels[r].st][lp.src[r][i]], rels[r].s[x]);
        EXPECT_EQ(lp.orig_node_ids[rels[r].dt][lp.dst[r][i]], rels[r].d[x]);
        EXPECT_TRUE(got_edges.insert({static_cast<int64_t>(r), x}).second) << "edge twice";
      }
    }
    EXPECT_EQ(got_edges, want_edges) << "part " << p;
  }
  for (const auto& counts : inner_count)
    for (int64_t c : counts) EXPECT_EQ(c, 1);  // each edge is inner in exactly one part
}

std::vector<int64_t> random_ids(std::mt19937_64& rng, int64_t count, int64_t bound) {
  std::vector<int64_t> v(static_cast<size_t>(count));
  for (auto& x : v) x = static_cast<int64_t>(rng() % static_cast<uint64_t>(bound));
  return v;
}

TEST(HaloParts, PathGraphOneHop) {
  // 0 -> 1 -> 2 -> 3 -> 4 -> 5, parts {0, 1, 2} and {3, 4, 5}.
  const std::vector<Edges> rels = {{{0, 1, 2, 3, 4}, {1, 2, 3, 4, 5}, 0, 0}};
  const HaloParts hp(build({6}, rels, DType::Int64), {0, 0, 0, 1, 1, 1}, 2, 1);
  const LocalPart a = hp.extract(0), b = hp.extract(1);
  EXPECT_EQ(a.orig_node_ids[0], (std::vector<int64_t>{0, 1, 2, 3}));  // 3: out-neighbour of 2
  EXPECT_EQ(a.orig_edge_ids[0], (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(a.num_inner_edges[0], 2);
  EXPECT_EQ(b.orig_node_ids[0], (std::vector<int64_t>{3, 4, 5, 2}));  // 2: source of 2 -> 3
  EXPECT_EQ(b.orig_edge_ids[0], (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(b.src[0], (std::vector<int64_t>{3, 0, 1}));
  EXPECT_EQ(b.dst[0], (std::vector<int64_t>{0, 1, 2}));
}

TEST(HaloParts, RandomGraphsMatchTheSetReference) {
  std::mt19937_64 rng(11);
  for (int64_t hops : {1, 2, 3})
    for (DType idtype : {DType::Int32, DType::Int64}) {
      const int64_t n = 60, k = 4;
      const std::vector<Edges> rels = {{random_ids(rng, 150, n), random_ids(rng, 150, n), 0, 0}};
      check_parts({n}, rels, {random_ids(rng, n, k)}, k, hops, idtype);
    }
}

TEST(HaloParts, TwoNodeTypesMatchTheSetReference) {
  std::mt19937_64 rng(12);
  const std::vector<int64_t> num_nodes = {30, 20};
  for (int64_t hops : {1, 2}) {
    // users -> items, items -> users, users -> users; one part (2) owns no item.
    const std::vector<Edges> rels = {
        {random_ids(rng, 80, 30), random_ids(rng, 80, 20), 0, 1},
        {random_ids(rng, 60, 20), random_ids(rng, 60, 30), 1, 0},
        {random_ids(rng, 40, 30), random_ids(rng, 40, 30), 0, 0}};
    std::vector<int64_t> items = random_ids(rng, 20, 2);
    check_parts(num_nodes, rels, {random_ids(rng, 30, 3), items}, 3, hops, DType::Int64);
  }
}

TEST(HaloParts, ErrorsNameTheArgument) {
  const std::vector<Edges> rels = {{{0, 1}, {1, 2}, 0, 0}};
  EXPECT_THROW(HaloParts(build({3}, rels, DType::Int64), {0, 0, 1}, 2, 0), ValueError);
  EXPECT_THROW(HaloParts(build({3}, rels, DType::Int64), {0, 0}, 2, 1), ValueError);
  const HaloParts hp(build({3}, rels, DType::Int64), {0, 0, 1}, 2, 1);
  EXPECT_THROW(hp.extract(2), IndexError);
  EXPECT_THROW(hp.extract(-1), IndexError);
}

}  // namespace
}  // namespace nodeweave::distributed
