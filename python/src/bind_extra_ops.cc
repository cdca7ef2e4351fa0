// Reductions beyond sum/mean, softmax, join/split, sorting, one_hot/dropout and the losses, as
// module functions (the functional NN forms live here too; nn.functional re-exports them) and
// Tensor methods where PyTorch has them. (values, indices) results are namedtuples, as in PyTorch.
#include <cmath>

#include "core_framework/ops/broadcast.h"
#include "py_convert.h"

namespace nodeweave::py {

namespace {

Tensor wrapped(double v, DType d) { return scalar_tensor(v, d, Device{}, true); }

Reduction parse_reduction(const std::string& s, const char* op) {
  if (s == "mean") return Reduction::Mean;
  if (s == "sum") return Reduction::Sum;
  if (s == "none") return Reduction::None;
  throw ValueError(str_cat(op, ": reduction must be 'mean', 'sum' or 'none', got '", s, "'"));
}

Tensor optional_tensor(pyb::handle obj, const char* arg) {
  return obj.is_none() ? Tensor() : tensor_arg(obj, arg);
}

int64_t int_arg(pyb::handle obj, const char* op, const char* arg) {
  NW_CHECK(PyLong_Check(obj.ptr()) && !PyBool_Check(obj.ptr()), TypeError, op, ": ", arg,
           " must be an int, got ", type_name(obj));
  return obj.cast<int64_t>();
}

// A list or tuple of tensors; anything else names the offending entry.
TensorList tensor_list(pyb::handle obj, const char* op) {
  NW_CHECK(PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr()), TypeError, op,
           ": tensors must be a list or tuple of Tensors, got ", type_name(obj));
  TensorList out;
  size_t k = 0;
  for (pyb::handle item : obj) {
    NW_CHECK(pyb::isinstance<Tensor>(item), TypeError, op, ": tensors[", k,
             "] must be a Tensor, got ", type_name(item));
    out.push_back(item.cast<Tensor>());
    ++k;
  }
  return out;
}

pyb::tuple to_tuple(const TensorList& ts) {
  pyb::tuple t(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) t[i] = pyb::cast(ts[i]);
  return t;
}

Tensor with_dtype(const Tensor& x, pyb::handle dtype) {
  if (dtype.is_none()) return x;
  DType d = parse_dtype(dtype);
  return d == x.dtype() ? x : cast(x, d);
}

// var/std: correction (new style) or unbiased (old style), not both; a bool `dim` is the old
// positional `unbiased`.
int64_t parse_correction(pyb::handle& dim, pyb::handle unbiased, pyb::handle correction,
                         const char* op) {
  if (PyBool_Check(dim.ptr())) {
    NW_CHECK(unbiased.is_none(), TypeError, op, ": unbiased given twice");
    unbiased = dim;
    dim = pyb::none();
  }
  NW_CHECK(unbiased.is_none() || correction.is_none(), ValueError, op,
           ": pass either unbiased or correction, not both");
  if (!unbiased.is_none()) return unbiased.cast<bool>() ? 1 : 0;
  if (correction.is_none()) return 1;
  return int_arg(correction, op, "correction");
}

double parse_p(pyb::handle p) {
  if (pyb::isinstance<pyb::str>(p)) {
    std::string s = p.cast<std::string>();
    NW_CHECK(s == "fro", ValueError, "norm: p must be a number or 'fro', got '", s, "'");
    return 2.0;
  }
  NW_CHECK(PyNumber_Check(p.ptr()) && !pyb::isinstance<Tensor>(p), TypeError,
           "norm: p must be a number or 'fro', got ", type_name(p));
  return p.cast<double>();
}

Tensor any_impl(const Tensor& x, pyb::handle dim, bool keepdim, bool all) {
  Tensor b = x.dtype() == DType::Bool ? x : ne(x, wrapped(0.0, x.dtype()));
  if (all) b = logical_not(b);
  Tensor n = sum(b, dims_arg(dim), keepdim);
  return all ? eq(n, wrapped(0, DType::Int64)) : gt(n, wrapped(0, DType::Int64));
}

// Named (values, indices) pairs, like torch.return_types.*; one type per op, made once.
pyb::object make_pair_type(const char* name) {
  pyb::object nt = pyb::module_::import("collections").attr("namedtuple");
  pyb::object type = nt(name, pyb::make_tuple("values", "indices"));
  type.attr("__module__") = "nodeweave._C.return_types";
  return type;
}

void bind_reductions(pyb::module_& m, pyb::class_<Tensor>& cls, pyb::module_& rt) {
  pyb::object max_t = make_pair_type("max"), min_t = make_pair_type("min");
  rt.attr("max") = max_t;
  rt.attr("min") = min_t;
  auto minmax_fn = [](bool is_max, pyb::object type) {
    return [is_max, type](const Tensor& x, pyb::handle dim, bool keepdim) -> pyb::object {
      const char* op = is_max ? "max" : "min";
      if (dim.is_none()) return pyb::cast(is_max ? amax(x) : amin(x));
      if (pyb::isinstance<Tensor>(dim)) {
        const Tensor& o = dim.cast<const Tensor&>();
        return pyb::cast(is_max ? maximum(x, o) : minimum(x, o));
      }
      auto r = is_max ? max(x, int_arg(dim, op, "dim"), keepdim)
                      : min(x, int_arg(dim, op, "dim"), keepdim);
      return type(r.first, r.second);
    };
  };
  const char* max_doc = R"doc(max(input, dim=None, keepdim=False)

No dim: the largest element (0-d). With an int dim: (values, indices) along it. With a Tensor: maximum().

>>> import nodeweave.core as nc
>>> x = nc.tensor([[1.0, 5.0], [7.0, 2.0]])
>>> x.max().item(), x.max(1).indices.tolist()
(7.0, [1, 0])
)doc";
  const char* min_doc = R"doc(min(input, dim=None, keepdim=False)

No dim: the smallest element (0-d). With an int dim: (values, indices) along it. With a Tensor: minimum().

>>> import nodeweave.core as nc
>>> nc.tensor([[1.0, 5.0], [7.0, 2.0]]).min(0).values.tolist()
[1.0, 2.0]
)doc";
  m.def("max", minmax_fn(true, max_t), max_doc, pyb::arg("input"), pyb::arg("dim") = pyb::none(),
        pyb::arg("keepdim") = false);
  cls.def("max", minmax_fn(true, max_t), max_doc, pyb::arg("dim") = pyb::none(),
          pyb::arg("keepdim") = false);
  m.def("min", minmax_fn(false, min_t), min_doc, pyb::arg("input"), pyb::arg("dim") = pyb::none(),
        pyb::arg("keepdim") = false);
  cls.def("min", minmax_fn(false, min_t), min_doc, pyb::arg("dim") = pyb::none(),
          pyb::arg("keepdim") = false);

  auto amax_fn = [](const Tensor& x, pyb::handle dim, bool keepdim) {
    return amax(x, dims_arg(dim), keepdim);
  };
  auto amin_fn = [](const Tensor& x, pyb::handle dim, bool keepdim) {
    return amin(x, dims_arg(dim), keepdim);
  };
  const char* amax_doc = R"doc(amax(input, dim=None, keepdim=False)

