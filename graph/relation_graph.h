// One relation of a heterograph: a bipartite edge set from `num_src` source nodes to `num_dst`
// destination nodes (the same node set for homogeneous graphs). It may hold three formats, each
// created on first use and cached: COO (edge-id order), the out-edge CSR (rows = sources) and the
// in-edge CSC (rows = destinations). `allowed_formats` limits which may exist, as DGL's formats().
// Immutable after construction; format creation is guarded so concurrent readers are safe.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "graph/format_convert.h"

namespace nodeweave::graph {

enum FormatBits : uint8_t { kCoo = 1, kCsr = 2, kCsc = 4, kAllFormats = 7 };
std::string formats_str(uint8_t formats);  // "coo, csr"

class RelationGraph;
using RelationGraphPtr = std::shared_ptr<const RelationGraph>;

class RelationGraph : public std::enable_shared_from_this<RelationGraph> {
 public:
  // src/dst: same length and id dtype, on the CPU; every id is checked against the node counts
  // (ValueError naming src or dst, the offending id and the count). int32 graphs must have fewer
  // than 2^31 nodes and edges.
  static RelationGraphPtr from_coo(int64_t num_src, int64_t num_dst, IdArray src, IdArray dst,
                                   uint8_t allowed_formats = kAllFormats);
  // From an out-edge CSR (rows = sources); eids may be empty (then 0..E-1 in entry order).
  static RelationGraphPtr from_csr(int64_t num_src, int64_t num_dst, IdArray indptr,
                                   IdArray indices, IdArray eids,
                                   uint8_t allowed_formats = kAllFormats);

  int64_t num_src() const { return num_src_; }
  int64_t num_dst() const { return num_dst_; }
  int64_t num_edges() const { return num_edges_; }
  DType id_dtype() const { return id_dtype_; }
  Device device() const { return device_; }
  uint8_t allowed_formats() const { return allowed_; }
  uint8_t created_formats() const;

  // Each builds the format from an existing one when first asked (ValueError when the format is
  // not allowed; conversions run on the CPU, see to()).
  const CooArrays& coo() const;
  const CompressedArrays& out_csr() const;
  const CompressedArrays& in_csc() const;

  IdArray in_degrees() const;   // int64, num_dst
  IdArray out_degrees() const;  // int64, num_src

  // Same edges with every direction flipped; shares all created arrays.
  RelationGraphPtr reverse() const;
  // reverse() for a kernel that walks the reversed graph's in-edges (every backward pass of
  // gSpMM, gSDDMM and edge softmax): builds this graph's out-edge CSR first, when allowed and on
  // the CPU, so that it is converted once and cached here. A plain reverse() of a graph without
  // it would sort the edges again in every call, into a graph that is thrown away.
  RelationGraphPtr reverse_for_kernels() const;
  // The graph this one is the reverse() of (null for a graph not made by reverse()): a traced
  // program that takes a graph as input finds the reversed graphs backward passes walk by it.
  const RelationGraphPtr& reverse_of() const { return reverse_of_; }
  // The graph this one has the same edges as, when made from it by with_formats(), to() or
  // astype() (null otherwise): a host read of its structure is one of that graph's too.
  const RelationGraphPtr& same_edges_as() const { return same_edges_as_; }
  // What this graph was made from, by reverse() or by one of the above (null for a graph built
  // from arrays).
  const RelationGraphPtr& made_from() const { return reverse_of_ ? reverse_of_ : same_edges_as_; }
  // A graph restricted to `formats` (must intersect the created ones or be creatable); shares
  // arrays.
  RelationGraphPtr with_formats(uint8_t formats) const;
  // Builds every allowed format on the CPU, then copies them to `device`.
  RelationGraphPtr to(Device device) const;
  RelationGraphPtr astype(DType id_dtype) const;  // every created format converted

 private:
  RelationGraph(int64_t num_src, int64_t num_dst, int64_t num_edges, DType id_dtype, Device device,
                uint8_t allowed);
  void check_allowed(uint8_t fmt, const char* what) const;

  int64_t num_src_, num_dst_, num_edges_;
  DType id_dtype_;
  Device device_;
  uint8_t allowed_;
  mutable std::mutex mu_;
  mutable std::optional<CooArrays> coo_;
  mutable std::optional<CompressedArrays> csr_, csc_;
  RelationGraphPtr reverse_of_, same_edges_as_;
};

}  // namespace nodeweave::graph
