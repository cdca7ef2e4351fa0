// NumPy/PyTorch tensor indexing (x[...] and x[...] = v) built on the view and index ops, the
// row-sparse embedding gradient, and the strided-offset helper the index kernels share.
#include "core_framework/ops/index_util.h"

#include <algorithm>
#include <numeric>

#include "core_framework/autograd/grad_mode.h"
#include "core_framework/ops/convert.h"
#include "core_framework/ops/elementwise_loop.h"
#include "core_framework/ops/op_helpers.h"
#include "core_framework/runtime/parallel.h"

namespace nodeweave {

DimGroup group_dims(const Shape& sizes, const Shape& strides, int64_t begin, int64_t end) {
  DimGroup g;
  std::vector<int64_t> kept;  // size-1 dims never move the offset
  for (int64_t d = begin; d < end; ++d) {
    g.size *= sizes[d];
    if (sizes[d] != 1) kept.push_back(d);
  }
  if (g.size == 0 || kept.empty()) return g;
  bool merges = true;
  for (size_t j = 0; j + 1 < kept.size(); ++j) {
    merges &= strides[kept[j]] == strides[kept[j + 1]] * sizes[kept[j + 1]];
  }
  if (merges) {
    g.stride = strides[kept.back()];
    return g;
  }
  g.table.resize(g.size);
  std::vector<int64_t> pos(kept.size(), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < g.size; ++i) {
    g.table[i] = off;
    for (int64_t j = static_cast<int64_t>(kept.size()) - 1; j >= 0; --j) {
      const int64_t d = kept[j];
      off += strides[d];
      if (++pos[j] < sizes[d]) break;
      off -= strides[d] * sizes[d];
      pos[j] = 0;
    }
  }
  return g;
}

namespace {

using Kind = TensorIndex::Kind;

// An index tensor applied to one dim of the basic-indexed view: int64 positions in [0, size).
struct Advanced {
  int64_t dim;
  Tensor index;
};
struct Indexed {
  Tensor view;                // x after ints, slices, None and ...
  std::vector<Advanced> adv;  // in increasing dim order
};

// Int tensor positions for a dim of size n: negative values count from the end (NumPy), anything
// outside [-n, n) raises before it is used.
Tensor normalize_positions(const Tensor& t, int64_t n, int64_t dim) {
  Tensor r = empty(t.shape(), DType::Int64, t.device());
  NW_DISPATCH_INDEX(t.dtype(), "index", {
    elementwise_kernel<int64_t, scalar_t>(r, {t},
                                          [](scalar_t v) { return static_cast<int64_t>(v); });
  });
  int64_t* p = r.data<int64_t>();
  for (int64_t i = 0; i < r.numel(); ++i) {
    const int64_t v = p[i];
    NW_CHECK(v >= -n && v < n, IndexError, "index ", v, " is out of bounds for dimension ", dim,
             " with size ", n);
    if (v < 0) p[i] = v + n;
  }
  return r;
}

// Applies ints, slices, None and ... as views (autograd sees select/slice/unsqueeze); collects the
// tensor indices for the advanced step. Bool masks become one int index per mask dim (nonzero).
Indexed apply_basic(const Tensor& x, const std::vector<TensorIndex>& indices) {
  int64_t consumed = 0, ellipses = 0;
  for (const TensorIndex& e : indices) {
    if (e.kind == Kind::Int || e.kind == Kind::Slice) ++consumed;
    if (e.kind == Kind::Ellipsis) ++ellipses;
    if (e.kind != Kind::Tensor) continue;
    const DType dt = e.tensor.dtype();
    NW_CHECK(dt == DType::Bool || dt == DType::Int32 || dt == DType::Int64, TypeError,
             "tensors used as indices must be int32, int64 or bool, got ", dtype_name(dt));
    consumed += dt == DType::Bool ? e.tensor.dim() : 1;
  }
  NW_CHECK(ellipses <= 1, IndexError, "an index can only have a single ellipsis ('...')");
  NW_CHECK(consumed <= x.dim(), IndexError, "too many indices for tensor of dimension ", x.dim(),
           " (got ", consumed, ")");
  Indexed r{x, {}};
  int64_t d = 0;    // dim of r.view the next entry applies to
  int64_t src = 0;  // the matching dim of x, for messages
  for (size_t k = 0; k < indices.size(); ++k) {
    const TensorIndex& e = indices[k];
    switch (e.kind) {
      case Kind::Ellipsis:
        d += x.dim() - consumed;
        src += x.dim() - consumed;
        break;
      case Kind::NewAxis:
        r.view = unsqueeze(r.view, d++);
        break;
      case Kind::Int: {
        const int64_t n = r.view.size(d);
        NW_CHECK(e.value >= -n && e.value < n, IndexError, "index ", e.value,
                 " is out of bounds for dimension ", src, " with size ", n);
        r.view = select(r.view, d, e.value);
        ++src;
        break;
      }
      case Kind::Slice: {
        NW_CHECK(e.step > 0, ValueError, "step must be greater than zero, got ", e.step,
                 " (negative slice steps are not supported, as in PyTorch)");
        const int64_t n = r.view.size(d);
        if (!(e.start == 0 && e.stop >= n && e.step == 1))
          r.view = slice(r.view, d, e.start, e.stop, e.step);
        ++d;
        ++src;
        break;
      }
      case Kind::Tensor: {
        const Tensor& t = e.tensor;
        if (t.dtype() != DType::Bool) {
          r.adv.push_back({d, normalize_positions(t, r.view.size(d), src)});
          ++d;
          ++src;
          break;
        }
        if (t.dim() == 0) {  // x[True] adds a dim of size 1, x[False] one of size 0 (NumPy)
          r.view = unsqueeze(r.view, d);
          r.adv.push_back({d++, zeros({t.item() != 0 ? 1 : 0}, DType::Int64)});
          break;
        }
        Shape covered(r.view.shape().begin() + d, r.view.shape().begin() + d + t.dim());
        NW_CHECK(covered == t.shape(), IndexError, "the shape of the mask ", shape_str(t.shape()),
                 " at index ", k, " does not match the shape of the indexed dims ",
                 shape_str(covered), " (dims ", src, "..", src + t.dim() - 1,
                 " of a tensor of shape ", shape_str(x.shape()), ")");
        Tensor nz = nonzero(t);
        for (int64_t j = 0; j < t.dim(); ++j)
          r.adv.push_back({d + j, contiguous(select(nz, 1, j))});
        d += t.dim();
        src += t.dim();
        break;
      }
    }
  }
  return r;
}

// The shape all index tensors broadcast to; IndexError listing them when they don't.
Shape index_broadcast_shape(const std::vector<Advanced>& adv) {
  Shape b;
  bool ok = true;
  for (const Advanced& a : adv) {
    const Shape& s = a.index.shape();
    Shape out(std::max(b.size(), s.size()), 1);
    for (size_t i = 0; i < out.size(); ++i) {
      const int64_t x = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
      const int64_t y = i < out.size() - s.size() ? 1 : s[i - (out.size() - s.size())];
      ok &= x == y || x == 1 || y == 1;
      out[i] = x == 1 ? y : x;
    }
    b = out;
  }
  if (!ok) {
    std::string shapes;
    for (const Advanced& a : adv)
      shapes += (shapes.empty() ? "" : ", ") + shape_str(a.index.shape());
    throw IndexError(
        "shape mismatch: indexing tensors could not be broadcast together with shapes " + shapes);
  }
  return b;
}

bool adjacent(const std::vector<Advanced>& adv) {
  for (size_t j = 0; j < adv.size(); ++j)
    if (adv[j].dim != adv[0].dim + static_cast<int64_t>(j)) return false;
  return true;
}

// sum_j index_j * weight_j over the broadcast shape b (int64).
Tensor weighted_index_sum(const std::vector<Advanced>& adv, const Shape& b, const IntList& weight) {
  Tensor acc = zeros(b, DType::Int64);
  for (size_t j = 0; j < adv.size(); ++j) {
    const int64_t w = weight[j];
    elementwise_kernel<int64_t, int64_t, int64_t>(acc, {acc, adv[j].index},
                                                  [w](int64_t s, int64_t i) { return s + i * w; });
  }
  return acc;
}

Shape concat(Shape a, const Shape& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// NumPy's advanced indexing on the basic-indexed view: the broadcast index dims replace the
// indexed dims in place when those are adjacent, else they go first.
Tensor gather_advanced(const Tensor& v, const std::vector<Advanced>& adv) {
  const Shape b = index_broadcast_shape(adv);
  if (adv.size() == 1) {
    const int64_t p = adv[0].dim;
    Tensor r = index_select(v, p, reshape(adv[0].index, {-1}));
    Shape s(v.shape().begin(), v.shape().begin() + p);
    s = concat(s, b);
    s.insert(s.end(), v.shape().begin() + p + 1, v.shape().end());
    return reshape(r, s);
  }
  // Several index tensors: bring their dims to the front, merge them into one, and select along it
  // with each broadcast position's row-major linear index.
  IntList perm, weight(adv.size());
  Shape rest;
  int64_t merged = 1;
  for (int64_t j = static_cast<int64_t>(adv.size()) - 1; j >= 0; --j) {
    weight[j] = merged;
    merged *= v.size(adv[j].dim);
  }
  for (const Advanced& a : adv) perm.push_back(a.dim);
  for (int64_t d = 0; d < v.dim(); ++d) {
    if (std::none_of(adv.begin(), adv.end(), [d](const Advanced& a) { return a.dim == d; })) {
      perm.push_back(d);
      rest.push_back(v.size(d));
    }
  }
  Tensor flat = reshape(permute(v, perm), concat({merged}, rest));
  Tensor lin = weighted_index_sum(adv, b, weight);
  Tensor r = reshape(index_select(flat, 0, reshape(lin, {-1})), concat(b, rest));
  const int64_t p = adv[0].dim;
  if (!adjacent(adv) || p == 0) return r;
  const int64_t nb = static_cast<int64_t>(b.size());
  IntList back;
  for (int64_t i = 0; i < p; ++i) back.push_back(nb + i);
  for (int64_t i = 0; i < nb; ++i) back.push_back(i);
  for (int64_t i = nb + p; i < r.dim(); ++i) back.push_back(i);
  return permute(r, back);
}

// The elements x[indices] selects, as offsets: the selection's shape is [outer][b][inner] (b the
// broadcast index dims; outer empty unless the index dims stay in place) and element (o, j, i)
// sits at base + outer.at(o) + adv_off[j] + inner.at(i). With `logical`, offsets are row-major
// positions in x as if it were contiguous; else storage offsets. Only the geometry of the alias
// below is used; its data is never read.
struct Selection {
  Shape shape;
  int64_t n_outer = 0, n_b = 0;  // leading dims of `shape` in outer, then in b
  int64_t base = 0;
  DimGroup outer, inner;
  Tensor adv_off;  // int64, shape b
};

Selection plan_selection(const Tensor& x, const std::vector<TensorIndex>& indices, bool logical) {
  NoGradGuard guard;
  Tensor geo = logical ? make_view(x, x.shape(), contiguous_strides(x.shape()), 0)
                       : make_view(x, x.shape(), x.strides(), x.offset());
  Indexed r = apply_basic(geo, indices);
  const Tensor& v = r.view;
  Selection sel;
  Shape b, outer_sz, outer_st, inner_sz, inner_st;
  sel.adv_off = zeros({}, DType::Int64);
  if (!r.adv.empty()) {
    b = index_broadcast_shape(r.adv);
    IntList weight;
    for (const Advanced& a : r.adv) weight.push_back(v.stride(a.dim));
    sel.adv_off = weighted_index_sum(r.adv, b, weight);
  }
  const bool keep_place = !r.adv.empty() && adjacent(r.adv);
  for (int64_t d = 0; d < v.dim(); ++d) {
    if (std::any_of(r.adv.begin(), r.adv.end(), [d](const Advanced& a) { return a.dim == d; }))
      continue;
    const bool outer = keep_place && d < r.adv[0].dim;
    (outer ? outer_sz : inner_sz).push_back(v.size(d));
    (outer ? outer_st : inner_st).push_back(v.stride(d));
  }
  sel.outer = group_dims(outer_sz, outer_st, 0, static_cast<int64_t>(outer_sz.size()));
  sel.inner = group_dims(inner_sz, inner_st, 0, static_cast<int64_t>(inner_sz.size()));
  sel.shape = concat(concat(outer_sz, b), inner_sz);
  sel.n_outer = static_cast<int64_t>(outer_sz.size());
  sel.n_b = static_cast<int64_t>(b.size());
  sel.base = v.offset();
  return sel;
}

// Calls f(o, j, i0, i1) over the selection. Threads split the outer or the inner dims, never the
// index dims, so repeated index positions apply in order (the last write wins, as in NumPy).
template <typename F>
void for_each_selected(const Selection& sel, const F& f) {
  const int64_t O = sel.outer.size, J = sel.adv_off.numel(), I = sel.inner.size;
  const int nt = get_num_threads();
  if (O * J * I <= kGrainSize || nt == 1 || (O < nt && I < 32 * nt)) {
    for (int64_t o = 0; o < O; ++o)
      for (int64_t j = 0; j < J; ++j) f(o, j, int64_t{0}, I);
  } else if (O >= nt) {
    parallel_for(0, O, 1, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o)
        for (int64_t j = 0; j < J; ++j) f(o, j, int64_t{0}, I);
    });
  } else {
    parallel_for(0, I, 32, [&](int64_t b, int64_t e) {
      for (int64_t o = 0; o < O; ++o)
        for (int64_t j = 0; j < J; ++j) f(o, j, b, e);
    });
  }
}

// The selection's offsets as an int64 tensor of its shape.
Tensor selection_positions(const Selection& sel) {
  Tensor pos = empty(sel.shape, DType::Int64);
  int64_t* p = pos.data<int64_t>();
  const int64_t* ao = sel.adv_off.data<int64_t>();
  const int64_t J = sel.adv_off.numel(), I = sel.inner.size;
  for_each_selected(sel, [&](int64_t o, int64_t j, int64_t i0, int64_t i1) {
    const int64_t start = sel.base + sel.outer.at(o) + ao[j];
    int64_t* row = p + (o * J + j) * I;
    for (int64_t i = i0; i < i1; ++i) row[i] = start + sel.inner.at(i);
  });
  return pos;
}

// x's selected elements <- value (already x's dtype, broadcast to the selection's shape).
void write_selection(const Tensor& x, const Selection& sel, const Tensor& value) {
  const Shape vst = broadcast_strides(value, sel.shape);
  const int64_t nd = static_cast<int64_t>(sel.shape.size()), split = sel.n_outer + sel.n_b;
  const DimGroup vo = group_dims(sel.shape, vst, 0, sel.n_outer);
  const DimGroup vb = group_dims(sel.shape, vst, sel.n_outer, split);
  const DimGroup vi = group_dims(sel.shape, vst, split, nd);
  const bool inner_unit = sel.inner.unit() && vi.unit();
  const bool inner_fill = sel.inner.unit() && vi.table.empty() && vi.stride == 0;
  const int64_t* ao = sel.adv_off.data<int64_t>();
  dispatch_by_size(x.itemsize(), [&](auto tag) {
    using U = decltype(tag);
    U* xs = static_cast<U*>(x.storage()->data()) + sel.base;
    const U* vp = value.data<U>();
    for_each_selected(sel, [&](int64_t o, int64_t j, int64_t i0, int64_t i1) {
      U* dst = xs + sel.outer.at(o) + ao[j];
      const U* src = vp + vo.at(o) + vb.at(j);
      if (inner_unit) {
        for (int64_t i = i0; i < i1; ++i) dst[i] = src[i];
      } else if (inner_fill) {
        const U v = src[0];
        for (int64_t i = i0; i < i1; ++i) dst[i] = v;
      } else {
        for (int64_t i = i0; i < i1; ++i) dst[sel.inner.at(i)] = src[vi.at(i)];
      }
    });
  });
}

bool is_full_mask(const Tensor& x, const std::vector<TensorIndex>& indices) {
  return indices.size() == 1 && indices[0].kind == Kind::Tensor &&
         indices[0].tensor.dtype() == DType::Bool && x.dim() > 0 &&
         indices[0].tensor.shape() == x.shape();
}

// The value of x[indices] = value: leading size-1 dims dropped (as PyTorch does), then checked to
// broadcast to the selection's shape.
Tensor value_for(const Tensor& value, const Shape& shape) {
  Tensor v = value;
  while (v.dim() > static_cast<int64_t>(shape.size()) && v.size(0) == 1) v = squeeze(v, 0);
  bool ok = v.dim() <= static_cast<int64_t>(shape.size());
  for (int64_t i = 1; ok && i <= v.dim(); ++i) {
    const int64_t s = v.size(-i), t = shape[shape.size() - i];
    ok = s == t || s == 1;
  }
  NW_CHECK(ok, ValueError, "shape mismatch: value of shape ", shape_str(value.shape()),
           " cannot be broadcast to the indexing result of shape ", shape_str(shape));
  return v;
}

}  // namespace