Maximum over one or several dims (all by default); the gradient is shared evenly among ties.

>>> import nodeweave.core as nc
>>> nc.amax(nc.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=1).tolist()
[5.0, 7.0]
)doc";
  const char* amin_doc = R"doc(amin(input, dim=None, keepdim=False)

Minimum over one or several dims (all by default); the gradient is shared evenly among ties.

>>> import nodeweave.core as nc
>>> nc.amin(nc.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=(0, 1)).item()
1.0
)doc";
  m.def("amax", amax_fn, amax_doc, pyb::arg("input"), pyb::arg("dim") = pyb::none(),
        pyb::arg("keepdim") = false);
  cls.def("amax", amax_fn, amax_doc, pyb::arg("dim") = pyb::none(), pyb::arg("keepdim") = false);
  m.def("amin", amin_fn, amin_doc, pyb::arg("input"), pyb::arg("dim") = pyb::none(),
        pyb::arg("keepdim") = false);
  cls.def("amin", amin_fn, amin_doc, pyb::arg("dim") = pyb::none(), pyb::arg("keepdim") = false);

  auto argmax_fn = [](const Tensor& x, pyb::handle dim, bool keepdim) {
    return argmax(
        x, dim.is_none() ? std::nullopt : std::optional<int64_t>(int_arg(dim, "argmax", "dim")),
        keepdim);
  };
  auto argmin_fn = [](const Tensor& x, pyb::handle dim, bool keepdim) {
    return argmin(
        x, dim.is_none() ? std::nullopt : std::optional<int64_t>(int_arg(dim, "argmin", "dim")),
        keepdim);
  };
  const char* argmax_doc = R"doc(argmax(input, dim=None, keepdim=False)

