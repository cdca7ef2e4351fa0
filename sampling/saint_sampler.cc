// GraphSAINT node sets: weighted draws by binary search in running sums, uniform random walks, and
// the normalization counts over pre-sampled sets.
#include "sampling/saint_sampler.h"

#include <algorithm>
#include <type_traits>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "sampling/random.h"

namespace nodeweave::sampling {

namespace {

constexpr int64_t kDrawGrain = 4096;

std::vector<int64_t> degrees(const graph::CompressedArrays& c, int64_t rows) {
  std::vector<int64_t> d(static_cast<size_t>(rows));
  graph::dispatch_id(c.indptr.dtype, [&](auto* tag) {
    using Id = std::remove_pointer_t<decltype(tag)>;
    const Id* p = c.indptr.data<Id>();
    for (int64_t i = 0; i < rows; ++i) d[static_cast<size_t>(i)] = p[i + 1] - p[i];
  });
  return d;
}

// Position of the weight a uniform draw lands in; x rounding up to the total stays in range.
int64_t pick(const std::vector<double>& cum, double x) {
  const int64_t n = static_cast<int64_t>(cum.size());
  const int64_t pos = std::upper_bound(cum.begin(), cum.end(), x) - cum.begin();
  return std::min(pos, n - 1);
}

template <typename Id>
void count_induced_edges(const graph::CompressedArrays& csc, const std::vector<int64_t>& nodes,
                         const std::vector<char>& member, std::vector<int64_t>& edge_count) {
  const Id* indptr = csc.indptr.data<Id>();
  const Id* indices = csc.indices.data<Id>();
  const Id* eids = csc.eids.data<Id>();
  for (int64_t v : nodes)
    for (Id j = indptr[v]; j < indptr[v + 1]; ++j)
      if (member[static_cast<size_t>(indices[j])]) {
        // Integer increments commute: the totals do not depend on which thread counts first.
#pragma omp atomic update
        ++edge_count[static_cast<size_t>(eids[j])];
      }
}

}  // namespace

SaintSampler::SaintSampler(graph::RelationGraphPtr g, SaintConfig config)
    : g_(std::move(g)), config_(config) {
  const char* fn = "SAINTSampler";
  NW_CHECK(g_, ValueError, fn, ": no graph");
  NW_CHECK(g_->num_src() == g_->num_dst(), ValueError, fn,
           ": the graph must have one node type (a square relation), got ", g_->num_src(),
           " source and ", g_->num_dst(), " destination nodes");
  NW_CHECK(g_->device().is_cpu(), ValueError, fn, ": sampling runs on the CPU; the graph is on ",
           g_->device().str());
  NW_CHECK(config_.budget > 0, ValueError, fn, ": budget must be positive, got ", config_.budget);
  const int64_t n = g_->num_src();
  switch (config_.mode) {
    case SaintMode::kNode: {
      NW_CHECK(n > 0, ValueError, fn, ": the graph has no nodes to sample");
      const std::vector<int64_t> out = degrees(g_->out_csr(), n);
      cumsum_.resize(static_cast<size_t>(n));
      double run = 0;
      for (int64_t v = 0; v < n; ++v)
        cumsum_[static_cast<size_t>(v)] = run += static_cast<double>(std::max<int64_t>(out[v], 1));
      break;
    }
    case SaintMode::kEdge: {
      NW_CHECK(g_->num_edges() > 0, ValueError, fn, ": the graph has no edges to sample");
      const std::vector<int64_t> out = degrees(g_->out_csr(), n);
      const std::vector<int64_t> in = degrees(g_->in_csc(), n);
      const graph::CooArrays& coo = g_->coo();
      cumsum_.resize(static_cast<size_t>(g_->num_edges()));
      graph::dispatch_id(g_->id_dtype(), [&](auto* tag) {
        using Id = std::remove_pointer_t<decltype(tag)>;
        const Id* src = coo.src.data<Id>();
        const Id* dst = coo.dst.data<Id>();
        double run = 0;
        for (int64_t e = 0; e < g_->num_edges(); ++e) {
          const double w = 1.0 / static_cast<double>(std::max<int64_t>(in[dst[e]], 1)) +
                           1.0 / static_cast<double>(std::max<int64_t>(out[src[e]], 1));
          cumsum_[static_cast<size_t>(e)] = run += w;
        }
      });
      break;
    }
    case SaintMode::kWalk:
      NW_CHECK(n > 0, ValueError, fn, ": the graph has no nodes to start walks from");
      NW_CHECK(config_.walk_length >= 0, ValueError, fn, ": walk_length must be non-negative, got ",
               config_.walk_length);
      g_->out_csr();  // built now, not by the first batch
      break;
  }
  // Normalization counts edges through the in-edge CSC; build it once here as well.
  g_->in_csc();
}

void SaintSampler::draw_weighted(uint64_t key, std::vector<int64_t>& out) const {
  const int64_t b = config_.budget;
  const double total = cumsum_.back();
  const bool edges = config_.mode == SaintMode::kEdge;
  out.resize(static_cast<size_t>(edges ? 2 * b : b));
  const graph::CooArrays* coo = edges ? &g_->coo() : nullptr;
  parallel_for(0, b, kDrawGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      CounterRng rng(derive_key(key, static_cast<uint64_t>(i)));
      const int64_t pos = pick(cumsum_, rng.uniform() * total);
      if (!edges) {
        out[static_cast<size_t>(i)] = pos;
        continue;
      }
      graph::dispatch_id(g_->id_dtype(), [&](auto* tag) {
        using Id = std::remove_pointer_t<decltype(tag)>;
        out[static_cast<size_t>(2 * i)] = coo->src.data<Id>()[pos];
        out[static_cast<size_t>(2 * i + 1)] = coo->dst.data<Id>()[pos];
      });
    }
  });
}

