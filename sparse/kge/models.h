// The knowledge-graph-embedding models by name: the one table the kernels, the Python binding and
// the command line read (names, row widths), and `visit_model`, which hands a model's
// score_functions.h struct to generic code.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sparse/kge/score_functions.h"

namespace nodeweave::kge {

enum class Model : int32_t { TransE_L1, TransE_L2, TransR, RESCAL, DistMult, ComplEx, RotatE, SimplE, PairRE };

// The command-line names, in enum order ("TransE" alone means TransE_l2, as in DGL-KE).
const std::vector<std::string>& model_names();
// The model called `name` (case-insensitive); ValueError listing the known names otherwise.
Model parse_model(const std::string& name);
const std::string& model_name(Model m);

// Calls f(Model struct instance) for `m`.
template <typename F>
decltype(auto) visit_model(Model m, F&& f) {
  switch (m) {
    case Model::TransE_L1: return f(TransE<1>{});
    case Model::TransE_L2: return f(TransE<2>{});
    case Model::TransR: return f(TransR{});
    case Model::RESCAL: return f(Rescal{});
    case Model::DistMult: return f(DistMult{});
    case Model::ComplEx: return f(ComplEx{});
    case Model::RotatE: return f(RotatE{});
    case Model::SimplE: return f(SimplE{});
    case Model::PairRE: break;
  }
  return f(PairRE{});
}

int64_t entity_width(Model m, int64_t dim);
int64_t relation_width(Model m, int64_t dim);

}  // namespace nodeweave::kge
