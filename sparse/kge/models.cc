#include "sparse/kge/models.h"

#include <algorithm>
#include <cctype>

#include "core_framework/runtime/error.h"

namespace nodeweave::kge {

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = {"TransE_l1", "TransE_l2", "TransR", "RESCAL", "DistMult",
                                                 "ComplEx",   "RotatE",    "SimplE", "PairRE"};
  return names;
}

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}
}  // namespace

Model parse_model(const std::string& name) {
  const std::string key = lower(name);
  if (key == "transe") return Model::TransE_L2;
  const auto& names = model_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (lower(names[i]) == key) return static_cast<Model>(i);
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  throw ValueError(str_cat("unknown model '", name, "': expected one of ", known, " (TransE = TransE_l2)"));
}

const std::string& model_name(Model m) { return model_names()[static_cast<size_t>(m)]; }

int64_t entity_width(Model m, int64_t dim) {
  return visit_model(m, [&](auto model) { return decltype(model)::entity_width(dim); });
}
int64_t relation_width(Model m, int64_t dim) {
  return visit_model(m, [&](auto model) { return decltype(model)::relation_width(dim); });
}

}  // namespace nodeweave::kge
