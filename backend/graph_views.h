// The kernel-layer views (sparse/types.h) of a relation graph's cached formats, shared by every
// binding: the native engine ops and the DLPack entry points the PyTorch backend calls. Building a
// view builds the format on first use (RelationGraph caches it).
#pragma once
#include "graph/relation_graph.h"
#include "sparse/types.h"

namespace nodeweave::backend {

sparse::CompressedView in_view(const graph::RelationGraph& g);   // rows = destinations (CSC)
sparse::CompressedView out_view(const graph::RelationGraph& g);  // rows = sources (CSR)
sparse::CooView coo_view(const graph::RelationGraph& g);

}  // namespace nodeweave::backend
