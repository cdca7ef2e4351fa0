// Random walks over relation graphs (DGL's dgl.sampling.random_walk and node2vec_random_walk):
// traces of node ids, with the edge ids taken and the node type at every position.
//
// A walk follows a metapath: step k picks an out-edge of the current node in relation metapath[k]
// (a homogeneous walk repeats one relation). Picks are uniform, or proportional to per-edge
// weights; a node without an out-edge of positive weight ends the walk. Before step k the walk
// also ends with the restart probability of step k (DGL's restart_prob). Ended walks are padded
// with -1.
//
// Walk i draws only from CounterRng(derive_key(seed, i)) (sampling/random.h), so traces are
// bit-identical at any thread count and in any order of the starts.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core_framework/runtime/array_view.h"
#include "graph/format_convert.h"

namespace nodeweave::sampling {

// One relation a walk may step along: its out-edge CSR (rows are source nodes, entries carry edge
// ids) with the node types at both ends, and optional per-edge-id weights.
struct WalkRelation {
  const graph::CompressedArrays* out_csr = nullptr;
  int64_t num_src = 0, num_dst = 0;
  int64_t src_type = 0, dst_type = 0;
  // float32/float64, one non-negative finite value per edge id; absent (data == nullptr and no
  // shape) for uniform picks.
  ArrayView prob;
  std::string name;  // for error messages, e.g. "('user', 'follows', 'user')"
};

struct RandomWalkOptions {
  // Index into the relations for every step; its size is the walk length.
  std::vector<int64_t> metapath;
  // Probability of ending the walk before each step: one value for every step, or one per step
  // (restart_probs, used when not empty). Each in [0, 1].
  double restart_prob = 0;
  std::vector<double> restart_probs;
  bool return_eids = false;
  uint64_t seed = 0;
};

// Walks as dense row-major matrices, -1 after a walk ends.
struct WalkTraces {
  int64_t num_walks = 0, length = 0;
  std::vector<int64_t> nodes;  // num_walks x (length + 1); column 0 is the start
  std::vector<int64_t> eids;   // num_walks x length, only when return_eids
  std::vector<int64_t> types;  // length + 1: the node type of each column
};

// Validates (ValueError/TypeError/IndexError naming the argument) and walks from every start.
// `starts` is a 1-D int32/int64 CPU array of nodes of the first step's source type. With an empty
// metapath, `relations` still gives the start type (relations[0].src_type) and range.
WalkTraces random_walk(const std::vector<WalkRelation>& relations, const ArrayView& starts,
                       const RandomWalkOptions& opt);

struct Node2vecOptions {
  double p = 1, q = 1;  // return and in-out parameters, both > 0
  int64_t walk_length = 0;
  bool return_eids = false;
  uint64_t seed = 0;
};

// node2vec's second-order walk (Grover & Leskovec 2016) on one relation whose two ends are one
// node type. After the first step (uniform or weighted), the step from v having come from t picks
// an out-edge v -> x with probability proportional to w(v, x) * a(t, x), where a = 1/p when
// x == t, 1 when the edge t -> x exists, 1/q otherwise.
WalkTraces node2vec_walk(const WalkRelation& relation, const ArrayView& starts,
                         const Node2vecOptions& opt);

}  // namespace nodeweave::sampling
