// Indexing as nc functions and Tensor methods (index_select, gather, scatter, index_add,
// masked_fill, nonzero, embedding, their in-place forms), and Tensor.__getitem__ / __setitem__
// with NumPy/PyTorch semantics: Python index objects are parsed here into TensorIndex entries.
#include "core_framework/ops/index_util.h"
#include "py_convert.h"

namespace nodeweave::py {

namespace {

using namespace pybind11::literals;

// A Python list or NumPy array used as an index: ints become an int64 tensor, bools a mask.
Tensor sequence_index(pyb::handle obj) {
  pyb::module_ np = pyb::module_::import("numpy");
  pyb::array arr;
  try {
    arr = np.attr("asarray")(obj);
  } catch (pyb::error_already_set&) {
    throw TypeError(
        str_cat("a list used as an index must hold ints or bools of one rectangular shape, got ",
                std::string(pyb::repr(obj))));
  }
  const char kind = arr.dtype().kind();
  if (arr.size() == 0) return empty({0}, DType::Int64);  // x[[]]: NumPy's empty list is float64
  NW_CHECK(kind == 'b' || kind == 'i' || kind == 'u', TypeError,
           "lists and arrays used as indices must hold ints or bools, got dtype ",
           std::string(pyb::str(arr.dtype())));
  // Always a private, writable copy: the tensor must not alias (or be changed through) the caller's
  // array.
  return tensor_from_numpy(np.attr("array")(arr, kind == 'b' ? "bool" : "int64", "copy"_a = true));
}

TensorIndex parse_one(pyb::handle obj) {
  PyObject* p = obj.ptr();
  if (obj.is_none()) return TensorIndex::new_axis();
  if (p == Py_Ellipsis) return TensorIndex::ellipsis();
  if (pyb::isinstance<Tensor>(obj)) return TensorIndex::of(obj.cast<Tensor>());
  if (PyBool_Check(p)) return TensorIndex::of(scalar_tensor(p == Py_True, DType::Bool));
  if (PySlice_Check(p)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(p, &start, &stop, &step) < 0) throw pyb::error_already_set();
    return TensorIndex::slice(start, stop, step);
  }
  if (PyList_Check(p) || pyb::isinstance<pyb::array>(obj))
    return TensorIndex::of(sequence_index(obj));
  if (PyLong_Check(p) || PyIndex_Check(p)) {
    int overflow = 0;
    pyb::object as_int = pyb::reinterpret_steal<pyb::object>(PyNumber_Index(p));
    if (!as_int) throw pyb::error_already_set();
    long long v = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
    NW_CHECK(!overflow, IndexError, "index ", std::string(pyb::str(obj)), " is out of range");
    return TensorIndex::integer(v);
  }
  throw TypeError(
      str_cat("only integers, slices (:), ellipsis (...), None, int/bool tensors and lists "
              "of ints or bools are valid indices, got ",
              type_name(obj)));
}

std::vector<TensorIndex> parse_indices(pyb::handle obj) {
  std::vector<TensorIndex> out;
  if (PyTuple_Check(obj.ptr())) {
    for (pyb::handle item : pyb::reinterpret_borrow<pyb::tuple>(obj))
      out.push_back(parse_one(item));
  } else {
    out.push_back(parse_one(obj));
  }
  return out;
}

double number_arg(pyb::handle obj, const char* arg) {
  NW_CHECK(PyNumber_Check(obj.ptr()) && !pyb::isinstance<Tensor>(obj), TypeError, arg,
           ": expected a number or a 0-d Tensor, got ", type_name(obj));
  return pyb::cast<double>(pyb::float_(pyb::reinterpret_borrow<pyb::object>(obj)));
}

const char* const kIndexSelectDoc =
    R"doc(The slices of ``input`` along ``dim`` at the positions in the 1-D int32/int64 ``index``
(repeats allowed). The gradient flows back through ``index_add``.

>>> import nodeweave.core as nc
>>> nc.index_select(nc.tensor([[1, 2], [3, 4], [5, 6]]), 0, nc.tensor([2, 0, 2])).tolist()
[[5, 6], [1, 2], [5, 6]]
)doc";

const char* const kGatherDoc =
    R"doc(``out[i][j] = input[i][index[i][j]]`` for ``dim=1`` (likewise for any dim); ``index`` has
