// Relabelling a typed graph by a node-to-part assignment so that every part owns one contiguous
// range of ids per node type and per edge type: a range partition book. Nodes of a type are
// numbered part by part, keeping their relative order inside a part; an edge belongs to the part
// of its destination node (where its message is aggregated), and edges of a relation are numbered
// the same way. Owner and local id of any id then follow from the range offsets alone.
#pragma once
#include <cstdint>
#include <vector>

#include "distributed/typed_graph.h"

namespace nodeweave::distributed {

struct RangeRelabel {
  int64_t num_parts = 0;
  // [type] -> num_parts + 1 offsets: part p owns new ids node_offsets[t][p] .. [t][p + 1] - 1.
  std::vector<std::vector<int64_t>> node_offsets;
  std::vector<std::vector<int64_t>> edge_offsets;  // [relation] -> num_parts + 1 offsets
  std::vector<std::vector<int64_t>> orig_node;     // [type][new id] = the input graph's id
  std::vector<std::vector<int64_t>> new_node;      // [type][input id] = new id
  std::vector<std::vector<int64_t>> orig_edge;     // [relation][new id] = the input graph's id
  std::vector<std::vector<int64_t>> new_edge;      // [relation][input id] = new id
};

// `part` holds the part (0 .. num_parts - 1) of every node in homogeneous ids. ValueError naming
// `part` for a wrong length or a part id out of range.
RangeRelabel relabel_by_part(const TypedGraph& g, const std::vector<int64_t>& part,
                             int64_t num_parts);

}  // namespace nodeweave::distributed
