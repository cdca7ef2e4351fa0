// Conversions between graph formats on the CPU. The compressed form is built with a stable
// counting sort, so the entries of one row keep increasing edge-id order: kernels that walk a row
// then sum in a fixed order and give bit-identical results at any thread count.
#pragma once
#include "graph/id_array.h"

namespace nodeweave::graph {

struct CooArrays {
  IdArray src, dst;  // edge e goes src[e] -> dst[e]
};

// Rows are destinations for the in-edge (CSC) view, sources for the out-edge (CSR) view.
struct CompressedArrays {
  IdArray indptr;   // num_rows + 1
  IdArray indices;  // the other endpoint of each entry
  IdArray eids;     // the edge id of each entry
};

// Groups edges by `rows` (values in [0, num_rows)); `cols` becomes indices.
CompressedArrays coo_to_compressed(const IdArray& rows, const IdArray& cols, int64_t num_rows);
// Inverse: returns (row of each edge, col of each edge) in edge-id order.
CooArrays compressed_to_coo(const CompressedArrays& c, int64_t num_rows);
// Per-row entry counts (indptr differences), as int64.
IdArray degrees_from_indptr(const IdArray& indptr);

}  // namespace nodeweave::graph
