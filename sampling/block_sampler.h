// Multi-layer neighbour sampling fused with block compaction (DGL's NeighborSampler.sample_blocks):
// from the output seeds, layer by layer towards the input, sample each relation's neighbours of the
// current destination nodes and compact them into a block whose sources become the next layer's
// destinations. No induced subgraph of the whole graph is ever built, and the destination position
// of every sampled edge is known from the sampler, so compaction only relabels sources.
//
// A BlockSampler is built once per (graph, sampler options): it validates the weights and builds
// their running sums once, then samples any number of batches, from any number of threads.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "graph/relation_graph.h"
#include "sampling/edge_weights.h"
#include "sampling/neighbor_sampler.h"
#include "sampling/relation_rows.h"

namespace nodeweave::sampling {

struct RelationInput {
  int src_type = 0, dst_type = 0;
  graph::RelationGraphPtr graph;
  ArrayView weights;  // optional per-edge-id probabilities or mask (data may be null)
  // Keeps the memory behind `weights` alive (NumPy or a tensor); opaque here.
  std::shared_ptr<void> weights_owner;
};

enum class BlockSamplerKind : uint8_t {
  Neighbor,  // sample_neighbors per layer (DGL's NeighborSampler)
  Labor,     // LABOR per layer (DGL's LaborSampler); see labor_sampler.h
};

struct BlockSamplerConfig {
  BlockSamplerKind kind = BlockSamplerKind::Neighbor;
  std::vector<int64_t> num_nodes;               // per node type
  std::vector<RelationInput> relations;         // canonical edge types, in the graph's order
  std::vector<std::vector<int64_t>> fanouts;    // [layer][relation], layer 0 = the input layer
  bool replace = false;
  bool edge_dir_out = false;  // sample out-edges (messages then flow from the sampled neighbours)
  // LABOR only: importance rounds, and whether every layer shares the layer-0 variates.
  int importance_sampling = 0;
  bool layer_dependency = false;
};

// One sampled layer. Node lists are global ids; the relation arrays are per canonical edge type.
struct SampledBlock {
  std::vector<std::vector<int64_t>> src_nodes;  // per type; each starts with that type's dst_nodes
  std::vector<std::vector<int64_t>> dst_nodes;  // per type
  // Per relation: the block's relation graph (edge i is entry i of its in-edge CSC) and the
  // original edge id of each of its edges.
  std::vector<graph::RelationGraphPtr> graphs;
  std::vector<std::vector<int64_t>> eids;
  // LABOR: per relation, the inverse inclusion probability of each edge; empty otherwise.
  std::vector<std::vector<double>> edge_weights;
};

// One relation's edges of a layer sampled elsewhere, grouped by seed in seed order (what
// sample_neighbors returns for the layer's destination nodes of `seed_type`).
struct LayerEdges {
  int src_type = 0, seed_type = 0;
  SampledEdges edges;
};

// The block of one layer from every relation's sampled edges (relation order), exactly as
// BlockSampler::sample compacts a layer: for samplers whose edges come from elsewhere (the
// distributed sampler gathers them from the owners of the seeds).
SampledBlock assemble_block(const std::vector<std::vector<int64_t>>& dst_nodes,
                            const std::vector<int64_t>& num_nodes, std::vector<LayerEdges>&& rels,
                            DType idtype);

class BlockSampler {
 public:
  // Validates the configuration (ValueError/TypeError naming the argument): fanout list shape and
  // values, weight arrays, relation node types. Builds every format the sampler walks.
  explicit BlockSampler(BlockSamplerConfig config);

  int num_layers() const { return static_cast<int>(config_.fanouts.size()); }
  int num_types() const { return static_cast<int>(config_.num_nodes.size()); }
  const BlockSamplerConfig& config() const { return config_; }

  // Blocks for the given seeds per node type (blocks[0] is the input layer). `exclude[r]`: sorted
  // edge ids of relation r never to sample (may be empty or shorter than the relation count).
  // `key` fixes every random choice. Seeds are checked (IndexError), duplicates rejected.
  // `idtype`: the id type of the blocks' relation graphs.
  std::vector<SampledBlock> sample(const std::vector<std::vector<int64_t>>& seeds, uint64_t key,
                                   const std::vector<std::vector<int64_t>>& exclude = {},
                                   DType idtype = DType::Int64) const;

 private:
  BlockSamplerConfig config_;
  std::vector<const graph::CompressedArrays*> adj_;     // per relation: the rows seeds are on
  // Per relation sampled by neighbour sampling (null for LABOR): alias tables and the packed
  // copy, shared with every other sampler on the same relation and weights (relation_rows.h).
  std::vector<std::shared_ptr<const RelationRows>> rows_;
};

}  // namespace nodeweave::sampling