Index of the (first) largest value along dim, or in the flattened tensor when dim is None.

>>> import nodeweave.core as nc
>>> nc.argmax(nc.tensor([[1.0, 5.0], [7.0, 2.0]])).item(), nc.tensor([3, 9, 9]).argmax().item()
(2, 1)
)doc";
  const char* argmin_doc = R"doc(argmin(input, dim=None, keepdim=False)

Index of the (first) smallest value along dim, or in the flattened tensor when dim is None.

>>> import nodeweave.core as nc
>>> nc.argmin(nc.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=0).tolist()
[0, 1]
)doc";
  m.def("argmax", argmax_fn, argmax_doc, pyb::arg("input"), pyb::arg("dim") = pyb::none(),
        pyb::arg("keepdim") = false);
  cls.def("argmax", argmax_fn, argmax_doc, pyb::arg("dim") = pyb::none(),
          pyb::arg("keepdim") = false);
  m.def("argmin", argmin_fn, argmin_doc, pyb::arg("input"), pyb::arg("dim") = pyb::none(),
        pyb::arg("keepdim") = false);
  cls.def("argmin", argmin_fn, argmin_doc, pyb::arg("dim") = pyb::none(),
          pyb::arg("keepdim") = false);

  auto prod_fn = [](const Tensor& x, pyb::handle dim, bool keepdim, pyb::handle dtype) {
    std::optional<int64_t> d;
    if (!dim.is_none()) d = int_arg(dim, "prod", "dim");
    return prod(with_dtype(x, dtype), d, keepdim);
  };
  const char* prod_doc = R"doc(prod(input, dim=None, keepdim=False, *, dtype=None)

Product of all elements, or along one dim. Integer and bool inputs give int64.

>>> import nodeweave.core as nc
>>> nc.prod(nc.tensor([[1.0, 2.0], [3.0, 4.0]]), 1).tolist()
[2.0, 12.0]
)doc";
  m.def("prod", prod_fn, prod_doc, pyb::arg("input"), pyb::arg("dim") = pyb::none(),
        pyb::arg("keepdim") = false, pyb::kw_only(), pyb::arg("dtype") = pyb::none());
  cls.def("prod", prod_fn, prod_doc, pyb::arg("dim") = pyb::none(), pyb::arg("keepdim") = false,
          pyb::kw_only(), pyb::arg("dtype") = pyb::none());

  auto var_fn = [](bool is_std) {
    return [is_std](const Tensor& x, pyb::handle dim, pyb::handle unbiased, bool keepdim,
                    pyb::handle correction) {
      const char* op = is_std ? "std" : "var";
      int64_t c = parse_correction(dim, unbiased, correction, op);
      IntList dims = dims_arg(dim);
      return is_std ? stddev(x, dims, c, keepdim) : var(x, dims, c, keepdim);
    };
  };
  const char* var_doc = R"doc(var(input, dim=None, unbiased=None, keepdim=False, *, correction=1)

