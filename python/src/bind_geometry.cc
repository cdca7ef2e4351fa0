// nodeweave._C geometry kernels of graph/ (farthest_point_sampler.h, neighbor_matching.h) for
// nodeweave.geometry: NumPy arrays and a relation graph in, int64 NumPy arrays out (owning their
// C++ buffers). The GIL is released while a kernel runs.
#include <utility>

#include "graph/farthest_point_sampler.h"
#include "graph/neighbor_matching.h"
#include "graph_arrays.h"
#include "py_convert.h"

namespace nodeweave::py {

void bind_geometry(pyb::module_& m) {
  m.def(
      "farthest_point_sample",
      [](pyb::handle pos, int64_t npoints, pyb::handle start) {
        pyb::array keep;
        const ArrayView view = float_view(pos, "farthest_point_sampler: pos", &keep);
        const std::vector<int64_t> starts =
            int64_vector(start, "farthest_point_sampler: start_idx");
        std::vector<int64_t> out;
        {
          pyb::gil_scoped_release nogil;
          out = graph::farthest_point_sample(view, npoints, starts);
        }
        return owned_array(std::move(out), {view.shape[0], static_cast<pyb::ssize_t>(npoints)});
      },
      pyb::arg("pos"), pyb::arg("npoints"), pyb::arg("start"),
      "(B, npoints) int64: farthest point samples of each cloud of pos (B, N, C), cloud b "
      "starting at start[b].");
  m.def(
      "neighbor_matching",
      [](const graph::RelationGraph& rel, pyb::handle weights, uint64_t seed, bool relabel) {
        pyb::array keep;
        ArrayView view;  // data == nullptr: no weights
        if (!weights.is_none()) view = float_view(weights, "neighbor_matching: e_weights", &keep);
        std::vector<int64_t> out;
        {
          pyb::gil_scoped_release nogil;
          out = graph::neighbor_matching(rel, view, seed, relabel);
        }
        return vector_to_numpy(std::move(out));
      },
      pyb::arg("rel"), pyb::arg("weights"), pyb::arg("seed"), pyb::arg("relabel") = true,
      "int64 cluster of each node of a greedy (heavy-edge with weights) neighbour matching of a "
      "bidirected relation; relabel numbers the clusters 0..k-1.");
}

}  // namespace nodeweave::py
