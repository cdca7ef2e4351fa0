// Random walks, node2vec walks and PinSAGE neighbours: every step of a trace is an edge of its
// step's relation and the eid names that edge, -1 only after the walk ended (and only where it
// had to end: at a node without out-edges, or by restart), identical output at 1 and 2 threads,
// and each bad input throws the documented exception type.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "graph/relation_graph.h"
#include "sampling/pinsage.h"
#include "sampling/random_walk.h"

namespace nodeweave::sampling {
namespace {

using graph::IdArray;
using graph::RelationGraph;
using graph::RelationGraphPtr;

RelationGraphPtr make_rel(int64_t ns, int64_t nd, const std::vector<int64_t>& src,
                          const std::vector<int64_t>& dst, DType idtype = DType::Int64) {
  return RelationGraph::from_coo(
      ns, nd,
      IdArray::from_host(src.data(), DType::Int64, static_cast<int64_t>(src.size()), idtype),
      IdArray::from_host(dst.data(), DType::Int64, static_cast<int64_t>(dst.size()), idtype));
}

WalkRelation walk_rel(const RelationGraphPtr& g, int64_t st, int64_t dt, const char* name) {
  WalkRelation r;
  r.out_csr = &g->out_csr();
  r.num_src = g->num_src();
  r.num_dst = g->num_dst();
  r.src_type = st;
  r.dst_type = dt;
  r.name = name;
  return r;
}

// A small directed graph with a sink (node 5 has no out-edge), a self-loop and a multi-edge.
struct Fixture {
  std::vector<int64_t> src{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 0};
  std::vector<int64_t> dst{1, 2, 2, 3, 3, 0, 4, 4, 0, 5, 4, 1};
  RelationGraphPtr g = make_rel(6, 6, src, dst);
  WalkRelation rel = walk_rel(g, 0, 0, "('_N', '_E', '_N')");
  std::vector<int64_t> starts;
  Fixture() {
    for (int i = 0; i < 600; ++i) starts.push_back(i % 6);
  }
};

// Each pair (trace[k], trace[k+1]) is edge eids[k]; a -1 is followed only by -1; a walk ends
// early only where the rules allow (sink, restart, zero weights).
void check_traces(const WalkTraces& t, const std::vector<int64_t>& src,
                  const std::vector<int64_t>& dst, const std::vector<int64_t>& starts,
                  bool may_stop_anywhere) {
  const int64_t L = t.length;
  for (int64_t i = 0; i < t.num_walks; ++i) {
    const int64_t* nodes = &t.nodes[i * (L + 1)];
    const int64_t* eids = &t.eids[i * L];
    ASSERT_EQ(nodes[0], starts[i]);
    bool ended = false;
    for (int64_t k = 0; k < L; ++k) {
      if (ended) {
        ASSERT_EQ(nodes[k + 1], -1);
        ASSERT_EQ(eids[k], -1);
        continue;
      }
      if (nodes[k + 1] == -1) {
        ASSERT_EQ(eids[k], -1);
        // Without restart only a node with no out-edge can end a walk.
        if (!may_stop_anywhere) {
          for (int64_t s : src) ASSERT_NE(s, nodes[k]) << "walk " << i << " stopped at " << k;
        }
        ended = true;
        continue;
      }
      const int64_t e = eids[k];
      ASSERT_GE(e, 0);
      ASSERT_LT(e, static_cast<int64_t>(src.size()));
      ASSERT_EQ(src[e], nodes[k]) << "walk " << i << " step " << k;
      ASSERT_EQ(dst[e], nodes[k + 1]) << "walk " << i << " step " << k;
    }
  }
}

WalkTraces walk_at_threads(int threads, const std::vector<WalkRelation>& rels,
                           const ArrayView& starts, const RandomWalkOptions& opt) {
  const int before = get_num_threads();
  set_num_threads(threads);
  WalkTraces t = random_walk(rels, starts, opt);
  set_num_threads(before);
  return t;
}

TEST(RandomWalk, EveryStepIsAnEdgeAndPaddingFollowsTheEnd) {
  Fixture f;
  RandomWalkOptions opt;
  opt.metapath.assign(12, 0);
  opt.return_eids = true;
  opt.seed = 3;
  WalkTraces t = random_walk({f.rel}, host_int64_view(f.starts), opt);
  ASSERT_EQ(t.num_walks, 600);
  ASSERT_EQ(t.nodes.size(), 600u * 13);
  ASSERT_EQ(t.eids.size(), 600u * 12);
  ASSERT_EQ(t.types, std::vector<int64_t>(13, 0));
  check_traces(t, f.src, f.dst, f.starts, false);
  // Walks from the sink end at once; others reach it sometimes (4 -> 5).
  int reached_sink = 0;
  for (int64_t i = 0; i < 600; ++i) {
    if (f.starts[i] == 5) {
      EXPECT_EQ(t.nodes[i * 13 + 1], -1);
    }
    for (int k = 0; k < 13; ++k) reached_sink += t.nodes[i * 13 + k] == 5 && f.starts[i] != 5;
  }
  EXPECT_GT(reached_sink, 0);
}

TEST(RandomWalk, Int32GraphsWalkTheSameWay) {
  Fixture f;
  RelationGraphPtr g32 = make_rel(6, 6, f.src, f.dst, DType::Int32);
  RandomWalkOptions opt;
  opt.metapath.assign(7, 0);
  opt.return_eids = true;
  opt.seed = 11;
  WalkTraces a = random_walk({f.rel}, host_int64_view(f.starts), opt);
  WalkTraces b = random_walk({walk_rel(g32, 0, 0, "g32")}, host_int64_view(f.starts), opt);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.eids, b.eids);
}

TEST(RandomWalk, RestartEndsWalksEarlyButStepsStayEdges) {
  Fixture f;
  RandomWalkOptions opt;
  opt.metapath.assign(10, 0);
  opt.return_eids = true;
  opt.restart_prob = 0.3;
  WalkTraces t = random_walk({f.rel}, host_int64_view(f.starts), opt);
  check_traces(t, f.src, f.dst, f.starts, true);
  // Some walks from node 0 (no sink within one step) must have stopped at step 0 by restart.
  int stopped_first = 0;
  for (int64_t i = 0; i < 600; ++i) stopped_first += f.starts[i] == 0 && t.nodes[i * 11 + 1] == -1;
  EXPECT_GT(stopped_first, 5);
  EXPECT_LT(stopped_first, 60);  // 100 walks from node 0 at rate 0.3
}

TEST(RandomWalk, ZeroWeightsAreNeverTakenAndZeroRowsEndTheWalk) {
  Fixture f;
  std::vector<double> w(f.src.size(), 1.0);
  w[0] = 0;         // 0 -> 1 (eid 0) never; 0 -> 1 via eid 11 still allowed
  w[6] = w[7] = 0;  // node 3's only out-edges: its walks end there
  WalkRelation rel = f.rel;
  rel.prob = host_float64_view(w);
  RandomWalkOptions opt;
  opt.metapath.assign(8, 0);
  opt.return_eids = true;
  WalkTraces t = random_walk({rel}, host_int64_view(f.starts), opt);
  check_traces(t, f.src, f.dst, f.starts, true);
  for (int64_t i = 0; i < t.num_walks; ++i)
    for (int64_t k = 0; k < 8; ++k) {
      ASSERT_NE(t.eids[i * 8 + k], 0);
      if (t.nodes[i * 9 + k] == 3) {
        ASSERT_EQ(t.nodes[i * 9 + k + 1], -1);
      }
      if (t.nodes[i * 9 + k + 1] == -1 && t.nodes[i * 9 + k] != -1) {
        ASSERT_TRUE(t.nodes[i * 9 + k] == 3 || t.nodes[i * 9 + k] == 5);
      }
    }
}

TEST(RandomWalk, MetapathFollowsTheRelationsAndReportsTypes) {
  // users (3) -follows-> items (4) -followed by-> users
  std::vector<int64_t> us{0, 0, 1, 2, 2}, it{0, 1, 2, 3, 0};
  RelationGraphPtr ui = make_rel(3, 4, us, it);
  RelationGraphPtr iu = make_rel(4, 3, it, us);
  std::vector<WalkRelation> rels{walk_rel(ui, 0, 1, "ui"), walk_rel(iu, 1, 0, "iu")};
  RandomWalkOptions opt;
  opt.metapath = {0, 1, 0, 1, 0};
  opt.return_eids = true;
  std::vector<int64_t> starts{0, 1, 2, 0, 1, 2};
  WalkTraces t = random_walk(rels, host_int64_view(starts), opt);
  EXPECT_EQ(t.types, (std::vector<int64_t>{0, 1, 0, 1, 0, 1}));
  for (int64_t i = 0; i < t.num_walks; ++i)
    for (int64_t k = 0; k < 5; ++k) {
      const int64_t e = t.eids[i * 5 + k];
      ASSERT_GE(e, 0);  // every node has an out-edge both ways
      const bool forward = k % 2 == 0;
      ASSERT_EQ(t.nodes[i * 6 + k], forward ? us[e] : it[e]);
      ASSERT_EQ(t.nodes[i * 6 + k + 1], forward ? it[e] : us[e]);
    }
}

TEST(RandomWalk, SameTracesAtOneAndTwoThreads) {
  Fixture f;
  std::vector<int64_t> starts;
  for (int i = 0; i < 5000; ++i) starts.push_back((i * 7) % 6);
  std::vector<double> w{1, 2, 3, 1, 1, 5, 2, 2, 1, 1, 3, 4};
  WalkRelation weighted = f.rel;
  weighted.prob = host_float64_view(w);
  RandomWalkOptions opt;
  opt.metapath.assign(20, 0);
  opt.return_eids = true;
  opt.restart_prob = 0.05;
  opt.seed = 99;
  for (const WalkRelation& r : {f.rel, weighted}) {
    WalkTraces a = walk_at_threads(1, {r}, host_int64_view(starts), opt);
    WalkTraces b = walk_at_threads(2, {r}, host_int64_view(starts), opt);
    EXPECT_EQ(a.nodes, b.nodes);
    EXPECT_EQ(a.eids, b.eids);
  }
  Node2vecOptions n2v;
  n2v.p = 0.5;
  n2v.q = 2;
  n2v.walk_length = 20;
  n2v.return_eids = true;
  set_num_threads(1);
  WalkTraces a = node2vec_walk(f.rel, host_int64_view(starts), n2v);
  set_num_threads(2);
  WalkTraces b = node2vec_walk(f.rel, host_int64_view(starts), n2v);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.eids, b.eids);
  check_traces(a, f.src, f.dst, starts, false);
  // Another seed gives other walks.
  RandomWalkOptions other = opt;
  other.seed = 100;
  EXPECT_NE(walk_at_threads(2, {f.rel}, host_int64_view(starts), other).nodes,
            walk_at_threads(2, {f.rel}, host_int64_view(starts), opt).nodes);
}

