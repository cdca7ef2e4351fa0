// Subgraphs of one relation (DGL's node_subgraph, edge_subgraph, in_subgraph, out_subgraph for one
// edge type): which edges to keep and how to number the nodes of the result. Node and edge id
// lists are int64 whatever the graph's id type; the result graph has the graph's id type.
//
// Edges are found one of two ways, with the same result: a scan of the edge list with dense
// per-node membership arrays (O(edges + nodes), parallel), or, when a compressed format whose rows
// are the given nodes already exists and those rows hold few edges, a walk over just those rows
// followed by a sort by edge id (O(their degree)), which is what makes small subgraphs of large
// graphs cheap. Either way the kept edges come out in increasing edge id, so features gathered by
// the returned ids are gathered in a fixed order.
#pragma once
#include <cstdint>
#include <vector>

#include "graph/relation_graph.h"

namespace nodeweave::graph {

// How a subgraph numbers its nodes.
enum class Relabel {
  kKeep,     // every node keeps its id and the node counts stay
  kPerSide,  // only the endpoints of kept edges remain, sources and destinations numbered apart
             // (a relation between two node types)
  kShared,   // only the endpoints remain, one numbering for both sides (a relation from a node
             // type to itself; needs num_src == num_dst)
};

struct Subgraph {
  RelationGraphPtr graph;
  std::vector<int64_t> eids;  // original id of each edge of `graph`
  // Original id of each source / destination node of `graph`; empty when nodes kept their ids.
  std::vector<int64_t> src_nodes, dst_nodes;
};

// The edges whose source is among src_nodes and destination among dst_nodes, in increasing edge
// id. With `relabel`, source i of the result is src_nodes[i] and destination j is dst_nodes[j];
// without, nodes keep their ids. Ids must be distinct (ValueError) and in range (IndexError, naming
// the list and position).
Subgraph induced_subgraph(const RelationGraph& g, const std::vector<int64_t>& src_nodes,
                          const std::vector<int64_t>& dst_nodes, bool relabel);

// Edge i of the result is edge eids[i] (any order; repeats allowed). Relabelled nodes are listed
// in increasing original id, as DGL's edge_subgraph.
Subgraph edge_subgraph(const RelationGraph& g, const std::vector<int64_t>& eids, Relabel relabel);

// Every edge entering `nodes` (in_subgraph) or leaving them (out_subgraph), in increasing edge id.
// Repeated nodes count once. Relabelled nodes are listed in increasing original id.
Subgraph in_subgraph(const RelationGraph& g, const std::vector<int64_t>& nodes, Relabel relabel);
Subgraph out_subgraph(const RelationGraph& g, const std::vector<int64_t>& nodes, Relabel relabel);

// The relation's COO in edge-id order, also when its allowed formats exclude COO (then converted
// from a compressed format and not cached). CPU only.
CooArrays edge_list(const RelationGraph& g);

}  // namespace nodeweave::graph