Variance over dims (all by default), dividing by N - correction (unbiased=False means correction=0).

>>> import nodeweave.core as nc
>>> nc.var(nc.tensor([1.0, 2.0, 3.0, 4.0])).item()
1.6666666269302368
)doc";
  const char* std_doc = R"doc(std(input, dim=None, unbiased=None, keepdim=False, *, correction=1)

Standard deviation: the square root of var() with the same arguments.

>>> import nodeweave.core as nc
>>> nc.std(nc.tensor([[1.0, 3.0]], dtype=nc.float64), dim=1, correction=0).tolist()
[1.0]
)doc";
  for (bool is_std : {false, true}) {
    const char* name = is_std ? "std" : "var";
    const char* doc = is_std ? std_doc : var_doc;
    m.def(name, var_fn(is_std), doc, pyb::arg("input"), pyb::arg("dim") = pyb::none(),
          pyb::arg("unbiased") = pyb::none(), pyb::arg("keepdim") = false, pyb::kw_only(),
          pyb::arg("correction") = pyb::none());
    cls.def(name, var_fn(is_std), doc, pyb::arg("dim") = pyb::none(),
            pyb::arg("unbiased") = pyb::none(), pyb::arg("keepdim") = false, pyb::kw_only(),
            pyb::arg("correction") = pyb::none());
  }

  auto lse_fn = [](const Tensor& x, pyb::handle dim, bool keepdim) {
    return logsumexp(x, dims_arg(dim), keepdim);
  };
  const char* lse_doc = R"doc(logsumexp(input, dim, keepdim=False)

log(sum(exp(input))) over dim(s), computed without overflow.

>>> import nodeweave.core as nc
>>> round(nc.logsumexp(nc.tensor([1000.0, 1000.0], dtype=nc.float64), 0).item(), 4)
1000.6931
)doc";
  m.def("logsumexp", lse_fn, lse_doc, pyb::arg("input"), pyb::arg("dim"),
        pyb::arg("keepdim") = false);
  cls.def("logsumexp", lse_fn, lse_doc, pyb::arg("dim"), pyb::arg("keepdim") = false);

  auto norm_fn = [](const Tensor& x, pyb::handle p, pyb::handle dim, bool keepdim,
                    pyb::handle dtype) {
    return norm(with_dtype(x, dtype), parse_p(p), dims_arg(dim), keepdim);
  };
  const char* norm_doc = R"doc(norm(input, p='fro', dim=None, keepdim=False, dtype=None)

Vector p-norm over dims (all by default): p = 2 ('fro'), 1, inf, -inf, 0 or any other number.

>>> import nodeweave.core as nc
>>> nc.norm(nc.tensor([[3.0, 4.0]]), dim=1).tolist(), nc.tensor([3.0, -4.0]).norm(float('inf')).item()
([5.0], 4.0)
)doc";
  m.def("norm", norm_fn, norm_doc, pyb::arg("input"), pyb::arg("p") = "fro",
        pyb::arg("dim") = pyb::none(), pyb::arg("keepdim") = false,
        pyb::arg("dtype") = pyb::none());
  cls.def("norm", norm_fn, norm_doc, pyb::arg("p") = "fro", pyb::arg("dim") = pyb::none(),
          pyb::arg("keepdim") = false, pyb::arg("dtype") = pyb::none());

  auto any_fn = [](const Tensor& x, pyb::handle dim, bool keepdim) {
    return any_impl(x, dim, keepdim, false);
  };
  auto all_fn = [](const Tensor& x, pyb::handle dim, bool keepdim) {
    return any_impl(x, dim, keepdim, true);
  };
  const char* any_doc = R"doc(any(input, dim=None, keepdim=False)

Whether any element (non-zero, for non-bool inputs) is true, over dims (all by default).

