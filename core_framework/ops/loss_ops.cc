// Loss functions as composites of primitives, so autograd and the tracer see only table ops.
// Class-index losses pick log-probabilities with take_along (gather) (one read per sample, gradient
// by scatter-add) instead of one-hot masks, keeping them linear in the batch for any class count.
#include <cmath>

#include "core_framework/ops/along_dim.h"
#include "core_framework/ops/dim_util.h"
#include "core_framework/ops/op_helpers.h"

namespace nodeweave {

namespace {

Tensor wrapped(double v, DType d) { return scalar_tensor(v, d, Device{}, true); }

void check_floating(const Tensor& t, const char* op, const char* arg) {
  NW_CHECK(t.defined(), ValueError, op, ": ", arg, " is undefined");
  NW_CHECK(is_floating(t.dtype()), TypeError, op, ": ", arg,
           " must be a floating-point tensor, got ", dtype_name(t.dtype()));
}

// The class dimension: inputs are (C), (N, C) or (N, C, d1, ...).
int64_t class_dim(const Tensor& input, const char* op) {
  NW_CHECK(input.dim() >= 1, ValueError, op,
           ": input must have at least 1 dimension (classes), got shape ",
           shape_str(input.shape()));
  return input.dim() == 1 ? 0 : 1;
}

// Per-sample pieces of a class-index loss: the input value at each target and the sample weight
// (0 for ignored samples).
struct Picked {
  Tensor value;   // input[n, target[n], ...], shape of target
  Tensor weight;  // weight[target[n]] or 1; 0 where target == ignore_index
  Tensor valid;   // bool, target != ignore_index
  Tensor safe;    // target with ignored entries replaced by class 0
};

template <typename ix>
void check_targets(const Tensor& target, int64_t C, int64_t ignore_index, const char* op) {
  Tensor t = dense(target);
  const ix* p = t.data<ix>();
  const int64_t n = t.numel();
  const int64_t bad = first_bad(p, n, [=](ix v) {
    const int64_t w = static_cast<int64_t>(v);
    return w != ignore_index && (w < 0 || w >= C);
  });
  NW_CHECK(bad == n, IndexError, op, ": target ", static_cast<int64_t>(p[bad]),
           " (at flat position ", bad, ") is out of bounds for ", C,
           " classes; expected a value in [0, ", C, ")", " or ignore_index (", ignore_index, ")");
}

Picked pick_targets(const Tensor& input, const Tensor& target, const Tensor& weight,
                    int64_t ignore_index, const char* op) {
  const int64_t cd = class_dim(input, op);
  const int64_t C = input.size(cd);
  NW_CHECK(target.dtype() == DType::Int64 || target.dtype() == DType::Int32, TypeError, op,
           ": target must hold int64 class indices, got ", dtype_name(target.dtype()));
  Shape expect = input.shape();
  expect.erase(expect.begin() + cd);
  NW_CHECK(target.shape() == expect, ValueError, op, ": target of shape ",
           shape_str(target.shape()), " does not match input of shape ", shape_str(input.shape()),
           " (expected target shape ", shape_str(expect), ")");
  if (weight.defined()) {
    check_floating(weight, op, "weight");
    NW_CHECK(weight.dim() == 1 && weight.size(0) == C, ValueError, op,
             ": weight must be a 1-D tensor with one entry per class (", C, "), got shape ",
             shape_str(weight.shape()));
  }
  if (target.device().is_cpu()) {
    if (target.dtype() == DType::Int64)
      check_targets<int64_t>(target, C, ignore_index, op);
    else
      check_targets<int32_t>(target, C, ignore_index, op);
  }
  Picked p;
  p.valid = ne(target, wrapped(static_cast<double>(ignore_index), DType::Int64));
  p.safe = where(p.valid, target, wrapped(0, target.dtype()));
  p.value = squeeze(take_along(input, unsqueeze(p.safe, cd), cd), cd);
  if (weight.defined()) {
    Tensor w = reshape(take_along(weight, reshape(p.safe, {-1}), 0), target.shape());
    p.weight = where(p.valid, w, wrapped(0.0, w.dtype()));
  } else {
    p.weight = cast(p.valid, input.dtype());
  }
  return p;
}

// Sum / mean / none over a per-sample loss whose mean divides by the total sample weight.
Tensor reduce_weighted(const Tensor& per, const Tensor& weight, Reduction r) {
  if (r == Reduction::Mean) return div(sum(per), sum(weight));
  return reduce_loss(per, r);
}

}  // namespace

Tensor reduce_loss(const Tensor& per_element, Reduction r) {
  switch (r) {
    case Reduction::None:
      return per_element;
    case Reduction::Mean:
      return mean(per_element);
    case Reduction::Sum:
      return sum(per_element);
  }
  throw ValueError(
      str_cat("reduction: expected None (0), Mean (1) or Sum (2), got ", static_cast<int64_t>(r)));
}

Tensor nll_loss(const Tensor& logp, const Tensor& target, Reduction r, const Tensor& weight,
                int64_t ignore_index) {
  check_floating(logp, "nll_loss", "input");
  Picked p = pick_targets(logp, target, weight, ignore_index, "nll_loss");
  return reduce_weighted(neg(mul(p.value, p.weight)), p.weight, r);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, Reduction r, const Tensor& weight,
                     int64_t ignore_index, double label_smoothing) {
  check_floating(logits, "cross_entropy", "input");
  NW_CHECK(label_smoothing >= 0 && label_smoothing <= 1, ValueError,
           "cross_entropy: label_smoothing must be in [0, 1], got ", label_smoothing);
  const int64_t cd = class_dim(logits, "cross_entropy");
  const int64_t C = logits.size(cd);
  Tensor logp = log_softmax(logits, cd);
  Shape wshape(logits.dim(), 1);
  wshape[cd] = C;

  if (is_floating(target.dtype())) {
    // Class probabilities: -sum_c w_c t_c log p_c; the mean divides by the sample count.
    NW_CHECK(target.shape() == logits.shape(), ValueError,
             "cross_entropy: probability target of shape ", shape_str(target.shape()),
             " must match input of shape ", shape_str(logits.shape()));
    if (weight.defined()) {
      check_floating(weight, "cross_entropy", "weight");
      NW_CHECK(weight.dim() == 1 && weight.size(0) == C, ValueError,
               "cross_entropy: weight must be a 1-D tensor with one entry per class (", C,
               "), got shape ", shape_str(weight.shape()));
    }
    Tensor t =
        label_smoothing > 0 ? add(mul(target, 1.0 - label_smoothing), label_smoothing / C) : target;
    Tensor term = mul(logp, t);
    if (weight.defined()) term = mul(term, reshape(weight, wshape));
    return reduce_loss(neg(sum(term, {cd})), r);
  }

  Picked p = pick_targets(logp, target, weight, ignore_index, "cross_entropy");
  Tensor nll = reduce_weighted(neg(mul(p.value, p.weight)), p.weight, r);
  if (label_smoothing == 0) return nll;
  // PyTorch's smoothing: (1 - s) * nll + s / C * (sum over classes of -w_c log p_c), with the
  // second term normalized like the first.
  Tensor all = weight.defined() ? mul(logp, reshape(weight, wshape)) : logp;
  Tensor smooth = where(p.valid, neg(sum(all, {cd})), wrapped(0.0, logp.dtype()));
  Tensor s = reduce_weighted(smooth, p.weight, r);
  return add(mul(nll, 1.0 - label_smoothing), mul(s, label_smoothing / static_cast<double>(C)));
}

// (1 - y) x + (1 + (pw - 1) y) softplus(-x): softplus(-x) = -log sigmoid(x) without overflow.
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target, Reduction r,
                                        const Tensor& pos_weight) {
  check_floating(logits, "binary_cross_entropy_with_logits", "input");
  check_floating(target, "binary_cross_entropy_with_logits", "target");
  NW_CHECK(target.shape() == logits.shape(), ValueError,
           "binary_cross_entropy_with_logits: target of shape ", shape_str(target.shape()),
           " must match input of shape ", shape_str(logits.shape()));
  Tensor sp = softplus(neg(logits));
  Tensor lin = mul(sub(wrapped(1.0, target.dtype()), target), logits);
  if (!pos_weight.defined()) return reduce_loss(add(lin, sp), r);
  check_floating(pos_weight, "binary_cross_entropy_with_logits", "pos_weight");
  broadcast_shapes(pos_weight.shape(), logits.shape(),
                   "binary_cross_entropy_with_logits (pos_weight)");
  Tensor lw = add(mul(sub(pos_weight, wrapped(1.0, pos_weight.dtype())), target), 1.0);
  return reduce_loss(add(lin, mul(lw, sp)), r);
}

