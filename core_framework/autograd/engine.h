// The backward pass: runs the autograd graph from some roots, PyTorch-style (dependency counts,
// a ready queue ordered by sequence number so later ops run first, input buffers that sum the
// gradients arriving at each node).
#pragma once
#include "core_framework/engine/tensor.h"

namespace nodeweave {

// tensor.backward(): accumulates into the .grad of the leaves.
void backward(const TensorList& roots, const TensorList& grad_roots, bool retain_graph,
              bool create_graph);

// autograd.grad(): returns d(roots)/d(inputs) without touching any .grad. An input the roots do
// not depend on gets an undefined tensor when allow_unused, else an error.
TensorList grad(const TensorList& roots, const TensorList& inputs, const TensorList& grad_roots,
                bool retain_graph, bool create_graph, bool allow_unused);

}  // namespace nodeweave
