// Metapath random walks with restart: validation, then one trace per start in parallel.
#include "sampling/random_walk.h"

#include <type_traits>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "sampling/random_walk_step.h"

namespace nodeweave::sampling {

using walk_detail::PreparedRelation;
using walk_detail::WalkAdj;

namespace {

std::vector<double> restart_per_step(const char* fn, const RandomWalkOptions& opt) {
  const size_t length = opt.metapath.size();
  if (opt.restart_probs.empty()) {
    walk_detail::check_probability(fn, "restart_prob", opt.restart_prob);
    return std::vector<double>(length, opt.restart_prob);
  }
  NW_CHECK(opt.restart_probs.size() == length, ValueError, fn,
           ": restart_prob must hold one probability per step (", length, "), got ",
           opt.restart_probs.size());
  for (size_t k = 0; k < length; ++k)
    walk_detail::check_probability(fn, str_cat("restart_prob[", k, "]").c_str(),
                                   opt.restart_probs[k]);
  return opt.restart_probs;
}

template <typename IdType>
void walk_all(const std::vector<PreparedRelation>& prepared, const std::vector<int64_t>& metapath,
              const std::vector<double>& restart, const std::vector<int64_t>& starts, uint64_t seed,
              WalkTraces* out) {
  const int64_t length = static_cast<int64_t>(metapath.size());
  std::vector<WalkAdj<IdType>> steps;
  for (int64_t r : metapath) steps.push_back(walk_detail::adj_of<IdType>(prepared[r]));
  int64_t* nodes = out->nodes.data();
  int64_t* eids = out->eids.empty() ? nullptr : out->eids.data();
  parallel_for(0, out->num_walks, walk_detail::kWalkGrain, [&](int64_t b, int64_t e) {
    walk_detail::walk_traces(steps.data(), restart.data(), length, starts.data() + b, b, e - b,
                             seed, nodes + b * (length + 1), eids ? eids + b * length : nullptr);
  });
}

}  // namespace

WalkTraces random_walk(const std::vector<WalkRelation>& relations, const ArrayView& starts,
                       const RandomWalkOptions& opt) {
  const char* fn = "random_walk";
  NW_CHECK(!relations.empty(), ValueError, fn, ": needs at least one relation");
  walk_detail::check_metapath(fn, relations, opt.metapath);
  const std::vector<double> restart = restart_per_step(fn, opt);
  const WalkRelation& first = relations[opt.metapath.empty() ? 0 : opt.metapath[0]];
  const std::vector<int64_t> start_ids = walk_detail::read_starts(
      fn, "nodes", starts, first.num_src, str_cat("source nodes in ", first.name));
  // Last: it reads every weight and builds the running sums.
  const std::vector<PreparedRelation> prepared = walk_detail::prepare_relations(fn, relations);
  const DType id_dtype = relations[0].out_csr->indptr.dtype;

  WalkTraces out;
  out.num_walks = static_cast<int64_t>(start_ids.size());
  out.length = static_cast<int64_t>(opt.metapath.size());
  out.types.push_back(first.src_type);
  for (int64_t r : opt.metapath) out.types.push_back(relations[r].dst_type);
  out.nodes.resize(static_cast<size_t>(out.num_walks * (out.length + 1)));
  if (opt.return_eids) out.eids.resize(static_cast<size_t>(out.num_walks * out.length));
  graph::dispatch_id(id_dtype, [&](auto* id_tag) {
    using IdType = std::remove_pointer_t<decltype(id_tag)>;
    walk_all<IdType>(prepared, opt.metapath, restart, start_ids, opt.seed, &out);
    return 0;
  });
  return out;
}

}  // namespace nodeweave::sampling
