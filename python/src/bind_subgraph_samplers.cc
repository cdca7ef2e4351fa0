// nodeweave._C.sampling, the subgraph samplers' half: METIS partitioning (Cluster-GCN) and the
// GraphSAINT node-set sampler with its normalization. Both release the GIL while they run; the
// Python side extracts the induced subgraphs.
#include "graph_arrays.h"
#include "metis_options.h"
#include "py_convert.h"
#include "sampling/metis_partition.h"
#include "sampling/saint_sampler.h"

namespace nodeweave::py {
namespace {

using graph::RelationGraph;
using sampling::SaintSampler;

pyb::array_t<double> doubles_to_numpy(std::vector<double>&& v) {
  auto* keep = new std::vector<double>(std::move(v));
  pyb::capsule owner(keep, [](void* p) { delete static_cast<std::vector<double>*>(p); });
  return pyb::array_t<double>({static_cast<pyb::ssize_t>(keep->size())}, keep->data(), owner);
}

sampling::SaintMode parse_saint_mode(const std::string& mode) {
  if (mode == "node") return sampling::SaintMode::kNode;
  if (mode == "edge") return sampling::SaintMode::kEdge;
  if (mode == "walk") return sampling::SaintMode::kWalk;
  throw ValueError(str_cat("mode must be 'node', 'edge' or 'walk', got '", mode, "'"));
}

}  // namespace

void bind_subgraph_samplers(pyb::module_& m) {
  m.def(
      "metis_partition",
      [](const RelationGraph& rel, int64_t k, const std::string& mode, pyb::handle node_weights,
         int64_t seed, const std::string& objtype) {
        const sampling::MetisOptions opt = metis_options(k, mode, objtype, node_weights, seed);
        std::vector<int64_t> part;
        {
          pyb::gil_scoped_release nogil;
          part = sampling::metis_partition(rel, opt);
        }
        return vector_to_numpy(std::move(part));
      },
      pyb::arg("rel"), pyb::arg("k"), pyb::arg("mode") = "k-way",
      pyb::arg("node_weights") = pyb::none(), pyb::arg("seed") = 0, pyb::arg("objtype") = "cut",
      "The METIS part (0 .. k-1) of every node of a square relation, symmetrized first. "
      "node_weights: optional (num_nodes, num_constraints) integers METIS balances; objtype: "
      "'cut' (edge cut) or 'vol' (communication volume).");

  pyb::class_<SaintSampler, std::shared_ptr<SaintSampler>>(m, "SAINTSampler", R"doc(
GraphSAINT node sets (node, edge or walk sampler) of one square relation, and the normalization
estimated from pre-sampled sets; see sampling/saint_sampler.h.)doc")
      .def(pyb::init([](Holder rel, const std::string& mode, int64_t budget, int64_t walk_length) {
             sampling::SaintConfig cfg;
             cfg.mode = parse_saint_mode(mode);
             cfg.budget = budget;
             cfg.walk_length = walk_length;
             pyb::gil_scoped_release nogil;
             return std::make_shared<SaintSampler>(std::move(rel), cfg);
           }),
           pyb::arg("rel"), pyb::arg("mode"), pyb::arg("budget"), pyb::arg("walk_length") = 0)
      .def(
          "sample_nodes",
          [](const SaintSampler& s, uint64_t key) {
            std::vector<int64_t> nodes;
            {
              pyb::gil_scoped_release nogil;
              nodes = s.sample_nodes(key);
            }
            return vector_to_numpy(std::move(nodes));
          },
          pyb::arg("key"), "The sorted node set of the batch keyed by `key`.")
      .def(
          "normalization",
          [](const SaintSampler& s, int64_t num_samples, uint64_t key) {
            sampling::SaintNormalization n;
            {
              pyb::gil_scoped_release nogil;
              n = s.normalization(num_samples, key);
            }
            return pyb::make_tuple(
                vector_to_numpy(std::move(n.node_count)), vector_to_numpy(std::move(n.edge_count)),
                doubles_to_numpy(std::move(n.loss_norm)), doubles_to_numpy(std::move(n.aggr_norm)));
          },
          pyb::arg("num_samples"), pyb::arg("key"),
          "(node_count, edge_count, loss_norm, aggr_norm) over `num_samples` sets, set s keyed "
          "by derive_key(key, s).");
}

}  // namespace nodeweave::py
