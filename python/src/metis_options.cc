// metis_options: the parsing behind every METIS binding.
#include "metis_options.h"

namespace nodeweave::py {

namespace {

// (num_nodes, num_constraints) integer weights as a row-major vector.
std::vector<int64_t> weight_matrix(pyb::handle obj, int64_t* num_constraints) {
  pyb::array arr = pyb::array::ensure(obj);
  NW_CHECK(arr, TypeError, "node_weights must be an integer array, got ", type_name(obj));
  const char kind = arr.dtype().kind();
  NW_CHECK(kind == 'i' || kind == 'u' || kind == 'b', TypeError,
           "node_weights must hold integers, got dtype ", std::string(pyb::str(arr.dtype())));
  NW_CHECK(arr.ndim() == 2, ValueError,
           "node_weights must be a (num_nodes, num_constraints) array, got ", arr.ndim(),
           " dimensions");
  auto ints = pyb::array_t<int64_t, pyb::array::c_style | pyb::array::forcecast>::ensure(arr);
  *num_constraints = static_cast<int64_t>(ints.shape(1));
  return std::vector<int64_t>(ints.data(), ints.data() + ints.size());
}

}  // namespace

sampling::MetisOptions metis_options(int64_t k, const std::string& mode, const std::string& objtype,
                                     pyb::handle node_weights, int64_t seed) {
  sampling::MetisOptions opt;
  opt.num_parts = k;
  if (mode == "k-way")
    opt.mode = sampling::MetisMode::kKway;
  else if (mode == "recursive")
    opt.mode = sampling::MetisMode::kRecursive;
  else
    throw ValueError(str_cat("mode must be 'k-way' or 'recursive', got '", mode, "'"));
  if (objtype == "cut")
    opt.objective = sampling::MetisObjective::kCut;
  else if (objtype == "vol")
    opt.objective = sampling::MetisObjective::kVolume;
  else
    throw ValueError(str_cat("objtype must be 'cut' or 'vol', got '", objtype, "'"));
  opt.seed = seed;
  if (!node_weights.is_none()) opt.node_weights = weight_matrix(node_weights, &opt.num_constraints);
  return opt;
}

}  // namespace nodeweave::py