>>> import nodeweave.core as nc
>>> nc.tensor([[True, False], [False, False]]).any(1).tolist()
[True, False]
)doc";
  const char* all_doc = R"doc(all(input, dim=None, keepdim=False)

Whether every element (non-zero, for non-bool inputs) is true, over dims (all by default).

>>> import nodeweave.core as nc
>>> nc.tensor([[True, True], [True, False]]).all(1).tolist(), nc.tensor([1, 2]).all().item()
([True, False], True)
)doc";
  m.def("any", any_fn, any_doc, pyb::arg("input"), pyb::arg("dim") = pyb::none(),
        pyb::arg("keepdim") = false);
  cls.def("any", any_fn, any_doc, pyb::arg("dim") = pyb::none(), pyb::arg("keepdim") = false);
  m.def("all", all_fn, all_doc, pyb::arg("input"), pyb::arg("dim") = pyb::none(),
        pyb::arg("keepdim") = false);
  cls.def("all", all_fn, all_doc, pyb::arg("dim") = pyb::none(), pyb::arg("keepdim") = false);
}

void bind_softmax(pyb::module_& m, pyb::class_<Tensor>& cls) {
  auto sm = [](const Tensor& x, int64_t dim, pyb::handle dtype) {
    return softmax(with_dtype(x, dtype), dim);
  };
  auto lsm = [](const Tensor& x, int64_t dim, pyb::handle dtype) {
    return log_softmax(with_dtype(x, dtype), dim);
  };
  const char* sm_doc = R"doc(softmax(input, dim, dtype=None)

exp(x) / sum(exp(x)) along dim, computed stably; dtype casts the input first.

>>> import nodeweave.core as nc
>>> nc.softmax(nc.tensor([0.0, 0.0]), 0).tolist()
[0.5, 0.5]
)doc";
  const char* lsm_doc = R"doc(log_softmax(input, dim, dtype=None)

log(softmax(x)) along dim, computed stably; dtype casts the input first.

>>> import nodeweave.core as nc
>>> round(nc.log_softmax(nc.tensor([0.0, 0.0]), 0)[0].item(), 4)
-0.6931
)doc";
  m.def("softmax", sm, sm_doc, pyb::arg("input"), pyb::arg("dim"), pyb::arg("dtype") = pyb::none());
  cls.def("softmax", sm, sm_doc, pyb::arg("dim"), pyb::arg("dtype") = pyb::none());
  m.def("log_softmax", lsm, lsm_doc, pyb::arg("input"), pyb::arg("dim"),
        pyb::arg("dtype") = pyb::none());
  cls.def("log_softmax", lsm, lsm_doc, pyb::arg("dim"), pyb::arg("dtype") = pyb::none());
}

void bind_join(pyb::module_& m, pyb::class_<Tensor>& cls) {
  auto cat_fn = [](pyb::handle tensors, int64_t dim) {
    return cat(tensor_list(tensors, "cat"), dim);
  };
  const char* cat_doc = R"doc(cat(tensors, dim=0)

Joins tensors along an existing dim; dtypes are promoted as in PyTorch.

>>> import nodeweave.core as nc
>>> nc.cat([nc.tensor([[1, 2]]), nc.tensor([[3, 4]])], dim=1).tolist()
[[1, 2, 3, 4]]
)doc";
  for (const char* name : {"cat", "concat", "concatenate"})
    m.def(name, cat_fn, cat_doc, pyb::arg("tensors"), pyb::arg("dim") = 0);
  m.def(
      "stack",
      [](pyb::handle tensors, int64_t dim) { return stack(tensor_list(tensors, "stack"), dim); },
      R"doc(stack(tensors, dim=0)

Joins equally shaped tensors along a new dim.

>>> import nodeweave.core as nc
>>> nc.stack([nc.tensor([1, 2]), nc.tensor([3, 4])], dim=1).tolist()
[[1, 3], [2, 4]]
)doc",
      pyb::arg("tensors"), pyb::arg("dim") = 0);

  auto split_fn = [](const Tensor& x, pyb::handle size_or_sections, int64_t dim) {
    if (PyLong_Check(size_or_sections.ptr()))
      return to_tuple(split(x, size_or_sections.cast<int64_t>(), dim));
    return to_tuple(split_sizes(x, dims_arg(size_or_sections, "split_size_or_sections"), dim));
  };
  const char* split_doc = R"doc(split(tensor, split_size_or_sections, dim=0)