void SaintSampler::draw_walks(uint64_t key, std::vector<int64_t>& out) const {
  const int64_t roots = config_.budget, len = config_.walk_length, n = num_nodes();
  const graph::CompressedArrays& csr = g_->out_csr();
  // Walk i owns slots [i (len + 1), (i + 1)(len + 1)); -1 marks the steps after a dead end.
  out.assign(static_cast<size_t>(roots * (len + 1)), -1);
  graph::dispatch_id(g_->id_dtype(), [&](auto* tag) {
    using Id = std::remove_pointer_t<decltype(tag)>;
    const Id* indptr = csr.indptr.data<Id>();
    const Id* indices = csr.indices.data<Id>();
    parallel_for(0, roots, std::max<int64_t>(1, kDrawGrain / (len + 1)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        CounterRng rng(derive_key(key, static_cast<uint64_t>(i)));
        int64_t v = static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(n)));
        int64_t* slot = out.data() + i * (len + 1);
        slot[0] = v;
        for (int64_t s = 1; s <= len; ++s) {
          const int64_t d = static_cast<int64_t>(indptr[v + 1]) - static_cast<int64_t>(indptr[v]);
          if (d == 0) break;
          v = indices[indptr[v] + static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(d)))];
          slot[s] = v;
        }
      }
    });
  });
}

std::vector<int64_t> SaintSampler::sample_nodes(uint64_t key) const {
  std::vector<int64_t> nodes;
  if (config_.mode == SaintMode::kWalk)
    draw_walks(key, nodes);
  else
    draw_weighted(key, nodes);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  if (!nodes.empty() && nodes.front() < 0) nodes.erase(nodes.begin());  // the dead-end marker
  return nodes;
}

SaintNormalization SaintSampler::normalization(int64_t num_samples, uint64_t key) const {
  NW_CHECK(num_samples >= 1, ValueError,
           "SAINTSampler: num_norm_samples must be >= 1 to estimate the normalization, got ",
           num_samples);
  const int64_t n = num_nodes(), m = g_->num_edges();
  SaintNormalization out;
  out.node_count.assign(static_cast<size_t>(n), 0);
  out.edge_count.assign(static_cast<size_t>(m), 0);
  const graph::CompressedArrays& csc = g_->in_csc();
  // Sets are drawn in parallel (each is serial inside a parallel region); the counters are shared.
  parallel_for(0, num_samples, 1, [&](int64_t b, int64_t e) {
    std::vector<char> member(static_cast<size_t>(n), 0);
    for (int64_t s = b; s < e; ++s) {
      const std::vector<int64_t> nodes = sample_nodes(derive_key(key, static_cast<uint64_t>(s)));
      for (int64_t v : nodes) {
        member[static_cast<size_t>(v)] = 1;
#pragma omp atomic update
        ++out.node_count[static_cast<size_t>(v)];
      }
      graph::dispatch_id(g_->id_dtype(), [&](auto* tag) {
        using Id = std::remove_pointer_t<decltype(tag)>;
        count_induced_edges<Id>(csc, nodes, member, out.edge_count);
      });
      for (int64_t v : nodes) member[static_cast<size_t>(v)] = 0;
    }
  });
  const graph::CooArrays& coo = g_->coo();
  out.loss_norm.resize(static_cast<size_t>(n));
  out.aggr_norm.resize(static_cast<size_t>(m));
  const double samples = static_cast<double>(num_samples);
  for (int64_t v = 0; v < n; ++v)
    out.loss_norm[static_cast<size_t>(v)] =
        samples / (static_cast<double>(std::max<int64_t>(out.node_count[v], 1)) * n);
  graph::dispatch_id(g_->id_dtype(), [&](auto* tag) {
    using Id = std::remove_pointer_t<decltype(tag)>;
    const Id* dst = coo.dst.data<Id>();
    for (int64_t e = 0; e < m; ++e)
      out.aggr_norm[static_cast<size_t>(e)] =
          static_cast<double>(std::max<int64_t>(out.node_count[dst[e]], 1)) /
          static_cast<double>(std::max<int64_t>(out.edge_count[e], 1));
  });
  return out;
}

}  // namespace nodeweave::sampling