Tensor mse_loss(const Tensor& a, const Tensor& b, Reduction r) {
  check_floating(a, "mse_loss", "input");
  check_floating(b, "mse_loss", "target");
  broadcast_shapes(a.shape(), b.shape(), "mse_loss");
  Tensor d = sub(a, b);
  return reduce_loss(mul(d, d), r);
}

Tensor l1_loss(const Tensor& a, const Tensor& b, Reduction r) {
  check_floating(a, "l1_loss", "input");
  check_floating(b, "l1_loss", "target");
  broadcast_shapes(a.shape(), b.shape(), "l1_loss");
  return reduce_loss(abs(sub(a, b)), r);
}

// max(0, -y (a - b) + margin)
Tensor margin_ranking_loss(const Tensor& a, const Tensor& b, const Tensor& y, double margin,
                           Reduction r) {
  check_floating(a, "margin_ranking_loss", "input1");
  check_floating(b, "margin_ranking_loss", "input2");
  NW_CHECK(y.defined(), ValueError, "margin_ranking_loss: target is undefined");
  broadcast_shapes(broadcast_shapes(a.shape(), b.shape(), "margin_ranking_loss"), y.shape(),
                   "margin_ranking_loss");
  return reduce_loss(relu(add(mul(neg(y), sub(a, b)), margin)), r);
}

}  // namespace nodeweave
