// Packed rows (sampling/packed_rows.h) are a copy laid out for the sampler, never a different
// sample: the packed pairs equal the adjacency's indices and edge ids entry by entry, the alias
// entries equal the alias tables, and sampling through them gives the exact edges of the unpacked
// path, uniform and weighted, with and without replacement, in- and out-edges, int32 and int64 ids.
#include "sampling/packed_rows.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "graph/relation_graph.h"
#include "sampling/neighbor_sampler.h"

namespace nodeweave::sampling {
namespace {

using graph::IdArray;
using graph::RelationGraph;
using graph::RelationGraphPtr;

RelationGraphPtr skewed_graph(int64_t n, int64_t e, DType idtype) {
  std::mt19937_64 rng(3);
  std::vector<int64_t> s(e), d(e);
  for (int64_t i = 0; i < e; ++i) {  // a few hubs of high in-degree among many small rows
    s[i] = static_cast<int64_t>(rng() % n);
    d[i] = static_cast<int64_t>((rng() % 3 == 0) ? rng() % 5 : rng() % n);
  }
  return RelationGraph::from_coo(n, n, IdArray::from_host(s.data(), DType::Int64, e, idtype),
                                 IdArray::from_host(d.data(), DType::Int64, e, idtype));
}

int64_t at(const IdArray& a, int64_t i) {
  return a.dtype == DType::Int32 ? a.data<int32_t>()[i] : a.data<int64_t>()[i];
}

TEST(PackedRows, PairsAndAliasEntriesCopyTheAdjacency) {
  for (DType idtype : {DType::Int32, DType::Int64}) {
    auto g = skewed_graph(500, 7000, idtype);
    const graph::CompressedArrays& csc = g->in_csc();
    ASSERT_TRUE(PackedRows::packable(csc, 500));
    std::vector<double> w(7000);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>((i * 7) % 11);  // zeros too
    const WeightedRows rows = build_weighted_rows(csc, 500, host_float64_view(w));
    const PackedRows plain = PackedRows::pack(csc);
    const PackedRows weighted = PackedRows::pack(csc, &rows);
    EXPECT_FALSE(plain.weighted());
    EXPECT_TRUE(weighted.weighted());
    ASSERT_EQ(plain.size(), 7000);
    for (int64_t i = 0; i < 7000; ++i) {
      for (const PackedRows* p : {&plain, &weighted}) {
        EXPECT_EQ(p->pair(i).neighbor, static_cast<uint32_t>(at(csc.indices, i)));
        EXPECT_EQ(p->pair(i).eid, static_cast<uint32_t>(at(csc.eids, i)));
      }
      EXPECT_EQ(weighted.alias(i).keep, rows.entry[static_cast<size_t>(i)].keep);
      EXPECT_EQ(weighted.alias(i).alias, rows.entry[static_cast<size_t>(i)].alias);
    }
  }
}

TEST(PackedRows, OnlyThirtyTwoBitIdsArePacked) {
  auto g = skewed_graph(50, 300, DType::Int64);
  EXPECT_TRUE(PackedRows::packable(g->in_csc(), std::numeric_limits<uint32_t>::max()));
  EXPECT_FALSE(PackedRows::packable(g->in_csc(), int64_t{1} << 32));
}

TEST(PackedRows, SamplingThroughThemGivesTheUnpackedSample) {
  for (DType idtype : {DType::Int32, DType::Int64}) {
    auto g = skewed_graph(2000, 40000, idtype);
    std::vector<double> w(40000);
    std::mt19937_64 rng(9);
    for (auto& x : w) x = (rng() % 4 == 0) ? 0.0 : static_cast<double>(rng() % 1000) / 37.0;
    std::vector<int64_t> seeds;
    for (int64_t v = 0; v < 2000; v += 3) seeds.push_back(v);
    for (bool out_edges : {false, true}) {
      const graph::CompressedArrays& adj = out_edges ? g->out_csr() : g->in_csc();
      WeightedRows rows = build_weighted_rows(adj, 2000, host_float64_view(w));
      const PackedRows plain = PackedRows::pack(adj);
      const PackedRows weighted = PackedRows::pack(adj, &rows);
      WeightedRows nonzero_only;  // what the block sampler keeps once the entries are packed
      nonzero_only.nonzero = rows.nonzero;
      for (bool use_weights : {false, true}) {
        for (bool replace : {false, true}) {
          for (int64_t fanout : {1, 4, 25, -1}) {
            NeighborSampleOptions opt;
            opt.fanout = fanout;
            opt.replace = replace;
            opt.key = 77;
            if (use_weights) {
              opt.weights = host_float64_view(w);
              opt.weighted_rows = &rows;
            }
            const SampledEdges want = sample_neighbors_unchecked(
                adj, seeds.data(), static_cast<int64_t>(seeds.size()), opt);
            if (use_weights) opt.weighted_rows = &nonzero_only;
            opt.packed = use_weights ? &weighted : &plain;
            const SampledEdges got = sample_neighbors_unchecked(
                adj, seeds.data(), static_cast<int64_t>(seeds.size()), opt);
            EXPECT_GT(want.size(), 0);
            EXPECT_EQ(got.eid, want.eid) << "weighted " << use_weights << " replace " << replace
                                         << " fanout " << fanout << " out " << out_edges;
            EXPECT_EQ(got.neighbor, want.neighbor);
            EXPECT_EQ(got.seed_pos, want.seed_pos);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace nodeweave::sampling