the rank of ``input`` and the result has the shape of ``index``.

>>> import nodeweave.core as nc
>>> nc.gather(nc.tensor([[1, 2, 3], [4, 5, 6]]), 1, nc.tensor([[2, 0], [1, 1]])).tolist()
[[3, 1], [5, 5]]
)doc";

const char* const kScatterDoc =
    R"doc(A copy of ``input`` with ``out[i][index[i][j]] = src[i][j]`` (``dim=1``); ``src`` may be a
tensor or a number (or pass ``value=``). With repeated targets the last write wins.

>>> import nodeweave.core as nc
>>> nc.scatter(nc.zeros(2, 3), 1, nc.tensor([[2], [0]]), nc.tensor([[7.0], [8.0]])).tolist()
[[0.0, 0.0, 7.0], [8.0, 0.0, 0.0]]
)doc";

const char* const kScatterAddDoc =
    R"doc(A copy of ``input`` with ``out[index[j]] += src[j]`` along ``dim`` (repeated targets add
up).

>>> import nodeweave.core as nc
>>> nc.scatter_add(nc.zeros(3), 0, nc.tensor([0, 2, 0]), nc.tensor([1.0, 2.0, 3.0])).tolist()
[4.0, 0.0, 2.0]
)doc";

const char* const kIndexAddDoc =
    R"doc(A copy of ``input`` with ``alpha * source[k]`` added to slice ``index[k]`` along ``dim``
(repeated indices add up).

>>> import nodeweave.core as nc
>>> nc.index_add(nc.zeros(3, 2), 0, nc.tensor([2, 2]), nc.ones(2, 2), alpha=0.5).tolist()
[[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
)doc";

const char* const kIndexCopyDoc =
    R"doc(A copy of ``input`` with slice ``index[k]`` along ``dim`` replaced by ``source[k]``.

>>> import nodeweave.core as nc
>>> nc.index_copy(nc.zeros(3), 0, nc.tensor([1]), nc.tensor([5.0])).tolist()
[0.0, 5.0, 0.0]
)doc";

const char* const kMaskedFillDoc =
    R"doc(``input`` with ``value`` where the bool ``mask`` (broadcast with ``input``) is true.
``value`` is a number or a 0-d tensor (which then receives a gradient).

>>> import nodeweave.core as nc
>>> nc.masked_fill(nc.tensor([1.0, 2.0, 3.0]), nc.tensor([True, False, True]), -1.0).tolist()
[-1.0, 2.0, -1.0]
)doc";

const char* const kMaskedSelectDoc =
    R"doc(The 1-D tensor of the elements of ``input`` where ``mask`` (broadcast with it) is true.

>>> import nodeweave.core as nc
>>> x = nc.tensor([[1, 2], [3, 4]])
>>> nc.masked_select(x, x > 1).tolist()
[2, 3, 4]
)doc";

const char* const kNonzeroDoc =
    R"doc(The int64 coordinates of the nonzero elements, shape ``(n, input.dim())``, in row-major
order; with ``as_tuple=True`` one 1-D tensor per dimension.

>>> import nodeweave.core as nc
>>> nc.nonzero(nc.tensor([[0, 3], [5, 0]])).tolist()
[[0, 1], [1, 0]]
)doc";

const char* const kEmbeddingDoc =
    R"doc(Rows of the 2-D ``weight`` looked up by int32/int64 ``indices`` of any shape; the result
has shape ``indices.shape + (weight.shape[1],)``.

>>> import nodeweave.core as nc
>>> w = nc.tensor([[0.0, 0.5], [1.0, 1.5], [2.0, 2.5]])
>>> nc.embedding(w, nc.tensor([[2], [0]])).tolist()
[[[2.0, 2.5]], [[0.0, 0.5]]]
)doc";

const char* const kSparseGradDoc =
    R"doc(Row-sparse gradient of ``embedding(weight, indices)``: sorted unique int64 row ids and the
summed gradient rows, shape ``(len(row_ids), embedding_dim)``.

>>> import nodeweave.core as nc
>>> from nodeweave import _C
>>> ids, rows = _C._embedding_sparse_grad(nc.ones(3, 2), nc.tensor([4, 1, 4]), 5)
>>> ids.tolist(), rows.tolist()
([1, 4], [[1.0, 1.0], [2.0, 2.0]])
)doc";

}  // namespace

