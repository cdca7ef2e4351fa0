// nodeweave._C.sampling: the sampling layer seen from Python. Entry points take the graph's C++
// relation graphs and NumPy arrays, release the GIL while they sample, and return NumPy arrays
// that own their C++ buffers.
#include <algorithm>
#include <cstring>

#include "core_framework/runtime/generator.h"
#include "graph/to_block.h"
#include "graph_arrays.h"
#include "py_convert.h"
#include "sampling/block_sampler.h"
#include "sampling/labor_sampler.h"
#include "sampling/loader.h"
#include "sampling/neighbor_sampler.h"
#include "sampling/random.h"
#include "sampling/relation_rows.h"

namespace nodeweave::py {
namespace {

using graph::RelationGraph;
using sampling::BlockSampler;

// Weights (probabilities or a mask) as an ArrayView of a NumPy array; `copy` makes the view own a
// copy (for samplers that outlive the call and may be freed on a thread without the GIL).
ArrayView weights_view(pyb::handle obj, const char* what, std::shared_ptr<void>* owner) {
  pyb::array arr = pyb::array::ensure(obj);
  NW_CHECK(arr, TypeError, what, " must be an array of edge weights, got ", type_name(obj));
  DType dt;
  const char kind = arr.dtype().kind();
  const ssize_t item = arr.dtype().itemsize();
  if (kind == 'f' && item == 4)
    dt = DType::Float32;
  else if (kind == 'f' && item == 8)
    dt = DType::Float64;
  else if (kind == 'b')
    dt = DType::Bool;
  else
    throw TypeError(str_cat(what,
                            " must be float32/float64 probabilities or a bool mask, got dtype ",
                            std::string(pyb::str(arr.dtype()))));
  NW_CHECK(arr.ndim() == 1, ValueError, what, " must be one-dimensional (one value per edge), got ",
           arr.ndim(), " dimensions");
  pyb::array contiguous = pyb::array::ensure(arr, pyb::array::c_style);
  ArrayView v;
  v.dtype = dt;
  v.shape = {static_cast<int64_t>(contiguous.shape(0))};
  v.strides = {1};
  if (owner) {
    auto buf = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(contiguous.nbytes()));
    if (!buf->empty()) std::memcpy(buf->data(), contiguous.data(), buf->size());
    v.data = buf->data();
    *owner = buf;
  } else {
    v.data = const_cast<void*>(contiguous.data());
  }
  if (!v.data)
    v.data = v.shape[0] == 0 ? reinterpret_cast<void*>(&v) : nullptr;  // empty but present
  return v;
}

std::vector<int64_t> sorted_unique(pyb::handle obj, const char* what) {
  std::vector<int64_t> v = int64_vector(obj, what);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// The alias tables and packed rows of one relation's adjacency (relation_rows.h), held from Python
// across sample_neighbors calls: built once, and with them the weighted picks are the ones
// BlockSampler makes (its alias path), which the distributed sampler must reproduce.
struct RowsHandle {
  std::shared_ptr<const sampling::RelationRows> rows;
  const void* indptr = nullptr;   // the adjacency they were built for
  const void* weights = nullptr;  // and the weights (null: uniform; no edges: any non-null)
  pyb::object rel;                // keeps the adjacency alive as long as the rows
};

pyb::list numpy_lists(std::vector<std::vector<int64_t>>&& vs) {
  pyb::list out;
  for (auto& v : vs) out.append(vector_to_numpy(std::move(v)));
  return out;
}

// Blocks as Python tuples: (src_nodes per type, dst_nodes per type, relation graph per relation,
// original edge ids per relation, LABOR edge weights per relation or None).
pyb::list blocks_to_python(std::vector<sampling::SampledBlock>&& blocks) {
  pyb::list out;
  for (auto& b : blocks) {
    pyb::list graphs;
    for (const auto& g : b.graphs) graphs.append(hold(g));
    pyb::object weights = pyb::none();
    if (!b.edge_weights.empty()) {
      pyb::list w;
      for (auto& v : b.edge_weights) w.append(owned_array(std::move(v)));
      weights = w;
    }
    out.append(pyb::make_tuple(numpy_lists(std::move(b.src_nodes)),
                               numpy_lists(std::move(b.dst_nodes)), graphs,
                               numpy_lists(std::move(b.eids)), weights));
  }
  return out;
}

}  // namespace

void bind_sampling(pyb::module_& m) {
  m.def(
      "draw_seed", []() { return default_generator().next_seed(); },
      "A fresh 64-bit sampler seed from the default generator (nodeweave.core.manual_seed "
      "reseeds it), for calls that are not given a random_seed.");
  m.def("derive_key", &sampling::derive_key, pyb::arg("key"), pyb::arg("coord"),
        "The sampler key of one more coordinate (batch, layer, edge type) under `key`.");

  m.def(
      "sample_neighbors",
      [](const RelationGraph& rel, pyb::handle nodes, int64_t fanout, bool edge_dir_out,
         bool replace, pyb::handle prob, pyb::handle exclude, uint64_t key, int64_t key_row_offset,
         pyb::handle rows) {
        std::vector<int64_t> seeds = int64_vector(nodes, "nodes");
        sampling::NeighborSampleOptions opt;
        opt.fanout = fanout;
        opt.replace = replace;
        opt.key = key;
        opt.key_row_offset = key_row_offset;
        if (!prob.is_none()) opt.weights = weights_view(prob, "prob", nullptr);
        if (!exclude.is_none()) opt.exclude = sorted_unique(exclude, "exclude");
        const auto& adj = edge_dir_out ? rel.out_csr() : rel.in_csc();
        if (!rows.is_none()) {
          const auto& h = rows.cast<const RowsHandle&>();
          const bool same_weights = h.weights == opt.weights.data ||
                                    (h.weights && opt.weights.data &&
                                     adj.indices.length == 0);  // an empty view's address varies
          NW_CHECK(h.indptr == adj.indptr.data<void>() && same_weights, ValueError,
                   "sample_neighbors: rows were built for another relation, direction or prob");
          opt.weighted_rows = h.rows->weighted.get();
          opt.packed = h.rows->packed.get();
        }
        sampling::SampledEdges out;
        {
          pyb::gil_scoped_release nogil;
          const int64_t num_rows = edge_dir_out ? rel.num_src() : rel.num_dst();
          out = sampling::sample_neighbors(adj, num_rows, host_int64_view(seeds), opt);
        }
        return pyb::make_tuple(vector_to_numpy(std::move(out.seed_pos)),
                               vector_to_numpy(std::move(out.neighbor)),
                               vector_to_numpy(std::move(out.eid)));
      },
      pyb::arg("rel"), pyb::arg("nodes"), pyb::arg("fanout"), pyb::arg("edge_dir_out"),
      pyb::arg("replace"), pyb::arg("prob"), pyb::arg("exclude"), pyb::arg("key"),
      pyb::arg("key_row_offset") = 0, pyb::arg("rows") = pyb::none(),
      "Neighbours of `nodes` in one relation: (position of the seed, neighbour id, edge id) per "
      "sampled edge, grouped by seed in seed order. Row i's draws are keyed as row "
      "i + key_row_offset's (a part of a range-partitioned graph samples as the whole graph). "
      "`rows` (relation_rows of this relation, direction and prob array) makes the weighted picks "
      "BlockSampler's.");

  pyb::class_<RowsHandle>(m, "RelationRows",
                          "Alias tables and packed rows of one relation (from relation_rows).");
  m.def(
      "relation_rows",
      [](pyb::object rel_obj, bool edge_dir_out, pyb::handle prob) {
        const auto& rel = rel_obj.cast<const RelationGraph&>();
        ArrayView w;
        if (!prob.is_none()) {
          w = weights_view(prob, "prob", nullptr);
          sampling::check_edge_weights("relation_rows", "prob", w, rel.num_edges());
        }
        const auto& adj = edge_dir_out ? rel.out_csr() : rel.in_csc();
        RowsHandle h;
        h.indptr = adj.indptr.data<void>();
        h.weights = w.data;
        h.rel = rel_obj;
        {
          pyb::gil_scoped_release nogil;
          h.rows = sampling::shared_relation_rows(adj, edge_dir_out ? rel.num_src() : rel.num_dst(),
                                                  edge_dir_out ? rel.num_dst() : rel.num_src(), w);
        }
        return h;
      },
      pyb::arg("rel"), pyb::arg("edge_dir_out"), pyb::arg("prob"),
      "The alias tables and packed rows BlockSampler samples `rel` with (in-edges, or out-edges "
      "with edge_dir_out) under the weights `prob` (an array kept alive by the caller and passed "
      "to sample_neighbors with them; None: uniform).");

  m.def(
      "assemble_block",
      [](const std::vector<pyb::handle>& dst_nodes, std::vector<int64_t> num_nodes,
         const std::vector<pyb::tuple>& relations, const std::string& idtype) {
        std::vector<std::vector<int64_t>> dst;
        for (pyb::handle h : dst_nodes) dst.push_back(int64_vector(h, "dst_nodes"));
        std::vector<sampling::LayerEdges> rels;
        for (const pyb::tuple& t : relations) {
          NW_CHECK(t.size() == 5, ValueError,
                   "assemble_block: a relation is (src_type, seed_type, seed_pos, neighbor, eid)");
          sampling::LayerEdges e;
          e.src_type = t[0].cast<int>();
          e.seed_type = t[1].cast<int>();
          e.edges.seed_pos = int64_vector(t[2], "seed_pos");
          e.edges.neighbor = int64_vector(t[3], "neighbor");
          e.edges.eid = int64_vector(t[4], "eid");
          rels.push_back(std::move(e));
        }
        const DType dt = parse_idtype(idtype);
        std::vector<sampling::SampledBlock> block(1);
        {
          pyb::gil_scoped_release nogil;
          block[0] = sampling::assemble_block(dst, num_nodes, std::move(rels), dt);
        }
        pyb::list out = blocks_to_python(std::move(block));
        return pyb::object(out[0]);
      },
      pyb::arg("dst_nodes"), pyb::arg("num_nodes"), pyb::arg("relations"),
      pyb::arg("idtype") = "int64",
      "One layer's block from sampled edges gathered elsewhere, compacted exactly as "
      "BlockSampler.sample compacts a layer: the same tuple as one of its blocks.");

  m.def(
      "sample_labors",
      [](const RelationGraph& rel, pyb::handle nodes, int64_t fanout, bool edge_dir_out,
         pyb::handle prob, int importance_sampling, uint64_t variate_key) {
        std::vector<int64_t> seeds = int64_vector(nodes, "nodes");
        sampling::LaborOptions opt;
        opt.fanout = fanout;
        opt.importance_sampling = importance_sampling;
        opt.variate_key = variate_key;
        if (!prob.is_none()) opt.weights = weights_view(prob, "prob", nullptr);
        sampling::LaborEdges out;
        {
          pyb::gil_scoped_release nogil;
          const auto& adj = edge_dir_out ? rel.out_csr() : rel.in_csc();
          const int64_t rows = edge_dir_out ? rel.num_src() : rel.num_dst();
          out = sampling::sample_labors(adj, rows, host_int64_view(seeds), opt);
        }
        return pyb::make_tuple(
            vector_to_numpy(std::move(out.seed_pos)), vector_to_numpy(std::move(out.neighbor)),
            vector_to_numpy(std::move(out.eid)), owned_array(std::move(out.weight)));
      },
      pyb::arg("rel"), pyb::arg("nodes"), pyb::arg("fanout"), pyb::arg("edge_dir_out"),
      pyb::arg("prob"), pyb::arg("importance_sampling"), pyb::arg("variate_key"),
      "LABOR sampling of one relation: (seed position, neighbour, edge id, edge weight) per edge.");

  m.def(
      "to_block",
      [](const std::vector<pyb::handle>& dst_nodes, const std::vector<pyb::tuple>& relations,
         bool include_dst_in_src, const std::vector<int64_t>& num_nodes) {
        std::vector<std::vector<int64_t>> dst;
        for (pyb::handle h : dst_nodes) dst.push_back(int64_vector(h, "dst_nodes"));
        std::vector<std::vector<int64_t>> src_ids, dst_ids;
        std::vector<graph::BlockEdgesIn> edges;
        for (const pyb::tuple& t : relations) {
          graph::BlockEdgesIn in;
          in.src_type = t[0].cast<int>();
          in.dst_type = t[1].cast<int>();
          NW_CHECK(in.src_type >= 0 && in.dst_type >= 0 &&
                       in.src_type < static_cast<int>(dst.size()) &&
                       in.dst_type < static_cast<int>(dst.size()),
                   ValueError, "to_block: relation node type out of range");
          src_ids.push_back(int64_vector(t[2], "src"));
          dst_ids.push_back(int64_vector(t[3], "dst"));
          NW_CHECK(src_ids.back().size() == dst_ids.back().size(), ValueError,
                   "to_block: src and dst of a relation differ in length");
          edges.push_back(in);
        }
        for (size_t r = 0; r < edges.size(); ++r) {
          edges[r].src = src_ids[r].data();
          edges[r].dst = dst_ids[r].data();
          edges[r].num_edges = static_cast<int64_t>(src_ids[r].size());
        }
        graph::BlockCompaction c;
        {
          pyb::gil_scoped_release nogil;
          c = graph::compact_block(dst, edges, /*dst_is_position=*/false, include_dst_in_src,
                                   num_nodes.empty() ? nullptr : &num_nodes);
        }
        return pyb::make_tuple(numpy_lists(std::move(c.src_nodes)),
                               numpy_lists(std::move(c.src_local)),
                               numpy_lists(std::move(c.dst_local)));
      },
      pyb::arg("dst_nodes"), pyb::arg("relations"), pyb::arg("include_dst_in_src"),
      pyb::arg("num_nodes") = std::vector<int64_t>{},
      "Block compaction: (source nodes per type, local source ids per relation, local "
      "destination ids per relation). relations: (src_type, dst_type, src, dst) in global ids; "
      "num_nodes (per type, optional) lets the relabelling use a dense table.");

  pyb::class_<BlockSampler, std::shared_ptr<BlockSampler>>(m, "BlockSampler", R"doc(
Multi-layer neighbour sampling fused with block compaction, configured once per graph and sampler.)doc")
      .def(pyb::init([](std::vector<int64_t> num_nodes, const std::vector<pyb::tuple>& relations,
                        std::vector<std::vector<int64_t>> fanouts, bool replace, bool edge_dir_out,
                        const std::string& kind, int importance_sampling, bool layer_dependency) {
             sampling::BlockSamplerConfig cfg;
             NW_CHECK(kind == "neighbor" || kind == "labor", ValueError,
                      "BlockSampler: kind must be 'neighbor' or 'labor', got '", kind, "'");
             cfg.kind = kind == "labor" ? sampling::BlockSamplerKind::Labor
                                        : sampling::BlockSamplerKind::Neighbor;
             cfg.importance_sampling = importance_sampling;
             cfg.layer_dependency = layer_dependency;
             cfg.num_nodes = std::move(num_nodes);
             for (const pyb::tuple& t : relations) {
               sampling::RelationInput in;
               in.src_type = t[0].cast<int>();
               in.dst_type = t[1].cast<int>();
               in.graph = t[2].cast<Holder>();
               if (!t[3].is_none()) in.weights = weights_view(t[3], "prob", &in.weights_owner);
               cfg.relations.push_back(std::move(in));
             }
             cfg.fanouts = std::move(fanouts);
             cfg.replace = replace;
             cfg.edge_dir_out = edge_dir_out;
             pyb::gil_scoped_release nogil;
             return std::make_shared<BlockSampler>(std::move(cfg));
           }),
           pyb::arg("num_nodes"), pyb::arg("relations"), pyb::arg("fanouts"),
           pyb::arg("replace") = false, pyb::arg("edge_dir_out") = false,
           pyb::arg("kind") = "neighbor", pyb::arg("importance_sampling") = 0,
           pyb::arg("layer_dependency") = false)
      .def_property_readonly("num_layers", &BlockSampler::num_layers)
      .def(
          "sample",
          [](const BlockSampler& s, const std::vector<pyb::handle>& seeds, uint64_t key,
             const std::vector<pyb::handle>& exclude, const std::string& idtype) {
            std::vector<std::vector<int64_t>> seed_ids, excl;
            for (pyb::handle h : seeds) seed_ids.push_back(int64_vector(h, "seeds"));
            for (pyb::handle h : exclude)
              excl.push_back(h.is_none() ? std::vector<int64_t>{} : sorted_unique(h, "exclude"));
            const DType dt = parse_idtype(idtype);
            std::vector<sampling::SampledBlock> blocks;
            {
              pyb::gil_scoped_release nogil;
              blocks = s.sample(seed_ids, key, excl, dt);
            }
            return blocks_to_python(std::move(blocks));
          },
          pyb::arg("seeds"), pyb::arg("key"), pyb::arg("exclude") = std::vector<pyb::handle>{},
          pyb::arg("idtype") = "int64",
          "Blocks, input layer first: (src_nodes per type, dst_nodes per type, relation graph per "
          "relation, original edge ids per relation).");

  pyb::class_<sampling::FeatureCache, std::shared_ptr<sampling::FeatureCache>>(m, "FeatureCache",
                                                                               R"doc(
The loader's cache of the most frequently gathered feature rows (see sampling/feature_cache.h).)doc")
      .def(pyb::init<int64_t, int64_t>(), pyb::arg("rows"), pyb::arg("capacity"))
      .def_property_readonly("capacity", &sampling::FeatureCache::capacity)
      .def_property_readonly("size", &sampling::FeatureCache::size, "Rows held (0 until built).")
      .def_property_readonly("lookups", &sampling::FeatureCache::lookups)
      .def_property_readonly("hits", &sampling::FeatureCache::hits);

  pyb::class_<sampling::Loader, std::shared_ptr<sampling::Loader>>(m, "Loader", R"doc(
Prefetching mini-batch loader: C++ worker threads sample blocks and gather feature rows ahead.)doc")
      .def(pyb::init([](std::shared_ptr<BlockSampler> sampler, pyb::handle seed_types,
                        pyb::handle seed_ids, int64_t batch_size, bool drop_last, uint64_t key,
                        const std::vector<pyb::tuple>& features, int num_workers, int depth,
                        int threads_per_worker, const std::string& idtype,
                        int64_t batch_dependency) {
             sampling::LoaderConfig cfg;
             cfg.batch_dependency = batch_dependency;
             cfg.sampler = sampler;
             cfg.seed_types = int64_vector(seed_types, "seed_types");
             cfg.seed_ids = int64_vector(seed_ids, "seed_ids");
             cfg.batch_size = batch_size;
             cfg.drop_last = drop_last;
             cfg.key = key;
             cfg.num_workers = num_workers;
             cfg.depth = depth;
             cfg.threads_per_worker = threads_per_worker;
             cfg.idtype = parse_idtype(idtype);
             for (const pyb::tuple& t : features) {
               sampling::FeatureSource f;
               f.node_type = t[0].cast<int>();
               f.of_outputs = t[1].cast<bool>();
               // The caller keeps the array alive for the loader's lifetime (it must not be
               // released here, on a thread without the GIL).
               pyb::array arr = pyb::array::ensure(t[2], pyb::array::c_style);
               NW_CHECK(arr && arr.ndim() >= 1, ValueError,
                        "DataLoader: a prefetched feature must be an array with one row per node");
               f.data = static_cast<const uint8_t*>(arr.data());
               f.rows = static_cast<int64_t>(arr.shape(0));
               f.row_bytes = f.rows ? static_cast<int64_t>(arr.nbytes()) / f.rows : 0;
               NW_CHECK(arr.ptr() == t[2].ptr(), ValueError,
                        "DataLoader: a prefetched feature must be a C-contiguous array");
               if (t.size() > 3 && !t[3].is_none())
                 f.cache = t[3].cast<std::shared_ptr<sampling::FeatureCache>>();
               cfg.features.push_back(f);
             }
             // Starting may build a feature cache (a copy of its rows): without the GIL.
             pyb::gil_scoped_release nogil;
             return std::make_shared<sampling::Loader>(std::move(cfg));
           }),
           pyb::arg("sampler"), pyb::arg("seed_types"), pyb::arg("seed_ids"),
           pyb::arg("batch_size"), pyb::arg("drop_last"), pyb::arg("key"), pyb::arg("features"),
           pyb::arg("num_workers"), pyb::arg("depth"), pyb::arg("threads_per_worker"),
           pyb::arg("idtype"), pyb::arg("batch_dependency") = 1)
      .def_property_readonly("num_batches", &sampling::Loader::num_batches)
      .def(
          "next",
          [](sampling::Loader& l) -> pyb::object {
            while (true) {
              bool timed_out = false;
              std::optional<sampling::MiniBatch> b;
              {
                pyb::gil_scoped_release nogil;
                b = l.next(50, &timed_out);
              }
              // Waiting in short slices lets Ctrl-C (a pending signal) through.
              if (timed_out) {
                if (PyErr_CheckSignals() != 0) throw pyb::error_already_set();
                continue;
              }
              if (!b) return pyb::none();
              pyb::list feats;
              // Flat bytes owning the gathered rows; Python views them as its dtype and shape.
              for (auto& f : b->features) feats.append(owned_array(std::move(f.bytes)));
              return pyb::make_tuple(b->index, blocks_to_python(std::move(b->blocks)), feats);
            }
          },
          "The next batch (index, blocks, gathered feature bytes), or None after the last.")
      .def("close", &sampling::Loader::close, pyb::call_guard<pyb::gil_scoped_release>(),
           "Stops and joins the workers.");
}

}  // namespace nodeweave::py