Tensor tensor_index(const Tensor& x, const std::vector<TensorIndex>& indices) {
  // x[mask] with a mask of x's own shape is masked_select: one pass, no coordinate list.
  if (is_full_mask(x, indices)) return masked_select(x, indices[0].tensor);
  Indexed r = apply_basic(x, indices);
  if (r.adv.empty()) return r.view.is_same(x) ? view(x, x.shape()) : r.view;
  return gather_advanced(r.view, r.adv);
}

void tensor_index_put_(Tensor& x, const std::vector<TensorIndex>& indices, const Tensor& value) {
  const bool full_mask_fill = is_full_mask(x, indices) && value.dim() == 0;
  if (GradMode::is_enabled() && (x.requires_grad() || value.requires_grad())) {
    NW_CHECK(!(x.requires_grad() && x.is_leaf()), std::runtime_error,
             "__setitem__: a leaf tensor that requires grad can't be written in place; wrap the "
             "assignment in no_grad() or write into a clone");
    NW_CHECK(
        !x.impl()->is_view, std::runtime_error,
        "__setitem__: autograd can't record a write into a view (this tensor views another one's "
        "memory); index the base tensor instead, or build the result out of place with where, "
        "index_copy or cat");
    if (full_mask_fill) {
      masked_fill_(x, indices[0].tensor, value);
      return;
    }
    // Out of place on the flattened tensor, then written back through Copy's in-place form,
    // which gives x the new history.
    Tensor pos = selection_positions(plan_selection(x, indices, /*logical=*/true));
    Tensor v = expand(as_dtype(value_for(value, pos.shape()), x.dtype()), pos.shape());
    Tensor updated = index_copy(reshape(x, {-1}), 0, reshape(pos, {-1}), reshape(v, {-1}));
    dispatch_inplace(OpKind::Copy, x, {reshape(updated, x.shape())});
    return;
  }
  NoGradGuard guard;
  if (full_mask_fill) {
    masked_fill_(x, indices[0].tensor, value.item());
    return;
  }
  const bool basic = std::none_of(indices.begin(), indices.end(),
                                  [](const TensorIndex& e) { return e.kind == Kind::Tensor; });
  if (basic) {
    Tensor target = apply_basic(x, indices).view;
    // x[1:] = x[:-1] and the like: read the source before writing over it.
    Tensor src = value.storage() == x.storage() ? clone(value) : value;
    copy_(target, value_for(src, target.shape()));
    return;
  }
  const TensorIndex& first = indices[0];
  if (indices.size() == 1 && first.kind == Kind::Tensor && first.tensor.dim() == 1 &&
      first.tensor.dtype() != DType::Bool && x.dim() >= 1) {
    // x[idx] = v, the common form: whole rows through IndexCopy, a dispatched op (tracer-visible).
    const int64_t n = x.size(0);
    Tensor idx = first.tensor;
    NW_CHECK(idx.numel() == 0 || (amin(idx).item() >= -n && amax(idx).item() < n), IndexError,
             "__setitem__: index ", (amin(idx).item() < -n ? amin(idx).item() : amax(idx).item()),
             " is out of bounds for dimension 0 with size ", n);
    idx =
        where(lt(idx, scalar_tensor(0, idx.dtype())), add(idx, scalar_tensor(n, idx.dtype())), idx);
    Shape rows = x.shape();
    rows[0] = idx.size(0);
    Tensor v = expand(as_dtype(value_for(value, rows), x.dtype()), rows);
    if (v.storage() == x.storage()) v = clone(v);  // never read what is being written
    index_copy_(x, 0, idx, v);
    return;
  }
  if (x.is_contiguous()) {
    // Through the dispatcher (IndexCopy in place on a flat view), so a tracer records the write.
    Tensor pos = selection_positions(plan_selection(x, indices, /*logical=*/true));
    Tensor v = expand(value_for(value, pos.shape()), pos.shape());
    if (v.storage() == x.storage()) v = clone(v);  // never read what is being written
    Tensor flat = view(x, {-1});
    index_copy_(flat, 0, reshape(pos, {-1}), reshape(as_dtype(v, x.dtype()), {-1}));
    return;
  }
  const Selection sel = plan_selection(x, indices, /*logical=*/false);
  Tensor v = value_for(value, sel.shape);
  if (v.dtype() != x.dtype() ||
      v.storage() == x.storage()) {  // convert; never read what is being written
    Tensor c = empty(v.shape(), x.dtype(), x.device());
    copy_(c, v);
    v = c;
  }
  write_selection(x, sel, v);
  x.bump_version();
}