TEST(Node2vec, StepsAreEdgesWithUnsortedRows) {
  // Edges inserted in descending destination order so CSR rows are not sorted by id: the
  // neighbour test must use its own sorted copy.
  std::vector<int64_t> src, dst;
  for (int64_t u = 0; u < 8; ++u)
    for (int64_t v = 7; v >= 0; --v)
      if (u != v && (u + v) % 3 != 0) {
        src.push_back(u);
        dst.push_back(v);
      }
  RelationGraphPtr g = make_rel(8, 8, src, dst);
  std::vector<int64_t> starts(400);
  for (int i = 0; i < 400; ++i) starts[i] = i % 8;
  Node2vecOptions opt;
  opt.p = 4;
  opt.q = 0.25;
  opt.walk_length = 15;
  opt.return_eids = true;
  WalkTraces t = node2vec_walk(walk_rel(g, 0, 0, "g"), host_int64_view(starts), opt);
  check_traces(t, src, dst, starts, false);
}

TEST(PinSage, CountsAreVisitsAndTheSeedIsExcluded) {
  // Items 0..3, users 0..2. Item 0's users lead to items 1 (twice as many paths) and 2.
  std::vector<int64_t> it{0, 0, 0, 1, 1, 2, 3}, us{0, 1, 2, 0, 1, 2, 2};
  RelationGraphPtr iu = make_rel(4, 3, it, us);
  RelationGraphPtr ui = make_rel(3, 4, us, it);
  std::vector<WalkRelation> rels{walk_rel(iu, 0, 1, "iu"), walk_rel(ui, 1, 0, "ui")};
  PinSageOptions opt;
  opt.metapath = {0, 1};
  opt.num_traversals = 3;
  opt.num_random_walks = 200;
  opt.num_neighbors = 2;
  opt.termination_prob = 0.5;
  std::vector<int64_t> seeds{0, 3};
  PinSageNeighbors n = pinsage_neighbors(rels, host_int64_view(seeds), opt);
  ASSERT_EQ(n.src.size(), 4u);
  EXPECT_EQ(n.dst, (std::vector<int64_t>{0, 0, 3, 3}));
  // From item 3: only user 2, who leads to items 0, 2 and 3 equally; the seed itself is dropped.
  for (size_t j = 0; j < n.src.size(); ++j) {
    EXPECT_NE(n.src[j], n.dst[j]);
    EXPECT_GT(n.counts[j], 0);
  }
  EXPECT_EQ(n.src[0], 1);  // item 0 -> users {0,1,2} -> item 1 from users 0 and 1
  EXPECT_GE(n.counts[0], n.counts[1]);
  EXPECT_GE(n.counts[2], n.counts[3]);
  // Same at two threads.
  set_num_threads(1);
  PinSageNeighbors a = pinsage_neighbors(rels, host_int64_view(seeds), opt);
  set_num_threads(2);
  std::vector<int64_t> many;
  for (int i = 0; i < 200; ++i) many.push_back(i % 4);
  PinSageNeighbors b = pinsage_neighbors(rels, host_int64_view(many), opt);
  set_num_threads(1);
  PinSageNeighbors c = pinsage_neighbors(rels, host_int64_view(many), opt);
  EXPECT_EQ(a.src, n.src);
  EXPECT_EQ(b.src, c.src);
  EXPECT_EQ(b.counts, c.counts);
}

