// BlockSampler: validation once, then per batch: sample every relation of a layer, compact, recurse.
#include "sampling/block_sampler.h"

#include <algorithm>

#include "core_framework/runtime/error.h"
#include "graph/to_block.h"
#include "sampling/labor_sampler.h"
#include "sampling/neighbor_sampler.h"
#include "sampling/random.h"

namespace nodeweave::sampling {
namespace {

// The relation graphs and edge ids of block `b`, whose node lists are set: the edges'
// destinations are already positions among the seeds (their local ids).
void add_relations(SampledBlock& b, const std::vector<int>& src_types,
                   const std::vector<int>& seed_types,
                   const std::vector<std::vector<int64_t>>& src_local,
                   std::vector<SampledEdges>& sampled, DType idtype) {
  for (size_t r = 0; r < sampled.size(); ++r) {
    b.graphs.push_back(graph::block_relation(
        static_cast<int64_t>(b.src_nodes[static_cast<size_t>(src_types[r])].size()),
        static_cast<int64_t>(b.dst_nodes[static_cast<size_t>(seed_types[r])].size()),
        src_local[r], sampled[r].seed_pos, idtype));
    b.eids.push_back(std::move(sampled[r].eid));
  }
}

}  // namespace

SampledBlock assemble_block(const std::vector<std::vector<int64_t>>& dst_nodes,
                            const std::vector<int64_t>& num_nodes, std::vector<LayerEdges>&& rels,
                            DType idtype) {
  const char* fn = "assemble_block";
  const int types = static_cast<int>(dst_nodes.size());
  NW_CHECK(num_nodes.size() == dst_nodes.size(), ValueError, fn, ": num_nodes names ",
           num_nodes.size(), " node types, dst_nodes ", types);
  std::vector<int> src_types, seed_types;
  std::vector<SampledEdges> sampled;
  std::vector<std::vector<int64_t>> src_local(rels.size());
  graph::SourceCompactor compactor(dst_nodes, true, &num_nodes, 0);
  for (size_t r = 0; r < rels.size(); ++r) {
    LayerEdges& rel = rels[r];
    NW_CHECK(rel.src_type >= 0 && rel.src_type < types && rel.seed_type >= 0 &&
                 rel.seed_type < types,
             ValueError, fn, ": relation ", r, " names a node type outside [0, ", types, ")");
    const SampledEdges& e = rel.edges;
    NW_CHECK(e.seed_pos.size() == e.eid.size() && e.neighbor.size() == e.eid.size(), ValueError,
             fn, ": relation ", r, ": seed_pos, neighbor and eid differ in length");
    const auto seeds = static_cast<int64_t>(dst_nodes[static_cast<size_t>(rel.seed_type)].size());
    const int64_t src_n = num_nodes[static_cast<size_t>(rel.src_type)];
    int64_t prev = 0;
    for (size_t i = 0; i < e.eid.size(); ++i) {
      NW_CHECK(e.seed_pos[i] >= prev && e.seed_pos[i] < seeds, ValueError, fn, ": relation ", r,
               ": seed positions must be non-decreasing and below ", seeds, ", got ", e.seed_pos[i],
               " at edge ", i);
      NW_CHECK(e.neighbor[i] >= 0 && e.neighbor[i] < src_n, IndexError, fn, ": relation ", r,
               ": neighbour ", e.neighbor[i], " is out of range: the node type has ", src_n,
               " nodes");
      prev = e.seed_pos[i];
    }
    compactor.add(rel.src_type, e.neighbor.data(), e.size(), src_local[r]);
    src_types.push_back(rel.src_type);
    seed_types.push_back(rel.seed_type);
    sampled.push_back(std::move(rel.edges));
  }
  SampledBlock b;
  b.dst_nodes = dst_nodes;
  b.src_nodes = compactor.take_src_nodes();
  add_relations(b, src_types, seed_types, src_local, sampled, idtype);
  return b;
}

BlockSampler::BlockSampler(BlockSamplerConfig config) : config_(std::move(config)) {
  const char* fn = "NeighborSampler";
  const int types = num_types();
  const size_t rels = config_.relations.size();
  NW_CHECK(!config_.fanouts.empty(), ValueError, fn, ": fanouts must name at least one layer");
  NW_CHECK(config_.importance_sampling >= -1, ValueError, fn,
           ": importance_sampling must be -1 (until converged) or a number of rounds >= 0, got ",
           config_.importance_sampling);
  NW_CHECK(config_.kind == BlockSamplerKind::Neighbor || !config_.replace, ValueError, fn,
           ": LABOR samples without replacement");
  for (size_t l = 0; l < config_.fanouts.size(); ++l) {
    NW_CHECK(config_.fanouts[l].size() == rels, ValueError, fn, ": fanouts[", l, "] has ",
             config_.fanouts[l].size(), " entries but the graph has ", rels, " edge types");
    for (int64_t f : config_.fanouts[l]) check_fanout(fn, "fanouts", f);
  }
  for (size_t r = 0; r < rels; ++r) {
    const RelationInput& rel = config_.relations[r];
    NW_CHECK(rel.graph, ValueError, fn, ": relation ", r, " has no graph");
    NW_CHECK(rel.src_type >= 0 && rel.src_type < types && rel.dst_type >= 0 &&
                 rel.dst_type < types,
             ValueError, fn, ": relation ", r, " names a node type outside [0, ", types, ")");
    NW_CHECK(rel.graph->num_src() == config_.num_nodes[static_cast<size_t>(rel.src_type)] &&
                 rel.graph->num_dst() == config_.num_nodes[static_cast<size_t>(rel.dst_type)],
             ValueError, fn, ": relation ", r, " does not match its node types' sizes");
    NW_CHECK(rel.graph->device().is_cpu(), ValueError, fn,
             ": sampling runs on the CPU; the graph is on ", rel.graph->device().str());
    adj_.push_back(config_.edge_dir_out ? &rel.graph->out_csr() : &rel.graph->in_csc());
    if (rel.weights.data) check_edge_weights(fn, "prob", rel.weights, rel.graph->num_edges());
    const int seed_type = config_.edge_dir_out ? rel.src_type : rel.dst_type;
    const int nbr_type = config_.edge_dir_out ? rel.dst_type : rel.src_type;
    // LABOR reads the weights per edge id; neighbour sampling reads the shared rows.
    rows_.push_back(config_.kind == BlockSamplerKind::Neighbor
                        ? shared_relation_rows(*adj_.back(),
                                               config_.num_nodes[static_cast<size_t>(seed_type)],
                                               config_.num_nodes[static_cast<size_t>(nbr_type)],
                                               rel.weights)
                        : nullptr);
  }
}

std::vector<SampledBlock> BlockSampler::sample(const std::vector<std::vector<int64_t>>& seeds,
                                               uint64_t key,
                                               const std::vector<std::vector<int64_t>>& exclude,
                                               DType idtype) const {
  const char* fn = "NeighborSampler";
  const int types = num_types();
  NW_CHECK(static_cast<int>(seeds.size()) == types, ValueError, fn, ": seeds name ", seeds.size(),
           " node types, the graph has ", types);
  for (int t = 0; t < types; ++t) {
    const int64_t n = config_.num_nodes[static_cast<size_t>(t)];
    for (int64_t v : seeds[static_cast<size_t>(t)])
      NW_CHECK(v >= 0 && v < n, IndexError, fn, ": seed node ", v,
               " is out of range: the node type has ", n, " nodes");
  }
  std::vector<SampledBlock> blocks(static_cast<size_t>(num_layers()));
  std::vector<std::vector<int64_t>> dst = seeds;
  for (int layer = num_layers() - 1; layer >= 0; --layer) {
    const uint64_t layer_key = derive_key(key, static_cast<uint64_t>(layer));
    std::vector<SampledEdges> sampled(config_.relations.size());
    std::vector<std::vector<double>> weights(config_.relations.size());
    std::vector<std::vector<int64_t>> src_local(config_.relations.size());
    const bool labor = config_.kind == BlockSamplerKind::Labor;
    // Sources are relabelled over the relations in order, each relation's in edge order (as
    // compact_block does); neighbour sampling feeds each chunk in as soon as it is sampled.
    graph::SourceCompactor compactor(dst, true, &config_.num_nodes, 0);
    std::vector<int> src_types(config_.relations.size()), seed_types(config_.relations.size());
    for (size_t r = 0; r < config_.relations.size(); ++r) {
      const RelationInput& rel = config_.relations[r];
      // In-edges: seeds are the relation's destinations; out-edges: its sources, and the block's
      // edges run from the sampled neighbour to the seed.
      const int seed_type = config_.edge_dir_out ? rel.src_type : rel.dst_type;
      const int nbr_type = config_.edge_dir_out ? rel.dst_type : rel.src_type;
      src_types[r] = nbr_type;
      seed_types[r] = seed_type;
      const int64_t fanout = config_.fanouts[static_cast<size_t>(layer)][r];
      const auto& s = dst[static_cast<size_t>(seed_type)];
      if (fanout == 0 || s.empty()) continue;
      const int64_t n = static_cast<int64_t>(s.size());
      if (labor) {
        // One variate per neighbour node, shared by every relation that reaches its type (and
        // by every layer with layer_dependency).
        LaborOptions lo;
        lo.fanout = fanout;
        lo.weights = rel.weights;
        lo.importance_sampling = config_.importance_sampling;
        if (r < exclude.size()) lo.exclude = exclude[r];
        lo.variate_key = derive_key(config_.layer_dependency ? key : layer_key,
                                    static_cast<uint64_t>(nbr_type) + 0x9000);
        LaborEdges le = sample_labors_unchecked(*adj_[r], s.data(), n, lo);
        weights[r] = std::move(le.weight);
        sampled[r] = std::move(static_cast<SampledEdges&>(le));
        compactor.add(nbr_type, sampled[r].neighbor.data(), sampled[r].size(), src_local[r]);
      } else {
        NeighborSampleOptions opt;
        opt.fanout = fanout;
        opt.replace = config_.replace;
        opt.weights = rel.weights;
        opt.weighted_rows = rows_[r]->weighted.get();
        opt.packed = rows_[r]->packed.get();
        if (r < exclude.size()) opt.exclude = exclude[r];
        opt.key = derive_key(layer_key, r);
        {  // sized once: regrowing lists of a million entries chunk by chunk cost a third of
           // the sampling time on R-MAT 2^20 (fresh pages zeroed by the kernel, and copies)
          const auto most = static_cast<size_t>(most_picks(*adj_[r], s.data(), n, fanout, opt.replace));
          src_local[r].reserve(most);
          sampled[r].seed_pos.reserve(most);
          sampled[r].eid.reserve(most);
        }
        sample_neighbors_streamed(*adj_[r], s.data(), n, opt, [&](SampledEdges&& part) {
          compactor.add(nbr_type, part.neighbor.data(), part.size(), src_local[r]);
          // Compacted: the block needs only the seed positions and edge ids from here on.
          part.neighbor = {};
          sampled[r].append(std::move(part));
        });
      }
    }
    SampledBlock& b = blocks[static_cast<size_t>(layer)];
    b.dst_nodes = dst;
    b.src_nodes = compactor.take_src_nodes();
    add_relations(b, src_types, seed_types, src_local, sampled, idtype);
    if (labor) b.edge_weights = std::move(weights);
    dst = b.src_nodes;
  }
  return blocks;
}

}  // namespace nodeweave::sampling
