// Row-sparse gradients for sparse embeddings: coalescing the rows gathered by several lookups, and
// the optimizer updates that touch only those rows (SGD, Adagrad, SparseAdam).
#include <algorithm>
#include <cmath>

#include "core_framework/engine/functional.h"
#include "core_framework/optim/fused_steps.h"
#include "core_framework/optim/step_checks.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave::optim {

namespace {

struct RowRef {
  int64_t id;
  int64_t pos;  // global position over all lookups, for a stable (deterministic) summation order
};

// Grain for loops over rows of `row` elements each: keep ~kGrainSize elements per chunk.
int64_t row_grain(int64_t row) {
  return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, row));
}

int64_t row_size(const Shape& param_shape) {
  int64_t r = 1;
  for (size_t d = 1; d < param_shape.size(); ++d) r *= param_shape[d];
  return r;
}

template <typename I>
void collect_ids(const Tensor& idx, size_t k, int64_t base, int64_t num_rows, int64_t skip_row,
                 std::vector<RowRef>* refs) {
  const I* p = idx.data<I>();
  for (int64_t j = 0; j < idx.numel(); ++j) {
    const int64_t id = static_cast<int64_t>(p[j]);
    NW_CHECK(id >= 0 && id < num_rows, IndexError, "coalesce_rows: indices[", k, "] holds row ", id,
             ", out of range for a parameter with ", num_rows, " rows");
    if (id != skip_row) refs->push_back(RowRef{id, base + j});
  }
}

// Validates a RowSparseGrad against the parameter it updates. Ids must be strictly increasing: the
// update kernels write rows in parallel, and a repeated id would be a data race.
void check_row_grad(const char* op, const Tensor& param, const RowSparseGrad& g) {
  detail::check_params(op, {param});
  NW_CHECK(param.dim() >= 1, ValueError, op, ": param must have at least one dimension");
  NW_CHECK(g.ids.defined() && g.ids.dtype() == DType::Int64 && g.ids.dim() == 1 &&
               g.ids.is_contiguous() && g.ids.device().is_cpu(),
           TypeError, op, ": ids must be a contiguous 1-D int64 CPU tensor");
  Shape want = param.shape();
  want[0] = g.ids.numel();
  NW_CHECK(g.values.defined() && g.values.shape() == want, ValueError, op,
           ": values must have shape ", shape_str(want), ", got ",
           g.values.defined() ? shape_str(g.values.shape()) : "None");
  NW_CHECK(g.values.dtype() == param.dtype() &&
               (g.values.numel() == 0 || g.values.is_contiguous()) && g.values.device().is_cpu(),
           TypeError, op, ": values must be a contiguous CPU tensor of the parameter's dtype ",
           dtype_name(param.dtype()));
  const int64_t* ids = g.ids.data<int64_t>();
  for (int64_t j = 0; j < g.ids.numel(); ++j) {
    NW_CHECK(ids[j] >= 0 && ids[j] < param.size(0), IndexError, op, ": ids[", j, "] = ", ids[j],
             " is out of range for ", param.size(0), " rows");
    NW_CHECK(j == 0 || ids[j] > ids[j - 1], ValueError, op,
             ": ids must be strictly increasing (coalesced), but ids[", j, "] = ", ids[j],
             " follows ", ids[j - 1]);
  }
}

}  // namespace