template <typename Exc, typename F>
void expect_throw_naming(F fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no exception, expected one naming " << needle;
  } catch (const Exc& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(RandomWalk, BadInputsThrowTypedErrors) {
  Fixture f;
  RandomWalkOptions opt;
  opt.metapath.assign(3, 0);
  std::vector<int64_t> bad_start{0, 6};
  expect_throw_naming<IndexError>([&] { random_walk({f.rel}, host_int64_view(bad_start), opt); },
                                  "nodes[1] = 6");
  std::vector<int64_t> neg_start{-1};
  expect_throw_naming<IndexError>([&] { random_walk({f.rel}, host_int64_view(neg_start), opt); },
                                  "nodes[0] = -1");

  std::vector<double> w(f.src.size(), 1.0);
  w[4] = -0.5;
  WalkRelation neg = f.rel;
  neg.prob = host_float64_view(w);
  expect_throw_naming<ValueError>([&] { random_walk({neg}, host_int64_view(f.starts), opt); },
                                  "edge 4");
  w[4] = std::nan("");
  expect_throw_naming<ValueError>([&] { random_walk({neg}, host_int64_view(f.starts), opt); },
                                  "non-negative");
  std::vector<double> short_w(3, 1.0);
  WalkRelation wrong_len = f.rel;
  wrong_len.prob = host_float64_view(short_w);
  expect_throw_naming<ValueError>([&] { random_walk({wrong_len}, host_int64_view(f.starts), opt); },
                                  "shape [12]");
  WalkRelation int_prob = f.rel;
  int_prob.prob = host_int64_view(f.src);
  expect_throw_naming<TypeError>([&] { random_walk({int_prob}, host_int64_view(f.starts), opt); },
                                 "float32 or float64");

  RandomWalkOptions r = opt;
  r.restart_prob = 1.5;
  expect_throw_naming<ValueError>([&] { random_walk({f.rel}, host_int64_view(f.starts), r); },
                                  "restart_prob must be in [0, 1], got 1.5");
  r.restart_probs = {0.1, -0.1, 0.2};
  expect_throw_naming<ValueError>([&] { random_walk({f.rel}, host_int64_view(f.starts), r); },
                                  "restart_prob[1]");
  r.restart_probs = {0.1, 0.2};
  expect_throw_naming<ValueError>([&] { random_walk({f.rel}, host_int64_view(f.starts), r); },
                                  "one probability per step (3)");

  std::vector<int64_t> us{0, 1}, it{1, 0};
  RelationGraphPtr ui = make_rel(2, 3, us, it);
  std::vector<WalkRelation> hetero{walk_rel(ui, 0, 1, "ui"), walk_rel(ui, 0, 1, "ui2")};
  RandomWalkOptions mp;
  mp.metapath = {0, 1};
  std::vector<int64_t> s0{0};
  expect_throw_naming<ValueError>([&] { random_walk(hetero, host_int64_view(s0), mp); },
                                  "metapath[1] ui2 leaves from node type 0");
  mp.metapath = {0, 2};
  expect_throw_naming<ValueError>([&] { random_walk(hetero, host_int64_view(s0), mp); },
                                  "metapath[1] = 2");

  Node2vecOptions n2v;
  n2v.walk_length = 4;
  n2v.p = 0;
  expect_throw_naming<ValueError>([&] { node2vec_walk(f.rel, host_int64_view(f.starts), n2v); },
                                  "p must be a finite number > 0");
  n2v.p = 1;
  n2v.q = -2;
  expect_throw_naming<ValueError>([&] { node2vec_walk(f.rel, host_int64_view(f.starts), n2v); },
                                  "q must be");
  n2v.q = 1;
  n2v.walk_length = -1;
  expect_throw_naming<ValueError>([&] { node2vec_walk(f.rel, host_int64_view(f.starts), n2v); },
                                  "walk_length must be >= 0");
  n2v.walk_length = 2;
  expect_throw_naming<ValueError>([&] { node2vec_walk(hetero[0], host_int64_view(s0), n2v); },
                                  "one node type to itself");

  PinSageOptions ps;
  ps.metapath = {0};
  expect_throw_naming<ValueError>([&] { pinsage_neighbors(hetero, host_int64_view(s0), ps); },
                                  "return to the node type");
  ps.metapath = {0};
  ps.num_neighbors = 0;
  expect_throw_naming<ValueError>([&] { pinsage_neighbors({f.rel}, host_int64_view(s0), ps); },
                                  "num_neighbors must be >= 1");
  ps.num_neighbors = 1;
  ps.termination_prob = -0.1;
  expect_throw_naming<ValueError>([&] { pinsage_neighbors({f.rel}, host_int64_view(s0), ps); },
                                  "termination_prob");
}

}  // namespace
}  // namespace nodeweave::sampling
