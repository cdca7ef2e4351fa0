// Packing a compressed adjacency's (neighbour, edge id) pairs, and alias entries, for the samplers.
#include "sampling/packed_rows.h"

#include <algorithm>
#include <limits>

#include "core_framework/runtime/error.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::sampling {

bool PackedRows::packable(const graph::CompressedArrays& adj, int64_t num_cols) {
  constexpr int64_t kMax = std::numeric_limits<uint32_t>::max();
  return adj.indices.device().is_cpu() && num_cols <= kMax && adj.indices.length <= kMax;
}

PackedRows PackedRows::pack(const graph::CompressedArrays& adj, const WeightedRows* weighted) {
  PackedRows out;
  out.size_ = adj.indices.length;
  NW_CHECK(!weighted || static_cast<int64_t>(weighted->entry.size()) == out.size_, ValueError,
           "PackedRows: the alias tables were built for another adjacency");
  // Not value-initialised: the parallel fill is the first touch of every page.
  const auto n = static_cast<size_t>(out.size_);
  const size_t entry_bytes = weighted ? sizeof(PackedWeightedEntry) : sizeof(PackedEntry);
  out.storage_ = std::make_shared<Storage>(std::max<size_t>(n, 1) * entry_bytes, cpu_device());
  if (weighted)
    out.weighted_ = static_cast<PackedWeightedEntry*>(out.storage_->data());
  else
    out.plain_ = static_cast<PackedEntry*>(out.storage_->data());
  graph::dispatch_id(adj.indices.dtype, [&](auto* tag) {
    using Id = std::remove_pointer_t<decltype(tag)>;
    const Id* indices = adj.indices.data<Id>();
    const Id* eids = adj.eids.data<Id>();
    parallel_for(0, out.size_, 1 << 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const PackedEntry p{static_cast<uint32_t>(indices[i]), static_cast<uint32_t>(eids[i])};
        if (weighted)
          out.weighted_[i] = {weighted->entry[static_cast<size_t>(i)], p};
        else
          out.plain_[i] = p;
      }
    });
  });
  return out;
}

}  // namespace nodeweave::sampling