Views of equal chunks of split_size (the last may be smaller), or of the given section sizes.

>>> import nodeweave.core as nc
>>> [t.tolist() for t in nc.arange(5).split([2, 3])]
[[0, 1], [2, 3, 4]]
)doc";
  m.def("split", split_fn, split_doc, pyb::arg("tensor"), pyb::arg("split_size_or_sections"),
        pyb::arg("dim") = 0);
  cls.def("split", split_fn, split_doc, pyb::arg("split_size"), pyb::arg("dim") = 0);
  auto chunk_fn = [](const Tensor& x, int64_t chunks, int64_t dim) {
    return to_tuple(chunk(x, chunks, dim));
  };
  const char* chunk_doc = R"doc(chunk(input, chunks, dim=0)

Splits into at most `chunks` views of ceil(size / chunks) elements.

>>> import nodeweave.core as nc
>>> [t.tolist() for t in nc.arange(5).chunk(2)]
[[0, 1, 2], [3, 4]]
)doc";
  m.def("chunk", chunk_fn, chunk_doc, pyb::arg("input"), pyb::arg("chunks"), pyb::arg("dim") = 0);
  cls.def("chunk", chunk_fn, chunk_doc, pyb::arg("chunks"), pyb::arg("dim") = 0);
}

void bind_sorting(pyb::module_& m, pyb::class_<Tensor>& cls, pyb::module_& rt) {
  pyb::object sort_t = make_pair_type("sort"), topk_t = make_pair_type("topk");
  rt.attr("sort") = sort_t;
  rt.attr("topk") = topk_t;
  auto sort_fn = [sort_t](const Tensor& x, int64_t dim, bool descending, bool /*stable: always*/) {
    auto r = sort(x, dim, descending);
    return sort_t(r.first, r.second);
  };
  const char* sort_doc = R"doc(sort(input, dim=-1, descending=False, stable=False)

(values, indices) sorted along dim. The sort is always stable; NaN sorts as the largest value.

>>> import nodeweave.core as nc
>>> nc.sort(nc.tensor([3.0, 1.0, 2.0])).indices.tolist()
[1, 2, 0]
)doc";
  m.def("sort", sort_fn, sort_doc, pyb::arg("input"), pyb::arg("dim") = -1,
        pyb::arg("descending") = false, pyb::kw_only(), pyb::arg("stable") = false);
  cls.def("sort", sort_fn, sort_doc, pyb::arg("dim") = -1, pyb::arg("descending") = false,
          pyb::kw_only(), pyb::arg("stable") = false);
  auto argsort_fn = [](const Tensor& x, int64_t dim, bool descending, bool) {
    return argsort(x, dim, descending);
  };
  const char* argsort_doc = R"doc(argsort(input, dim=-1, descending=False, stable=False)

The indices that sort input along dim (stable).

>>> import nodeweave.core as nc
>>> nc.tensor([[3, 1, 2]]).argsort(dim=1, descending=True).tolist()
[[0, 2, 1]]
)doc";
  m.def("argsort", argsort_fn, argsort_doc, pyb::arg("input"), pyb::arg("dim") = -1,
        pyb::arg("descending") = false, pyb::kw_only(), pyb::arg("stable") = false);
  cls.def("argsort", argsort_fn, argsort_doc, pyb::arg("dim") = -1, pyb::arg("descending") = false,
          pyb::kw_only(), pyb::arg("stable") = false);
  auto topk_fn = [topk_t](const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
    auto r = topk(x, k, dim, largest, sorted);
    return topk_t(r.first, r.second);
  };
  const char* topk_doc = R"doc(topk(input, k, dim=-1, largest=True, sorted=True)