RowSparseGrad coalesce_rows(const TensorList& indices, const TensorList& values,
                            const Shape& param_shape, const std::vector<int64_t>& skip_rows) {
  const char* op = "coalesce_rows";
  NW_CHECK(!param_shape.empty(), ValueError, op, ": param_shape must have at least one dimension");
  NW_CHECK(indices.size() == values.size(), ValueError, op, ": got ", indices.size(),
           " index tensors but ", values.size(), " value tensors");
  NW_CHECK(skip_rows.size() == indices.size(), ValueError, op, ": got ", skip_rows.size(),
           " skip_rows for ", indices.size(), " index tensors");
  const int64_t num_rows = param_shape[0], row = row_size(param_shape);
  DType dtype = DType::Float32;
  std::vector<Tensor> vals(values.size());
  std::vector<RowRef> refs;
  std::vector<const void*> src_rows;  // pos -> start of that row's values
  for (size_t k = 0; k < indices.size(); ++k) {
    const Tensor& idx = indices[k];
    NW_CHECK(idx.defined() && (idx.dtype() == DType::Int64 || idx.dtype() == DType::Int32),
             TypeError, op, ": indices[", k, "] must be an int32 or int64 tensor");
    NW_CHECK(values[k].defined() &&
                 (values[k].dtype() == DType::Float32 || values[k].dtype() == DType::Float64),
             TypeError, op, ": values[", k, "] must be a float32 or float64 tensor");
    NW_CHECK(idx.device().is_cpu() && values[k].device().is_cpu(), NotImplementedError, op,
             ": only CPU tensors are supported");
    if (k == 0) dtype = values[k].dtype();
    NW_CHECK(values[k].dtype() == dtype, TypeError, op, ": values[", k, "] has dtype ",
             dtype_name(values[k].dtype()), " but values[0] has ", dtype_name(dtype));
    Shape want = idx.shape();
    want.insert(want.end(), param_shape.begin() + 1, param_shape.end());
    NW_CHECK(values[k].shape() == want, ValueError, op, ": values[", k, "] has shape ",
             shape_str(values[k].shape()), ", expected ", shape_str(want), " (indices[", k,
             "].shape + parameter row shape)");
    Tensor ci = contiguous(idx.detach());
    vals[k] = contiguous(values[k].detach());
    const int64_t base = static_cast<int64_t>(src_rows.size());
    NW_DISPATCH_INDEX(ci.dtype(), op,
                      { collect_ids<scalar_t>(ci, k, base, num_rows, skip_rows[k], &refs); });
    const char* bytes = static_cast<const char*>(vals[k].data_ptr());
    const size_t row_bytes = static_cast<size_t>(row) * vals[k].itemsize();
    for (int64_t j = 0; j < ci.numel(); ++j)
      src_rows.push_back(bytes + static_cast<size_t>(j) * row_bytes);
  }
  std::sort(refs.begin(), refs.end(), [](const RowRef& a, const RowRef& b) {
    return a.id != b.id ? a.id < b.id : a.pos < b.pos;
  });
  // starts[u] .. starts[u+1] are the refs of the u-th distinct row.
  std::vector<size_t> starts;
  for (size_t j = 0; j < refs.size(); ++j) {
    if (j == 0 || refs[j].id != refs[j - 1].id) starts.push_back(j);
  }
  const int64_t u = static_cast<int64_t>(starts.size());
  starts.push_back(refs.size());

  Shape out_shape = param_shape;
  out_shape[0] = u;
  RowSparseGrad out{empty({u}, DType::Int64), zeros(out_shape, dtype)};
  int64_t* ids = out.ids.data<int64_t>();
  for (int64_t j = 0; j < u; ++j) ids[j] = refs[starts[static_cast<size_t>(j)]].id;
  NW_DISPATCH_FLOAT(dtype, op, {
    scalar_t* dst = out.values.data<scalar_t>();
    parallel_for(0, u, row_grain(row), [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) {
        scalar_t* d = dst + j * row;
        for (size_t r = starts[static_cast<size_t>(j)]; r < starts[static_cast<size_t>(j) + 1];
             ++r) {
          const scalar_t* s =
              static_cast<const scalar_t*>(src_rows[static_cast<size_t>(refs[r].pos)]);
          for (int64_t c = 0; c < row; ++c) d[c] += s[c];
        }
      }
    });
  });
  return out;
}

void sgd_sparse_step(const Tensor& param, const RowSparseGrad& g, double lr, bool maximize) {
  const char* op = "sgd_sparse_step";
  detail::check_hyper(op, "lr", lr);
  check_row_grad(op, param, g);
  const int64_t row = row_size(param.shape()), u = g.ids.numel();
  const int64_t* ids = g.ids.data<int64_t>();
  NW_DISPATCH_FLOAT(param.dtype(), op, {
    scalar_t* p = param.data<scalar_t>();
    const scalar_t* v = g.values.data<scalar_t>();
    const scalar_t neg_lr = static_cast<scalar_t>(maximize ? lr : -lr);
    parallel_for(0, u, row_grain(row), [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) {
        scalar_t* pr = p + ids[j] * row;
        const scalar_t* vr = v + j * row;
        for (int64_t c = 0; c < row; ++c) pr[c] += neg_lr * vr[c];
      }
    });
  });
  param.bump_version();
}

