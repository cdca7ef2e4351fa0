// PinSAGE neighbourhoods: walks, visit counts and the top-k selection fused per seed, so the
// num_seeds x num_random_walks x num_traversals visits never exist as one array (DGL writes the
// traces out, then counts them in a second pass).
#include "sampling/pinsage.h"

#include <algorithm>
#include <type_traits>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"
#include "graph/id_hash_map.h"
#include "sampling/random_walk_step.h"

namespace nodeweave::sampling {

using walk_detail::WalkAdj;

namespace {

struct SeedResult {
  std::vector<int64_t> src, counts;  // num_seeds x num_neighbors, filled up to size[i]
  std::vector<int64_t> size;
};

template <typename IdType>
void sample_all(const std::vector<walk_detail::PreparedRelation>& prepared,
                const std::vector<int64_t>& seeds, const PinSageOptions& opt, SeedResult* res) {
  const int64_t hops = static_cast<int64_t>(opt.metapath.size());
  const int64_t length = hops * opt.num_traversals;
  std::vector<WalkAdj<IdType>> steps;
  std::vector<double> restart(static_cast<size_t>(length), 0.0);
  for (int64_t t = 0; t < opt.num_traversals; ++t) {
    for (int64_t r : opt.metapath) steps.push_back(walk_detail::adj_of<IdType>(prepared[r]));
    if (t > 0) restart[t * hops] = opt.termination_prob;
  }
  const int64_t k = opt.num_neighbors;
  const int64_t walks = opt.num_random_walks;
  parallel_for(0, static_cast<int64_t>(seeds.size()), 16, [&](int64_t b, int64_t e) {
    std::vector<int64_t> traces(static_cast<size_t>(walks * (length + 1)));
    std::vector<int64_t> starts, counts, order;
    graph::IdHashMap visited(walks * opt.num_traversals);
    for (int64_t i = b; i < e; ++i) {
      const int64_t seed_node = seeds[i];
      visited.reset(walks * opt.num_traversals);
      counts.clear();
      starts.assign(static_cast<size_t>(walks), seed_node);
      walk_detail::walk_traces(steps.data(), restart.data(), length, starts.data(), i * walks,
                               walks, opt.seed, traces.data(), nullptr);
      for (int64_t w = 0; w < walks; ++w) {
        const int64_t* trace = traces.data() + w * (length + 1);
        for (int64_t pos = hops; pos <= length; pos += hops) {
          const int64_t v = trace[pos];
          if (v == -1) break;
          if (v == seed_node) continue;
          const int64_t local = visited.insert(v);
          if (local == static_cast<int64_t>(counts.size())) counts.push_back(0);
          ++counts[local];
        }
      }
      const std::vector<int64_t>& ids = visited.ids();
      order.resize(counts.size());
      for (size_t j = 0; j < order.size(); ++j) order[j] = static_cast<int64_t>(j);
      const int64_t keep = std::min<int64_t>(k, static_cast<int64_t>(order.size()));
      // Most visits first; equal counts by node id, so the choice never depends on hash order.
      std::partial_sort(order.begin(), order.begin() + keep, order.end(),
                        [&](int64_t x, int64_t y) {
                          return counts[x] != counts[y] ? counts[x] > counts[y] : ids[x] < ids[y];
                        });
      for (int64_t j = 0; j < keep; ++j) {
        res->src[i * k + j] = ids[order[j]];
        res->counts[i * k + j] = counts[order[j]];
      }
      res->size[i] = keep;
    }
  });
}

}  // namespace

PinSageNeighbors pinsage_neighbors(const std::vector<WalkRelation>& relations,
                                   const ArrayView& seeds, const PinSageOptions& opt) {
  const char* fn = "PinSAGESampler";
  NW_CHECK(opt.num_traversals >= 1, ValueError, fn, ": num_traversals must be >= 1, got ",
           opt.num_traversals);
  NW_CHECK(opt.num_random_walks >= 1, ValueError, fn, ": num_random_walks must be >= 1, got ",
           opt.num_random_walks);
  NW_CHECK(opt.num_neighbors >= 1, ValueError, fn, ": num_neighbors must be >= 1, got ",
           opt.num_neighbors);
  walk_detail::check_probability(fn, "termination_prob", opt.termination_prob);
  NW_CHECK(!relations.empty(), ValueError, fn, ": needs at least one relation");
  NW_CHECK(!opt.metapath.empty(), ValueError, fn, ": the metapath must have at least one step");
  walk_detail::check_metapath(fn, relations, opt.metapath);
  const WalkRelation& first = relations[opt.metapath.front()];
  const WalkRelation& last = relations[opt.metapath.back()];
  NW_CHECK(first.src_type == last.dst_type && first.num_src == last.num_dst, ValueError, fn,
           ": the metapath must return to the node type it starts from, but it starts at type ",
           first.src_type, " (", first.name, ") and ends at type ", last.dst_type, " (", last.name,
           ")");
  const std::vector<int64_t> seed_ids = walk_detail::read_starts(
      fn, "seed_nodes", seeds, first.num_src, str_cat("source nodes in ", first.name));
  const std::vector<walk_detail::PreparedRelation> prepared =
      walk_detail::prepare_relations(fn, relations);

  const int64_t n = static_cast<int64_t>(seed_ids.size());
  SeedResult res;
  res.src.resize(static_cast<size_t>(n * opt.num_neighbors));
  res.counts.resize(res.src.size());
  res.size.resize(static_cast<size_t>(n));
  graph::dispatch_id(relations[0].out_csr->indptr.dtype, [&](auto* id_tag) {
    using IdType = std::remove_pointer_t<decltype(id_tag)>;
    sample_all<IdType>(prepared, seed_ids, opt, &res);
    return 0;
  });

  PinSageNeighbors out;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t* src = res.src.data() + i * opt.num_neighbors;
    const int64_t* cnt = res.counts.data() + i * opt.num_neighbors;
    out.src.insert(out.src.end(), src, src + res.size[i]);
    out.counts.insert(out.counts.end(), cnt, cnt + res.size[i]);
    out.dst.insert(out.dst.end(), static_cast<size_t>(res.size[i]), seed_ids[i]);
  }
  return out;
}

}  // namespace nodeweave::sampling
