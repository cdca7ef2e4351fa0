// nodeweave._C.sampling negative samplers (sampling/negative_sampler.h): one relation graph and
// NumPy ids in, int64 NumPy arrays that own their C++ buffers out. The GIL is released while
// sampling. `random_seed` and `stream` (the edge type's index) give the sampler key, so every edge
// type of one call draws from its own streams.
#include <optional>

#include "graph_arrays.h"
#include "py_convert.h"
#include "sampling/negative_sampler.h"
#include "sampling/random.h"

namespace nodeweave::py {

namespace {
pyb::tuple pairs_to_numpy(sampling::NegativePairs&& p) {
  return pyb::make_tuple(vector_to_numpy(std::move(p.src)), vector_to_numpy(std::move(p.dst)));
}
}  // namespace

void bind_negative_sampling(pyb::module_& m) {
  m.def(
      "per_source_uniform_negatives",
      [](const graph::RelationGraph& rel, pyb::handle eids, int64_t k, uint64_t random_seed,
         uint64_t stream) {
        const std::vector<int64_t> ids = int64_vector(eids, "eids");
        sampling::NegativePairs out;
        {
          pyb::gil_scoped_release nogil;
          out = sampling::per_source_uniform_negatives(rel, ids.data(),
                                                       static_cast<int64_t>(ids.size()), k,
                                                       sampling::derive_key(random_seed, stream));
        }
        return pairs_to_numpy(std::move(out));
      },
      pyb::arg("rel"), pyb::arg("eids"), pyb::arg("k"), pyb::arg("random_seed"),
      pyb::arg("stream") = 0,
      "(src, dst): for each positive edge eids[i], k pairs (its source, a uniform destination) "
      "at [i * k, (i + 1) * k).");

  m.def(
      "global_uniform_negatives",
      [](const graph::RelationGraph& rel, int64_t num_samples, bool exclude_self_loops,
         bool replace, std::optional<double> redundancy, uint64_t random_seed, uint64_t stream) {
        sampling::GlobalNegativeOptions opt;
        opt.num_samples = num_samples;
        opt.exclude_self_loops = exclude_self_loops;
        opt.replace = replace;
        opt.redundancy = redundancy;
        opt.key = sampling::derive_key(random_seed, stream);
        sampling::NegativePairs out;
        {
          pyb::gil_scoped_release nogil;
          out = sampling::global_uniform_negatives(rel, opt);
        }
        return pairs_to_numpy(std::move(out));
      },
      pyb::arg("rel"), pyb::arg("num_samples"), pyb::arg("exclude_self_loops"), pyb::arg("replace"),
      pyb::arg("redundancy"), pyb::arg("random_seed"), pyb::arg("stream") = 0,
      "(src, dst): up to num_samples pairs that are not edges of `rel` (nor self-loops when "
      "excluded; without repeats unless `replace`), in random order.");
}

}  // namespace nodeweave::py