(values, indices) of the k largest (or smallest) entries along dim, in sorted order.

>>> import nodeweave.core as nc
>>> nc.topk(nc.tensor([1.0, 9.0, 4.0, 7.0]), 2).values.tolist()
[9.0, 7.0]
)doc";
  m.def("topk", topk_fn, topk_doc, pyb::arg("input"), pyb::arg("k"), pyb::arg("dim") = -1,
        pyb::arg("largest") = true, pyb::arg("sorted") = true);
  cls.def("topk", topk_fn, topk_doc, pyb::arg("k"), pyb::arg("dim") = -1,
          pyb::arg("largest") = true, pyb::arg("sorted") = true);
}

void bind_nn_functional(pyb::module_& m) {
  m.def("one_hot", &one_hot, R"doc(one_hot(tensor, num_classes=-1)

int64 indicators of shape (*tensor.shape, num_classes); -1 uses max(tensor) + 1 classes.

>>> import nodeweave.core as nc
>>> nc.one_hot(nc.tensor([0, 2]), 3).tolist()
[[1, 0, 0], [0, 0, 1]]
)doc",
        pyb::arg("tensor"), pyb::arg("num_classes") = -1);
  m.def("dropout", &dropout, R"doc(dropout(input, p=0.5, training=True)

Zeroes each element with probability p and scales the rest by 1 / (1 - p); identity when not training.

>>> import nodeweave.core as nc
>>> nc.dropout(nc.ones(4), 0.5, training=False).tolist()
[1.0, 1.0, 1.0, 1.0]
)doc",
        pyb::arg("input"), pyb::arg("p") = 0.5, pyb::arg("training") = true);

  m.def(
      "cross_entropy",
      [](const Tensor& x, const Tensor& target, pyb::handle weight, int64_t ignore_index,
         const std::string& reduction, double label_smoothing) {
        return cross_entropy(x, target, parse_reduction(reduction, "cross_entropy"),
                             optional_tensor(weight, "weight"), ignore_index, label_smoothing);
      },
      R"doc(cross_entropy(input, target, weight=None, *, ignore_index=-100, reduction='mean', label_smoothing=0.0)

Cross entropy of logits (N, C, ...) against int64 class ids (N, ...) or class probabilities.

>>> import nodeweave.core as nc
>>> round(nc.cross_entropy(nc.tensor([[0.0, 0.0]]), nc.tensor([1])).item(), 4)
0.6931
)doc",
      pyb::arg("input"), pyb::arg("target"), pyb::arg("weight") = pyb::none(), pyb::kw_only(),
      pyb::arg("ignore_index") = -100, pyb::arg("reduction") = "mean",
      pyb::arg("label_smoothing") = 0.0);
  m.def(
      "nll_loss",
      [](const Tensor& x, const Tensor& target, pyb::handle weight, int64_t ignore_index,
         const std::string& reduction) {
        return nll_loss(x, target, parse_reduction(reduction, "nll_loss"),
                        optional_tensor(weight, "weight"), ignore_index);
      },
      R"doc(nll_loss(input, target, weight=None, *, ignore_index=-100, reduction='mean')

Negative log likelihood of log-probabilities (N, C, ...) at int64 class ids (N, ...).

>>> import nodeweave.core as nc
>>> nc.nll_loss(nc.tensor([[-1.0, -2.0], [-3.0, -4.0]]), nc.tensor([1, 0])).item()
2.5
)doc",
      pyb::arg("input"), pyb::arg("target"), pyb::arg("weight") = pyb::none(), pyb::kw_only(),
      pyb::arg("ignore_index") = -100, pyb::arg("reduction") = "mean");
  m.def(
      "binary_cross_entropy_with_logits",
      [](const Tensor& x, const Tensor& target, pyb::handle weight, const std::string& reduction,
         pyb::handle pos_weight) {
        Reduction r = parse_reduction(reduction, "binary_cross_entropy_with_logits");
        Tensor pw = optional_tensor(pos_weight, "pos_weight");
        if (weight.is_none()) return binary_cross_entropy_with_logits(x, target, r, pw);
        const Tensor& w = tensor_arg(weight, "weight");
        broadcast_shapes(w.shape(), x.shape(), "binary_cross_entropy_with_logits (weight)");
        return reduce_loss(mul(binary_cross_entropy_with_logits(x, target, Reduction::None, pw), w),
                           r);
      },
      R"doc(binary_cross_entropy_with_logits(input, target, weight=None, *, reduction='mean', pos_weight=None)

Sigmoid + binary cross entropy in one numerically stable step; pos_weight scales positive terms.

>>> import nodeweave.core as nc
>>> round(nc.binary_cross_entropy_with_logits(nc.tensor([0.0]), nc.tensor([1.0])).item(), 4)
0.6931
)doc",
      pyb::arg("input"), pyb::arg("target"), pyb::arg("weight") = pyb::none(), pyb::kw_only(),
      pyb::arg("reduction") = "mean", pyb::arg("pos_weight") = pyb::none());
  m.def(
      "mse_loss",
      [](const Tensor& a, const Tensor& b, const std::string& reduction) {
        return mse_loss(a, b, parse_reduction(reduction, "mse_loss"));
      },
      R"doc(mse_loss(input, target, *, reduction='mean')

Mean squared error.

>>> import nodeweave.core as nc
>>> nc.mse_loss(nc.tensor([1.0, 3.0]), nc.tensor([0.0, 0.0])).item()
5.0
)doc",
      pyb::arg("input"), pyb::arg("target"), pyb::kw_only(), pyb::arg("reduction") = "mean");
  m.def(
      "l1_loss",
      [](const Tensor& a, const Tensor& b, const std::string& reduction) {
        return l1_loss(a, b, parse_reduction(reduction, "l1_loss"));
      },
      R"doc(l1_loss(input, target, *, reduction='mean')

Mean absolute error.

>>> import nodeweave.core as nc
>>> nc.l1_loss(nc.tensor([1.0, -3.0]), nc.tensor([0.0, 0.0]), reduction='sum').item()
4.0
)doc",
      pyb::arg("input"), pyb::arg("target"), pyb::kw_only(), pyb::arg("reduction") = "mean");
  m.def(
      "margin_ranking_loss",
      [](const Tensor& a, const Tensor& b, const Tensor& y, double margin,
         const std::string& reduction) {
        return margin_ranking_loss(a, b, y, margin,
                                   parse_reduction(reduction, "margin_ranking_loss"));
      },
      R"doc(margin_ranking_loss(input1, input2, target, margin=0.0, *, reduction='mean')

max(0, -target * (input1 - input2) + margin), for target in {1, -1}.

>>> import nodeweave.core as nc
>>> nc.margin_ranking_loss(nc.tensor([1.0]), nc.tensor([2.0]), nc.tensor([1.0]), margin=0.5).item()
1.5
)doc",
      pyb::arg("input1"), pyb::arg("input2"), pyb::arg("target"), pyb::arg("margin") = 0.0,
      pyb::kw_only(), pyb::arg("reduction") = "mean");
}

}  // namespace

void bind_extra_ops(pyb::module_& m) {
  auto cls = pyb::reinterpret_borrow<pyb::class_<Tensor>>(m.attr("Tensor"));
  pyb::module_ rt =
      m.def_submodule("return_types", "Named (values, indices) results of max, min, sort, topk");
  bind_reductions(m, cls, rt);
  bind_softmax(m, cls);
  bind_join(m, cls);
  bind_sorting(m, cls, rt);
  bind_nn_functional(m);
}

}  // namespace nodeweave::py