std::pair<Tensor, Tensor> embedding_sparse_grad(const Tensor& grad_out, const Tensor& indices,
                                                int64_t num_rows) {
  const char* op = "embedding_sparse_grad";
  NW_CHECK(indices.dtype() == DType::Int32 || indices.dtype() == DType::Int64, TypeError, op,
           ": indices must be an int32 or int64 tensor, got ", dtype_name(indices.dtype()));
  NW_CHECK(is_floating(grad_out.dtype()), TypeError, op, ": grad_out must be floating point, got ",
           dtype_name(grad_out.dtype()));
  NW_CHECK(num_rows >= 0, ValueError, op, ": num_rows must be non-negative, got ", num_rows);
  bool shape_ok = grad_out.dim() == indices.dim() + 1;
  for (int64_t d = 0; shape_ok && d < indices.dim(); ++d)
    shape_ok = grad_out.size(d) == indices.size(d);
  NW_CHECK(shape_ok, ValueError, op,
           ": grad_out must have shape indices.shape + [embedding_dim] = ",
           shape_str(indices.shape()), " + [D], got ", shape_str(grad_out.shape()));
  const int64_t n = indices.numel(), D = grad_out.size(-1);
  Tensor ids_t = empty(indices.shape(), DType::Int64);
  NW_DISPATCH_INDEX(indices.dtype(), op, {
    elementwise_kernel<int64_t, scalar_t>(ids_t, {indices},
                                          [](scalar_t v) { return static_cast<int64_t>(v); });
  });
  const int64_t* ids = ids_t.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    NW_CHECK(ids[i] >= 0 && ids[i] < num_rows, IndexError, op, ": index ", ids[i],
             " is out of bounds for num_rows = ", num_rows);
  }
  // Group positions by row id; the stable sort keeps each row's terms in input order, so the
  // sums do not depend on the thread count.
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [ids](int64_t a, int64_t b) { return ids[a] < ids[b]; });
  std::vector<int64_t> group;
  for (int64_t j = 0; j < n; ++j)
    if (j == 0 || ids[order[j]] != ids[order[j - 1]]) group.push_back(j);
  const int64_t U = static_cast<int64_t>(group.size());
  group.push_back(n);
  Tensor uid = empty({U}, DType::Int64);
  Tensor rows = empty({U, D}, grad_out.dtype());
  Tensor g = empty(grad_out.shape(), grad_out.dtype());
  {
    NoGradGuard guard;
    copy_(g, grad_out.detach());
  }
  auto sum_rows = [&](auto tag) {
    using T = decltype(tag);
    using Acc = typename CanonicalT<T>::type;
    const T* gp = g.data<T>();
    T* rp = rows.data<T>();
    int64_t* up = uid.data<int64_t>();
    const int64_t per_row = std::max<int64_t>(1, D * (n / std::max<int64_t>(U, 1)));
    parallel_for(0, U, std::max<int64_t>(1, kGrainSize / per_row), [&](int64_t b, int64_t e) {
      std::vector<Acc> acc(D);
      for (int64_t u = b; u < e; ++u) {
        up[u] = ids[order[group[u]]];
        std::fill(acc.begin(), acc.end(), Acc(0));
        for (int64_t j = group[u]; j < group[u + 1]; ++j) {
          const T* src = gp + order[j] * D;
          for (int64_t f = 0; f < D; ++f) acc[f] += load_value(src[f]);
        }
        for (int64_t f = 0; f < D; ++f) rp[u * D + f] = convert_value<T>(acc[f]);
      }
    });
  };
  switch (grad_out.dtype()) {
    case DType::Float16:
      sum_rows(Half{});
      break;
    case DType::BFloat16:
      sum_rows(BFloat16{});
      break;
    case DType::Float32:
      sum_rows(float{});
      break;
    default:
      sum_rows(double{});
      break;  // float64: the only floating type left
  }
  return {uid, rows};
}

}  // namespace nodeweave
