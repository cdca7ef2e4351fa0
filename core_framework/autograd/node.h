// Autograd graph nodes, shaped like PyTorch's: each Node computes the gradients of its inputs from
// the gradients of its outputs and points at the nodes that produced those inputs (next_edges).
// Leaves end in an AccumulateGrad node that sums into tensor.grad.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core_framework/engine/op_def.h"
#include "core_framework/engine/tensor.h"

namespace nodeweave {

struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return fn != nullptr; }
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node() = default;
  virtual TensorList apply(TensorList&& grads) = 0;
  virtual std::string name() const = 0;
  // Frees saved tensors after a backward pass without retain_graph.
  virtual void release_variables() {}
  virtual size_t num_outputs() const = 0;

  uint64_t sequence_nr() const { return seq_; }
  std::vector<Edge>& next_edges() { return next_edges_; }

  // Hooks on the gradient flowing into output `output_nr`, run before apply().
  void add_pre_hook(uint32_t output_nr, int64_t id, std::function<Tensor(const Tensor&)> fn);
  void add_retain_grad_hook(uint32_t output_nr, std::function<Tensor(const Tensor&)> fn);
  void remove_pre_hook(int64_t id);
  void run_pre_hooks(TensorList& grads);

 protected:
  std::vector<Edge> next_edges_;

 private:
  struct PreHook {
    uint32_t output_nr;
    int64_t id;
    std::function<Tensor(const Tensor&)> fn;
  };
  uint64_t seq_;
  std::vector<PreHook> pre_hooks_;
  // retain_grad() hooks run after user hooks, so .grad shows the gradient the hooks produced.
  std::vector<PreHook> retain_hooks_;
};

// A tensor kept for the backward pass, with the version it had when saved.
class SavedTensor {
 public:
  SavedTensor() = default;
  // Outputs of the node itself are saved without their grad_fn (that would be a reference cycle)
  // and get it back on unpack.
  SavedTensor(const Tensor& t, bool is_output);
  Tensor unpack(const std::shared_ptr<Node>& owner) const;
  bool defined() const { return data_.defined(); }
  void reset() { data_ = Tensor(); }

 private:
  Tensor data_;
  int64_t saved_version_ = 0;
  bool is_output_ = false;
  bool requires_grad_ = false;
  uint32_t output_nr_ = 0;
  bool was_defined_ = false;
};

// The node every recorded op call gets: it evaluates the op's gradient rule from the op table.
class OpNode final : public Node {
 public:
  OpNode(const OpDef& def, Attrs attrs, const TensorList& inputs, const TensorList& outputs);
  TensorList apply(TensorList&& grads) override;
  std::string name() const override;
  void release_variables() override;
  size_t num_outputs() const override { return output_meta_.size(); }
  // Called once the outputs carry their grad_fn, so saved outputs remember their output_nr.
  void save_outputs(const TensorList& outputs);

 private:
  const OpDef& def_;
  Attrs attrs_;
  std::vector<SavedTensor> saved_inputs_;
  std::vector<SavedTensor> saved_outputs_;
  std::vector<TensorMeta> input_meta_;
  std::vector<TensorMeta> output_meta_;
  bool released_ = false;
};

// Sums incoming gradients into a leaf's .grad.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> variable);
  TensorList apply(TensorList&& grads) override;
  std::string name() const override { return "AccumulateGrad"; }
  size_t num_outputs() const override { return 1; }
  const std::shared_ptr<TensorImpl>& variable() const { return variable_; }

 private:
  std::shared_ptr<TensorImpl> variable_;
};

// The edge a gradient for `t` flows along: its grad_fn, or (for leaves) its accumulator.
Edge gradient_edge(const Tensor& t);
// Records `def` applied to inputs -> outputs in the autograd graph when any input requires grad.
void record_autograd(const OpDef& def, const Attrs& attrs, const TensorList& inputs,
                     TensorList& outputs);

}  // namespace nodeweave
