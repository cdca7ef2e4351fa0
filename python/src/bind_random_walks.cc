// nodeweave._C.sampling random walks: random_walk, node2vec_random_walk and PinSAGE's neighbour
// selection. Relations come in as (RelationGraph, src_type, dst_type, prob or None, name) tuples
// and NumPy arrays; the walks run without the GIL and come back as NumPy arrays that own the C++
// buffers (no copy).
#include <cstring>
#include <memory>

#include "graph/relation_graph.h"
#include "graph_arrays.h"
#include "py_convert.h"
#include "sampling/pinsage.h"
#include "sampling/random_walk.h"

namespace nodeweave::py {
namespace {

using graph::RelationGraph;
using sampling::WalkRelation;

// A relation with what keeps its arrays alive while the GIL is released.
struct RelationIn {
  std::shared_ptr<RelationGraph> graph;
  pyb::array prob;  // the NumPy buffer rel.prob points into
  WalkRelation rel;
};

std::vector<RelationIn> read_relations(const pyb::list& relations, const char* fn) {
  std::vector<RelationIn> out(relations.size());
  for (size_t i = 0; i < out.size(); ++i) {
    pyb::tuple t = relations[i].cast<pyb::tuple>();
    NW_CHECK(t.size() == 5, ValueError, fn,
             ": relations must be (RelationGraph, src_type, dst_type, prob, name) tuples");
    RelationIn& r = out[i];
    r.graph = t[0].cast<std::shared_ptr<RelationGraph>>();
    r.rel.src_type = t[1].cast<int64_t>();
    r.rel.dst_type = t[2].cast<int64_t>();
    r.rel.name = t[4].cast<std::string>();
    r.rel.num_src = r.graph->num_src();
    r.rel.num_dst = r.graph->num_dst();
    if (!t[3].is_none())
      r.rel.prob = float_view(t[3], str_cat(fn, ": prob of ", r.rel.name), &r.prob);
  }
  return out;
}

// Builds (or finds cached) out-edge CSRs: call without the GIL, the first build sorts the edges.
std::vector<WalkRelation> with_csr(std::vector<RelationIn>& in) {
  std::vector<WalkRelation> rels;
  for (RelationIn& r : in) {
    r.rel.out_csr = &r.graph->out_csr();
    rels.push_back(r.rel);
  }
  return rels;
}

pyb::array int_ids(pyb::handle obj, const char* what) {
  pyb::array arr = pyb::array::ensure(obj);
  NW_CHECK(arr, TypeError, what, " must be an array of node ids, got ", type_name(obj));
  const char kind = arr.dtype().kind();
  NW_CHECK(kind == 'i' || kind == 'u', TypeError, what, " must hold integer node ids, got dtype ",
           std::string(pyb::str(arr.dtype())));
  return pyb::array_t<int64_t, pyb::array::c_style | pyb::array::forcecast>(arr);
}

// The vector as a (rows x cols) int64 NumPy array owning its buffer.
pyb::array matrix(std::vector<int64_t>&& v, int64_t rows, int64_t cols) {
  return owned_array(std::move(v), {rows, cols});
}

}  // namespace

void bind_random_walks(pyb::module_& m) {
  m.def(
      "random_walk",
      [](const pyb::list& relations, const std::vector<int64_t>& metapath, pyb::handle nodes,
         pyb::handle restart_prob, bool return_eids, uint64_t seed) {
        std::vector<RelationIn> in = read_relations(relations, "random_walk");
        const pyb::array starts = int_ids(nodes, "nodes");
        sampling::RandomWalkOptions opt;
        opt.metapath = metapath;
        if (pyb::isinstance<pyb::array>(restart_prob) || pyb::isinstance<pyb::list>(restart_prob))
          opt.restart_probs = restart_prob.cast<std::vector<double>>();
        else if (!restart_prob.is_none())
          opt.restart_prob = restart_prob.cast<double>();
        opt.return_eids = return_eids;
        opt.seed = seed;
        // The view reads the array's dtype, a Python object: before the GIL is released.
        const ArrayView start_view = numpy_view(starts, DType::Int64);
        sampling::WalkTraces out;
        {
          pyb::gil_scoped_release nogil;
          out = sampling::random_walk(with_csr(in), start_view, opt);
        }
        const int64_t n = out.num_walks, len = out.length;
        pyb::object eids = return_eids ? pyb::object(matrix(std::move(out.eids), n, len))
                                       : pyb::object(pyb::none());
        return pyb::make_tuple(matrix(std::move(out.nodes), n, len + 1), eids,
                               vector_to_numpy(std::move(out.types)));
      },
      pyb::arg("relations"), pyb::arg("metapath"), pyb::arg("nodes"), pyb::arg("restart_prob"),
      pyb::arg("return_eids"), pyb::arg("seed"),
      "Metapath walks: relations are (RelationGraph, src_type, dst_type, prob or None, name); "
      "metapath indexes them per step. Returns (traces, eids or None, types) as int64 arrays.");

  m.def(
      "node2vec_random_walk",
      [](const pyb::tuple& relation, pyb::handle nodes, double p, double q, int64_t walk_length,
         bool return_eids, uint64_t seed) {
        pyb::list one;
        one.append(relation);
        std::vector<RelationIn> in = read_relations(one, "node2vec_random_walk");
        const pyb::array starts = int_ids(nodes, "nodes");
        sampling::Node2vecOptions opt;
        opt.p = p;
        opt.q = q;
        opt.walk_length = walk_length;
        opt.return_eids = return_eids;
        opt.seed = seed;
        const ArrayView start_view = numpy_view(starts, DType::Int64);
        sampling::WalkTraces out;
        {
          pyb::gil_scoped_release nogil;
          out = sampling::node2vec_walk(with_csr(in)[0], start_view, opt);
        }
        const int64_t n = out.num_walks, len = out.length;
        pyb::object eids = return_eids ? pyb::object(matrix(std::move(out.eids), n, len))
                                       : pyb::object(pyb::none());
        return pyb::make_tuple(matrix(std::move(out.nodes), n, len + 1), eids);
      },
      pyb::arg("relation"), pyb::arg("nodes"), pyb::arg("p"), pyb::arg("q"),
      pyb::arg("walk_length"), pyb::arg("return_eids"), pyb::arg("seed"),
      "node2vec walks on one (RelationGraph, type, type, prob or None, name) relation. Returns "
      "(traces, eids or None) as int64 arrays.");

  m.def(
      "pinsage_neighbors",
      [](const pyb::list& relations, const std::vector<int64_t>& metapath, pyb::handle seeds,
         int64_t num_traversals, double termination_prob, int64_t num_random_walks,
         int64_t num_neighbors, uint64_t seed) {
        std::vector<RelationIn> in = read_relations(relations, "PinSAGESampler");
        const pyb::array seed_ids = int_ids(seeds, "seed_nodes");
        sampling::PinSageOptions opt;
        opt.metapath = metapath;
        opt.num_traversals = num_traversals;
        opt.termination_prob = termination_prob;
        opt.num_random_walks = num_random_walks;
        opt.num_neighbors = num_neighbors;
        opt.seed = seed;
        const ArrayView seed_view = numpy_view(seed_ids, DType::Int64);
        sampling::PinSageNeighbors out;
        {
          pyb::gil_scoped_release nogil;
          out = sampling::pinsage_neighbors(with_csr(in), seed_view, opt);
        }
        return pyb::make_tuple(vector_to_numpy(std::move(out.src)),
                               vector_to_numpy(std::move(out.dst)),
                               vector_to_numpy(std::move(out.counts)));
      },
      pyb::arg("relations"), pyb::arg("metapath"), pyb::arg("seeds"), pyb::arg("num_traversals"),
      pyb::arg("termination_prob"), pyb::arg("num_random_walks"), pyb::arg("num_neighbors"),
      pyb::arg("seed"),
      "PinSAGE neighbours of each seed: (src, dst, counts) int64 arrays, edges visited node -> "
      "seed grouped by seed, most visited first.");
}

}  // namespace nodeweave::py
