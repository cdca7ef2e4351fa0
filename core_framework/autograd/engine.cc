#include "core_framework/autograd/engine.h"

#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "core_framework/autograd/grad_mode.h"
#include "core_framework/autograd/node.h"
#include "core_framework/engine/dispatch_observer.h"
#include "core_framework/engine/functional.h"

namespace nodeweave {

namespace {

struct ReadyOrder {
  bool operator()(Node* a, Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

struct Capture {
  Node* node;
  uint32_t input_nr;
};

// Validates roots and builds their initial gradients (ones for scalars).
TensorList root_grads(const TensorList& roots, const TensorList& grad_roots) {
  NW_CHECK(grad_roots.empty() || grad_roots.size() == roots.size(), ValueError, "backward: got ",
           roots.size(), " tensors but ", grad_roots.size(), " gradients");
  TensorList out(roots.size());
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    NW_CHECK(r.requires_grad(), std::runtime_error, "element ", i,
             " of tensors does not require grad and does not have a grad_fn");
    Tensor g = grad_roots.empty() ? Tensor() : grad_roots[i];
    if (!g.defined()) {
      NW_CHECK(r.numel() == 1, std::runtime_error,
               "grad can be implicitly created only for scalar outputs; got an output of shape ",
               shape_str(r.shape()), " (pass gradient=)");
      g = ones(r.shape(), r.dtype(), r.device());
    } else {
      NW_CHECK(g.shape() == r.shape(), ValueError, "backward: gradient has shape ",
               shape_str(g.shape()), " but the output has shape ", shape_str(r.shape()));
    }
    out[i] = g;
  }
  return out;
}

// Runs the graph. With `captures`, gradients flowing into those (node, input_nr) slots are
// returned instead of accumulated, and nodes that lead to no capture are skipped.
TensorList run_backward(const TensorList& roots, const TensorList& grad_roots, bool retain_graph,
                        bool create_graph, const std::vector<Capture>* captures) {
  TensorList initial = root_grads(roots, grad_roots);
  AutoGradMode mode(create_graph);

  // Dependency counts over the reachable graph.
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack;
  std::unordered_set<Node*> seen;
  for (const Tensor& r : roots) {
    Node* n = gradient_edge(r).fn.get();
    if (seen.insert(n).second) stack.push_back(n);
  }
  std::vector<Node*> order;  // discovery order, for the "needed" pass
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (Edge& e : n->next_edges()) {
      if (!e.valid()) continue;
      ++deps[e.fn.get()];
      if (seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
    }
  }

  // For grad(): only nodes from which a captured slot is reachable need to run.
  std::unordered_set<Node*> needed;
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> capture_at;
  TensorList captured;
  if (captures) {
    captured.resize(captures->size());
    for (size_t i = 0; i < captures->size(); ++i) {
      capture_at[(*captures)[i].node].push_back({(*captures)[i].input_nr, i});
    }
    // A node must run when a captured slot is reachable from it: one pass over the discovered
    // nodes in reverse topological order (Kahn's algorithm on the dependency counts).
    for (auto& kv : capture_at) needed.insert(kv.first);
    std::unordered_map<Node*, int> indeg = deps;
    std::vector<Node*> topo, ready_nodes;
    for (Node* n : order) {
      if (indeg[n] == 0) ready_nodes.push_back(n);
    }
    while (!ready_nodes.empty()) {
      Node* n = ready_nodes.back();
      ready_nodes.pop_back();
      topo.push_back(n);
      for (Edge& e : n->next_edges()) {
        if (e.valid() && --indeg[e.fn.get()] == 0) ready_nodes.push_back(e.fn.get());
      }
    }
    for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
      for (Edge& e : (*it)->next_edges()) {
        if (e.valid() && needed.count(e.fn.get())) {
          needed.insert(*it);
          break;
        }
      }
    }
  }

  std::unordered_map<Node*, TensorList> buffers;
  auto accumulate = [&](Node* n, uint32_t slot, const Tensor& g) {
    TensorList& buf = buffers[n];
    if (buf.size() < n->num_outputs()) buf.resize(n->num_outputs());
    buf[slot] = buf[slot].defined() ? add(buf[slot], g) : g;
  };
  std::priority_queue<Node*, std::vector<Node*>, ReadyOrder> ready;
  std::unordered_map<Node*, std::shared_ptr<Node>> keep_alive;
  for (size_t i = 0; i < roots.size(); ++i) {
    Edge e = gradient_edge(roots[i]);
    keep_alive[e.fn.get()] = e.fn;
    accumulate(e.fn.get(), e.input_nr, initial[i]);
  }
  for (auto& kv : keep_alive) {
    if (deps[kv.first] == 0) ready.push(kv.first);
  }

  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    TensorList grads = std::move(buffers[n]);
    buffers.erase(n);
    grads.resize(n->num_outputs());
    n->run_pre_hooks(grads);
    if (captures) {
      auto it = capture_at.find(n);
      if (it != capture_at.end()) {
        for (auto& [slot, idx] : it->second) captured[idx] = grads[slot];
      }
    }
    bool run = !captures || (needed.count(n) && dynamic_cast<AccumulateGrad*>(n) == nullptr);
    TensorList out;
    if (run) {
      DispatchObserver* obs = dispatch_observer();
      if (obs) obs->on_backward_begin(n, grads);
      out = n->apply(std::move(grads));
      if (obs) obs->on_backward_end(n, out);
      if (!retain_graph) {
        n->release_variables();
        if (obs) obs->on_autograd_released(n);
      }
    }
    auto& edges = n->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      Edge& e = edges[i];
      if (!e.valid()) continue;
      Node* next = e.fn.get();
      if (run && i < out.size() && out[i].defined()) accumulate(next, e.input_nr, out[i]);
      keep_alive.emplace(next, e.fn);
      if (--deps[next] == 0) ready.push(next);
    }
  }
  return captured;
}

}  // namespace

void backward(const TensorList& roots, const TensorList& grad_roots, bool retain_graph,
              bool create_graph) {
  run_backward(roots, grad_roots, retain_graph || create_graph, create_graph, nullptr);
}

TensorList grad(const TensorList& roots, const TensorList& inputs, const TensorList& grad_roots,
                bool retain_graph, bool create_graph, bool allow_unused) {
  std::vector<Capture> captures;
  for (size_t i = 0; i < inputs.size(); ++i) {
    NW_CHECK(inputs[i].requires_grad(), std::runtime_error, "grad: input ", i,
             " does not require grad");
    Edge e = gradient_edge(inputs[i]);
    captures.push_back(Capture{e.fn.get(), e.input_nr});
  }
  TensorList result =
      run_backward(roots, grad_roots, retain_graph || create_graph, create_graph, &captures);
  for (size_t i = 0; i < result.size(); ++i) {
    NW_CHECK(result[i].defined() || allow_unused, std::runtime_error, "grad: input ", i,
             " was not used in the graph; pass allow_unused=True if this is intended");
  }
  return result;
}

}  // namespace nodeweave