void adagrad_sparse_step(const Tensor& param, const Tensor& state_sum, const RowSparseGrad& g,
                         double clr, double eps, bool maximize) {
  const char* op = "adagrad_sparse_step";
  detail::check_hyper(op, "clr", clr);
  detail::check_hyper(op, "eps", eps);
  check_row_grad(op, param, g);
  detail::check_state(op, "state_sum", {state_sum}, {param});
  const int64_t row = row_size(param.shape()), u = g.ids.numel();
  const int64_t* ids = g.ids.data<int64_t>();
  NW_DISPATCH_FLOAT(param.dtype(), op, {
    scalar_t* p = param.data<scalar_t>();
    scalar_t* s = state_sum.data<scalar_t>();
    const scalar_t* v = g.values.data<scalar_t>();
    const scalar_t lr_t = static_cast<scalar_t>(clr), eps_t = static_cast<scalar_t>(eps);
    parallel_for(0, u, row_grain(row), [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) {
        scalar_t* pr = p + ids[j] * row;
        scalar_t* sr = s + ids[j] * row;
        const scalar_t* vr = v + j * row;
        for (int64_t c = 0; c < row; ++c) {
          const scalar_t d = maximize ? -vr[c] : vr[c];
          sr[c] += d * d;
          pr[c] += -lr_t * (d / (std::sqrt(sr[c]) + eps_t));
        }
      }
    });
  });
  param.bump_version();
  state_sum.bump_version();
}

void sparse_adam_step(const Tensor& param, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                      const RowSparseGrad& g, int64_t step, double lr, double beta1, double beta2,
                      double eps, bool maximize) {
  const char* op = "sparse_adam_step";
  detail::check_hyper(op, "lr", lr);
  detail::check_hyper(op, "eps", eps);
  NW_CHECK(beta1 >= 0 && beta1 < 1, ValueError, op, ": beta1 must be in [0, 1), got ", beta1);
  NW_CHECK(beta2 >= 0 && beta2 < 1, ValueError, op, ": beta2 must be in [0, 1), got ", beta2);
  NW_CHECK(step >= 1, ValueError, op, ": step must be >= 1, got ", step);
  check_row_grad(op, param, g);
  detail::check_state(op, "exp_avg", {exp_avg}, {param});
  detail::check_state(op, "exp_avg_sq", {exp_avg_sq}, {param});
  const int64_t row = row_size(param.shape()), u = g.ids.numel();
  const int64_t* ids = g.ids.data<int64_t>();
  const double bc1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  const double step_size = lr * std::sqrt(bc2) / bc1;
  NW_DISPATCH_FLOAT(param.dtype(), op, {
    scalar_t* p = param.data<scalar_t>();
    scalar_t* m = exp_avg.data<scalar_t>();
    scalar_t* v2 = exp_avg_sq.data<scalar_t>();
    const scalar_t* v = g.values.data<scalar_t>();
    const scalar_t w1 = static_cast<scalar_t>(1.0 - beta1), w2 = static_cast<scalar_t>(1.0 - beta2);
    const scalar_t eps_t = static_cast<scalar_t>(eps), ss = static_cast<scalar_t>(step_size);
    parallel_for(0, u, row_grain(row), [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) {
        const int64_t o = ids[j] * row;
        const scalar_t* vr = v + j * row;
        for (int64_t c = 0; c < row; ++c) {
          const scalar_t d = maximize ? -vr[c] : vr[c];
          // torch's SparseAdam adds (new - old) * (1 - beta) to the touched moments.
          const scalar_t old_m = m[o + c], old_v = v2[o + c];
          m[o + c] = (d - old_m) * w1 + old_m;
          v2[o + c] = (d * d - old_v) * w2 + old_v;
          p[o + c] += -ss * (m[o + c] / (std::sqrt(v2[o + c]) + eps_t));
        }
      }
    });
  });
  param.bump_version();
  exp_avg.bump_version();
  exp_avg_sq.bump_version();
}

}  // namespace nodeweave::optim