void bind_indexing(pyb::module_& m) {
  auto cls = pyb::reinterpret_borrow<pyb::class_<Tensor>>(m.attr("Tensor"));

  // ---- out of place: module function and method share one lambda ----
  auto index_select_fn = [](const Tensor& x, int64_t dim, pyb::handle index) {
    return index_select(x, dim, tensor_arg(index, "index"));
  };
  m.def("index_select", index_select_fn, "input"_a, "dim"_a, "index"_a, kIndexSelectDoc);
  cls.def("index_select", index_select_fn, "dim"_a, "index"_a, kIndexSelectDoc);

  auto gather_fn = [](const Tensor& x, int64_t dim, pyb::handle index) {
    return gather(x, dim, tensor_arg(index, "index"));
  };
  m.def("gather", gather_fn, "input"_a, "dim"_a, "index"_a, kGatherDoc);
  cls.def("gather", gather_fn, "dim"_a, "index"_a, kGatherDoc);

  auto scatter_fn = [](const Tensor& x, int64_t dim, pyb::handle index, pyb::handle src,
                       pyb::handle value) {
    NW_CHECK(src.is_none() != value.is_none(), TypeError,
             "scatter: pass exactly one of src and value");
    pyb::handle s = src.is_none() ? value : src;
    const Tensor& idx = tensor_arg(index, "index");
    if (pyb::isinstance<Tensor>(s)) return scatter(x, dim, idx, s.cast<Tensor>());
    return scatter(x, dim, idx, number_arg(s, "src"));
  };
  m.def("scatter", scatter_fn, "input"_a, "dim"_a, "index"_a, "src"_a = pyb::none(), pyb::kw_only(),
        "value"_a = pyb::none(), kScatterDoc);
  cls.def("scatter", scatter_fn, "dim"_a, "index"_a, "src"_a = pyb::none(), pyb::kw_only(),
          "value"_a = pyb::none(), kScatterDoc);

  auto scatter_add_fn = [](const Tensor& x, int64_t dim, pyb::handle index, pyb::handle src) {
    return scatter_add(x, dim, tensor_arg(index, "index"), tensor_arg(src, "src"));
  };
  m.def("scatter_add", scatter_add_fn, "input"_a, "dim"_a, "index"_a, "src"_a, kScatterAddDoc);
  cls.def("scatter_add", scatter_add_fn, "dim"_a, "index"_a, "src"_a, kScatterAddDoc);

  auto index_add_fn = [](const Tensor& x, int64_t dim, pyb::handle index, pyb::handle src,
                         double alpha) {
    return index_add(x, dim, tensor_arg(index, "index"), tensor_arg(src, "source"), alpha);
  };
  m.def("index_add", index_add_fn, "input"_a, "dim"_a, "index"_a, "source"_a, pyb::kw_only(),
        "alpha"_a = 1.0, kIndexAddDoc);
  cls.def("index_add", index_add_fn, "dim"_a, "index"_a, "source"_a, pyb::kw_only(),
          "alpha"_a = 1.0, kIndexAddDoc);

  auto index_copy_fn = [](const Tensor& x, int64_t dim, pyb::handle index, pyb::handle src) {
    return index_copy(x, dim, tensor_arg(index, "index"), tensor_arg(src, "source"));
  };
  m.def("index_copy", index_copy_fn, "input"_a, "dim"_a, "index"_a, "source"_a, kIndexCopyDoc);
  cls.def("index_copy", index_copy_fn, "dim"_a, "index"_a, "source"_a, kIndexCopyDoc);

  auto masked_fill_fn = [](const Tensor& x, pyb::handle mask, pyb::handle value) {
    const Tensor& mk = tensor_arg(mask, "mask");
    if (pyb::isinstance<Tensor>(value)) return masked_fill(x, mk, value.cast<Tensor>());
    return masked_fill(x, mk, number_arg(value, "value"));
  };
  m.def("masked_fill", masked_fill_fn, "input"_a, "mask"_a, "value"_a, kMaskedFillDoc);
  cls.def("masked_fill", masked_fill_fn, "mask"_a, "value"_a, kMaskedFillDoc);

  auto masked_select_fn = [](const Tensor& x, pyb::handle mask) {
    return masked_select(x, tensor_arg(mask, "mask"));
  };
  m.def("masked_select", masked_select_fn, "input"_a, "mask"_a, kMaskedSelectDoc);
  cls.def("masked_select", masked_select_fn, "mask"_a, kMaskedSelectDoc);

  auto nonzero_fn = [](const Tensor& x, bool as_tuple) -> pyb::object {
    Tensor nz = nonzero(x);
    if (!as_tuple) return pyb::cast(nz);
    pyb::tuple cols(std::max<int64_t>(x.dim(), 1));
    for (int64_t j = 0; j < x.dim(); ++j) cols[j] = pyb::cast(contiguous(select(nz, 1, j)));
    if (x.dim() == 0)
      cols[0] = pyb::cast(zeros({nz.size(0)}, DType::Int64));  // as PyTorch: one column of zeros
    return std::move(cols);
  };
  m.def("nonzero", nonzero_fn, "input"_a, pyb::kw_only(), "as_tuple"_a = false, kNonzeroDoc);
  cls.def("nonzero", nonzero_fn, pyb::kw_only(), "as_tuple"_a = false, kNonzeroDoc);

  m.def(
      "embedding",
      [](pyb::handle weight, pyb::handle indices) {
        return embedding(tensor_arg(weight, "weight"), tensor_arg(indices, "indices"));
      },
      "weight"_a, "indices"_a, kEmbeddingDoc);
  m.def(
      "_embedding_sparse_grad",
      [](pyb::handle grad_out, pyb::handle indices, int64_t num_rows) {
        auto [ids, rows] = embedding_sparse_grad(tensor_arg(grad_out, "grad_out"),
                                                 tensor_arg(indices, "indices"), num_rows);
        return pyb::make_tuple(ids, rows);
      },
      "grad_out"_a, "indices"_a, "num_rows"_a, kSparseGradDoc);

  // ---- in place: return self, like PyTorch ----
  cls.def(
      "index_add_",
      [](Tensor& x, int64_t dim, pyb::handle index, pyb::handle src, double alpha) {
        return index_add_(x, dim, tensor_arg(index, "index"), tensor_arg(src, "source"), alpha);
      },
      "dim"_a, "index"_a, "source"_a, pyb::kw_only(), "alpha"_a = 1.0);
  cls.def(
      "index_copy_",
      [](Tensor& x, int64_t dim, pyb::handle index, pyb::handle src) {
        return index_copy_(x, dim, tensor_arg(index, "index"), tensor_arg(src, "source"));
      },
      "dim"_a, "index"_a, "source"_a);
  cls.def(
      "scatter_",
      [](Tensor& x, int64_t dim, pyb::handle index, pyb::handle src, pyb::handle value) {
        NW_CHECK(src.is_none() != value.is_none(), TypeError,
                 "scatter_: pass exactly one of src and value");
        pyb::handle s = src.is_none() ? value : src;
        const Tensor& idx = tensor_arg(index, "index");
        if (pyb::isinstance<Tensor>(s)) return scatter_(x, dim, idx, s.cast<Tensor>());
        return scatter_(x, dim, idx, number_arg(s, "src"));
      },
      "dim"_a, "index"_a, "src"_a = pyb::none(), pyb::kw_only(), "value"_a = pyb::none());
  cls.def(
      "scatter_add_",
      [](Tensor& x, int64_t dim, pyb::handle index, pyb::handle src) {
        return scatter_add_(x, dim, tensor_arg(index, "index"), tensor_arg(src, "src"));
      },
      "dim"_a, "index"_a, "src"_a);
  cls.def(
      "masked_fill_",
      [](Tensor& x, pyb::handle mask, pyb::handle value) {
        const Tensor& mk = tensor_arg(mask, "mask");
        if (pyb::isinstance<Tensor>(value)) return masked_fill_(x, mk, value.cast<Tensor>());
        return masked_fill_(x, mk, number_arg(value, "value"));
      },
      "mask"_a, "value"_a);

  // ---- x[...] and x[...] = value ----
  cls.def("__getitem__",
          [](const Tensor& x, pyb::handle index) { return tensor_index(x, parse_indices(index)); });
  cls.def("__setitem__", [](Tensor& x, pyb::handle index, pyb::handle value) {
    tensor_index_put_(x, parse_indices(index), tensor_or_scalar(value, "value"));
  });
}

}  // namespace nodeweave::py
