// METIS options from Python arguments, shared by the Cluster-GCN binding (nodeweave._C.sampling)
// and the partitioner's (nodeweave._C.distributed).
#pragma once
#include <string>

#include "py_convert.h"
#include "sampling/metis_partition.h"

namespace nodeweave::py {

// k, mode ('k-way' / 'recursive'), objtype ('cut' / 'vol'), node_weights (None or a
// (num_nodes, num_constraints) integer array) and seed; ValueError/TypeError naming the argument.
sampling::MetisOptions metis_options(int64_t k, const std::string& mode, const std::string& objtype,
                                     pyb::handle node_weights, int64_t seed);

}  // namespace nodeweave::py
