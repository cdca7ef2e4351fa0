"""The graph kernels as ``torch.autograd.Function``\\ s: the PyTorch binding of the kernel layer.

The gradient rules are the native binding's (``backend/native/*_op.cc``), written again with the
same kernels: the gradient of gSpMM is a gSpMM on the reversed graph (node operand) or a gSDDMM
(edge operand); the gradient of gSDDMM is a gSDDMM reduced onto nodes by a gSpMM, fused into one
gSpMM when the other operand sits on a node; max/min route gradients through the arg outputs; edge
and segment softmax run a fused backward kernel, or differentiable ops under ``create_graph``.
Backward passes call the public (differentiable) functions of this module, so higher-order
gradients work as they do on the native engine.

The gradient rules of gSpMM, gSDDMM and edge softmax are module functions (:func:`spmm_backward`,
:func:`sddmm_backward`, :func:`edge_softmax_backward`) written against a graph that is either the
pybind ``RelationGraph`` (eager: the ``Function``\\ s below) or its tensors,
:class:`torch_library.RelationTensors` (the ``nodeweave::`` custom operators, which
``torch.compile`` traces; :mod:`nodeweave.backend.torch_library` registers these same functions
as their backward). The public functions take the operators while Dynamo traces, or when given a
``RelationTensors``.

Operand preparation that autograd must see — dtype alignment, rank padding, half-precision
handling under autocast — happens in the public functions, outside the Functions; the Functions
receive aligned operands and reduce broadcast gradients back with :func:`sum_to`.

Half precision: the kernels compute in float32 or float64. A float16/bfloat16 input (for example
the output of a ``Linear`` under ``torch.autocast``) is computed in float32; under autocast the
float32 result is returned (as autocast does for precision-sensitive ops), otherwise it is cast
back to the input's dtype.

>>> import torch, nodeweave as nw
>>> from nodeweave.backend.torch_autograd import gspmm
>>> g = nw.graph(([0, 1], [1, 1]), num_nodes=2)
>>> x = torch.tensor([[1.0], [2.0]], requires_grad=True)
>>> gspmm(g._rels[g.canonical_etypes[0]], "copy_lhs", "sum", x, None).sum().backward()
>>> x.grad.tolist()
[[1.0], [1.0]]
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

import torch

from nodeweave.backend import torch_kernels as K
from nodeweave import errors as nwerr

Tensor = torch.Tensor
_HALF = (torch.float16, torch.bfloat16)


# ---------------------------------------------------------------------------------------- helpers
def sum_to(grad: Optional[Tensor], shape: torch.Size) -> Optional[Tensor]:
    """Reduces a broadcast gradient to ``shape`` (same rank; sums where ``shape`` has 1)."""
    if grad is None or tuple(grad.shape) == tuple(shape):
        return grad
    dims = [d for d, (g, s) in enumerate(zip(grad.shape, shape)) if s == 1 and g != 1]
    return grad.sum(dims, keepdim=True) if dims else grad


def _autocast_on(device_type: str) -> bool:
    try:
        return torch.is_autocast_enabled(device_type)
    except TypeError:  # torch < 2.4: no device argument
        if device_type == "cpu":
            return torch.is_autocast_cpu_enabled()
        return torch.is_autocast_enabled()


def _to_float(ts):
    """Casts half-precision operands to float32; returns the tensors and the dtype to give the
    result back in (None: leave the result as the kernel made it)."""
    half = [t for t in ts if t is not None and t.dtype in _HALF]
    if not half:
        return ts, None
    back = None if _autocast_on(half[0].device.type) else half[0].dtype
    return [t.float() if t is not None and t.dtype in _HALF else t for t in ts], back


def _cast_back(out: Tensor, dtype) -> Tensor:
    return out if dtype is None else out.to(dtype)


def _reverse(rel, cache: dict):
    if "rev" not in cache:
        cache["rev"] = rel.reverse_for_kernels()
    return cache["rev"]


# ------------------------------------------------------------------------------------------ gspmm
def spmm_keeps_operands(op: str, reduce_op: str) -> bool:
    """Whether gSpMM's backward reads its operands (and, for max/min, the arg outputs)."""
    return op in ("mul", "div") or reduce_op in ("max", "min")


class GSpMM(torch.autograd.Function):
    """out[v] = reduce_{e=(u,v)} op(lhs[u], rhs[e]) on aligned operands."""

    @staticmethod
    def forward(ctx, rel, op, reduce_op, lhs, rhs):
        out, arg_l, arg_r = K.spmm(rel, op, reduce_op, lhs, rhs)
        ctx.rel, ctx.op, ctx.reduce_op = rel, op, reduce_op
        ctx.shapes = (None if lhs is None else lhs.shape, None if rhs is None else rhs.shape)
        keep = spmm_keeps_operands(op, reduce_op)
        ctx.save_for_backward(lhs if keep else None, rhs if keep else None, arg_l, arg_r)
        return out

    @staticmethod
    def backward(ctx, grad):
        lhs, rhs, arg_l, arg_r = ctx.saved_tensors
        gl, gr = spmm_backward(ctx.rel, ctx.op, ctx.reduce_op, grad, lhs, rhs, arg_l, arg_r,
                               ctx.needs_input_grad[3], ctx.needs_input_grad[4], *ctx.shapes)
        return None, None, None, gl, gr


def spmm_backward(rel, op: str, reduce_op: str, grad: Tensor, lhs: Optional[Tensor],
                  rhs: Optional[Tensor], arg_l: Optional[Tensor], arg_r: Optional[Tensor],
                  want_l: bool, want_r: bool, lhs_shape, rhs_shape):
    """``(grad_lhs, grad_rhs)`` of gSpMM on aligned operands (None where not wanted or not read);
    ``lhs``/``rhs`` are needed for mul/div and max/min, ``arg_l``/``arg_r`` for max/min only.
    ``rel`` is a ``RelationGraph`` or a :class:`torch_library.RelationTensors` (as in the other
    rules): the gradient of the ``GSpMM`` Function and of the ``nodeweave::gspmm`` operator."""
    need_l = want_l and op != "copy_rhs"
    need_r = want_r and op != "copy_lhs"
    if reduce_op in ("max", "min"):
        gl, gr = _spmm_arg_backward(rel, op, grad, lhs, rhs, arg_l, arg_r, need_l, need_r)
    else:
        if reduce_op == "mean":
            grad = grad / _in_degree_divisor(rel, grad)
        gl, gr = _spmm_sum_backward(rel, op, grad, lhs, rhs, need_l, need_r)
    return (sum_to(gl, lhs_shape) if need_l else None, sum_to(gr, rhs_shape) if need_r else None)


def _in_degree_divisor(rel, like: Tensor) -> Tensor:
    """In-degrees as (num_dst, 1, ...) in ``like``'s dtype, at least 1 (the mean's divisor)."""
    deg = rel.in_degrees()  # NumPy from a RelationGraph, a tensor from RelationTensors
    deg = (deg.to(like.dtype) if isinstance(deg, Tensor)
           else torch.tensor(deg, dtype=like.dtype, device=like.device))
    return deg.clamp(min=1).reshape((rel.num_dst,) + (1,) * (like.dim() - 1))


def _spmm_sum_backward(rel, op, grad, lhs, rhs, need_l, need_r):
    gl = gr = None
    if need_l:
        rev = rel.reverse_for_kernels()
        if op in ("mul", "div"):
            gl = gspmm(rev, op, "sum", grad, rhs)
        else:  # copy_lhs, add, sub: d out / d lhs = 1
            gl = gspmm(rev, "copy_lhs", "sum", grad, None)
    if need_r:
        # An edge operand broadcast over the last feature dim (GAT's (E, heads, 1) attention)
        # takes a dot gSDDMM, which writes (E, heads, 1) directly rather than an (E, heads, D)
        # product for sum_to to reduce.
        dot = (op in ("mul", "div") and rhs.dim() >= 2 and rhs.shape[-1] == 1
               and lhs.dim() == rhs.dim() and lhs.shape[-1] > 1 and grad.shape[-1] == lhs.shape[-1])
        prod = "dot" if dot else "mul"
        if op == "mul":
            gr = gsddmm(rel, prod, lhs, grad, "u", "v")
        elif op == "div":
            gr = -gsddmm(rel, prod, lhs, grad, "u", "v") / (rhs * rhs)
        elif op == "sub":
            gr = -gsddmm(rel, "copy_lhs", grad, None, "v", "e")
        else:  # copy_rhs, add
            gr = gsddmm(rel, "copy_lhs", grad, None, "v", "e")
    return gl, gr


def _pick(x: Tensor, arg: Tensor, out_shape) -> Tensor:
    """Row ``arg[v, k]`` of operand ``x`` per output element (broadcast to the output's features)."""
    full = (x.shape[0],) + tuple(out_shape[1:])
    return x.expand(full).reshape(x.shape[0], arg.shape[1]).gather(0, arg.clamp(min=0))


def _spmm_arg_backward(rel, op, grad, lhs, rhs, arg_l, arg_r, need_l, need_r):
    """Max/min: each output element's gradient goes to the (source, edge) pair that won."""
    if rel.num_edges == 0:
        return None, None
    out_shape = grad.shape
    arg_any = arg_l if arg_l is not None else arg_r
    gflat = grad.reshape(rel.num_dst, arg_any.shape[1])
    gflat = torch.where(arg_any >= 0, gflat, torch.zeros_like(gflat))

    def scatter_rows(contrib, arg, rows):
        z = torch.zeros((rows, arg.shape[1]), dtype=contrib.dtype, device=contrib.device)
        return z.scatter_add(0, arg.clamp(min=0), contrib).reshape((rows,) + tuple(out_shape[1:]))

    gl = gr = None
    if need_l:
        c = gflat
        if op == "mul":
            c = c * _pick(rhs, arg_r, out_shape)
        elif op == "div":
            c = c / _pick(rhs, arg_r, out_shape)
        gl = scatter_rows(c, arg_l, rel.num_src)
    if need_r:
        c = gflat
        if op == "sub":
            c = -c
        elif op == "mul":
            c = c * _pick(lhs, arg_l, out_shape)
        elif op == "div":
            r = _pick(rhs, arg_r, out_shape)
            c = -(c * _pick(lhs, arg_l, out_shape)) / (r * r)
        gr = scatter_rows(c, arg_r, rel.num_edges)
    return gl, gr


def gspmm(rel, op: str, reduce_op: str, lhs: Optional[Tensor], rhs: Optional[Tensor]) -> Tensor:
    """Differentiable gSpMM on torch tensors (same contract as ``nodeweave._C.gspmm``); a missing
    operand or an unknown op is reported by :func:`torch_kernels.spmm`."""
    need_l, need_r = op != "copy_rhs", op != "copy_lhs"
    (lhs, rhs), back = _to_float([lhs if need_l else None, rhs if need_r else None])
    lhs, rhs = K.align("gspmm", lhs, rhs)
    if _TL.uses_ops(rel):
        return _cast_back(_TL.gspmm(_TL.structure(rel), op, reduce_op, lhs, rhs), back)
    return _cast_back(GSpMM.apply(rel, op, reduce_op, lhs, rhs), back)


# ----------------------------------------------------------------------------------------- gsddmm
def sddmm_keeps(op: str) -> Tuple[bool, bool, bool]:
    """Whether gSDDMM's backward reads (lhs, rhs, out)."""
    prod = op in ("mul", "div", "dot")
    return prod, prod, op == "div"


class GSDDMM(torch.autograd.Function):
    """out[e] = op(lhs[target_l(e)], rhs[target_r(e)]) on aligned operands."""

    @staticmethod
    def forward(ctx, rel, op, lhs, rhs, lt, rt):
        out = K.sddmm(rel, op, lhs, rhs, lt, rt)
        ctx.rel, ctx.op, ctx.lt, ctx.rt = rel, op, lt, rt
        ctx.shapes = (None if lhs is None else lhs.shape, None if rhs is None else rhs.shape)
        keep_l, keep_r, keep_out = sddmm_keeps(op)
        ctx.save_for_backward(lhs if keep_l else None, rhs if keep_r else None,
                              out if keep_out else None)
        return out

    @staticmethod
    def backward(ctx, grad):
        lhs, rhs, out = ctx.saved_tensors
        gl, gr = sddmm_backward(ctx.rel, ctx.op, ctx.lt, ctx.rt, grad, lhs, rhs, out,
                                ctx.needs_input_grad[2], ctx.needs_input_grad[3], *ctx.shapes)
        return None, None, gl, gr, None, None


def sddmm_backward(rel, op: str, lt: str, rt: str, grad: Tensor, lhs: Optional[Tensor],
                   rhs: Optional[Tensor], out: Optional[Tensor], want_l: bool, want_r: bool,
                   lhs_shape, rhs_shape):
    """``(grad_lhs, grad_rhs)`` of gSDDMM on aligned operands (None where not wanted or not read);
    the operands are needed for mul/div/dot, ``out`` for div. The gradient of the ``GSDDMM``
    Function and of the ``nodeweave::gsddmm`` operator."""
    cache: dict = {}
    gl = gr = None
    if want_l and op != "copy_rhs":
        if op in ("mul", "dot"):
            gl = _operand_grad(rel, "mul", grad, rhs, lt, rt, cache)
        elif op == "div":
            gl = _operand_grad(rel, "div", grad, rhs, lt, rt, cache)
        else:
            gl = _reduce_edges(rel, grad, lt, cache)
        gl = sum_to(gl, lhs_shape)
    if want_r and op != "copy_lhs":
        if op in ("mul", "dot"):
            gr = _operand_grad(rel, "mul", grad, lhs, rt, lt, cache)
        elif op == "div":  # d(l/r)/dr = -out/r: per edge, then reduced
            gr = -_reduce_edges(rel, gsddmm(rel, "div", grad * out, rhs, "e", rt), rt, cache)
        elif op == "sub":
            gr = -_reduce_edges(rel, grad, rt, cache)
        else:
            gr = _reduce_edges(rel, grad, rt, cache)
        gr = sum_to(gr, rhs_shape)
    return gl, gr


def _reduce_edges(rel, per_edge: Tensor, target: str, cache: dict) -> Tensor:
    """Sums a per-edge tensor onto the rows of ``target`` (edges: itself)."""
    if target == "e":
        return per_edge
    g = rel if target == "v" else _reverse(rel, cache)
    return gspmm(g, "copy_rhs", "sum", None, per_edge)


def _operand_grad(rel, mult: str, grad: Tensor, o: Tensor, t: str, ot: str, cache: dict) -> Tensor:
    """d out / d operand (on side ``t``) times grad, with the other operand ``o`` on ``ot``."""
    fused = rel if (t, ot) == ("v", "u") else _reverse(rel, cache) if (t, ot) == ("u", "v") else None
    if fused is not None:  # sum_e grad[e] * o[other(e)] in one gSpMM
        return gspmm(fused, "mul", "sum", o if mult == "mul" else torch.reciprocal(o), grad)
    return _reduce_edges(rel, gsddmm(rel, mult, grad, o, "e", ot), t, cache)


def gsddmm(rel, op: str, lhs: Optional[Tensor], rhs: Optional[Tensor], lhs_target: str = "u",
           rhs_target: str = "v") -> Tensor:
    """Differentiable gSDDMM on torch tensors (same contract as ``nodeweave._C.gsddmm``); a missing
    operand is reported by :func:`torch_kernels.sddmm`."""
    need_l, need_r = op != "copy_rhs", op != "copy_lhs"
    for name, t in (("lhs_target", lhs_target), ("rhs_target", rhs_target)):
        if t not in ("u", "e", "v"):
            raise nwerr.ValueError(f"gsddmm: {name} must be 'u', 'e' or 'v', got {t!r}")
    (lhs, rhs), back = _to_float([lhs if need_l else None, rhs if need_r else None])
    lhs, rhs = K.align("gsddmm", lhs, rhs)
    if _TL.uses_ops(rel):
        return _cast_back(_TL.gsddmm(_TL.structure(rel), op, lhs, rhs, lhs_target, rhs_target),
                          back)
    return _cast_back(GSDDMM.apply(rel, op, lhs, rhs, lhs_target, rhs_target), back)


# ------------------------------------------------------------------------------------ softmaxes
class EdgeSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, rel, score, by_dst):
        out = K.edge_softmax(rel, score, by_dst)
        ctx.rel, ctx.by_dst = rel, by_dst
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return None, edge_softmax_backward(ctx.rel, out, grad, ctx.by_dst), None


def edge_softmax_backward(rel, out: Tensor, grad: Tensor, by_dst: bool) -> Tensor:
    """The score gradient of edge softmax (``EdgeSoftmax`` and ``nodeweave::edge_softmax``): the
    fused kernel, or under ``create_graph`` the formula ``p - out * sum_group(p)`` with
    ``p = out * grad`` made of differentiable kernels."""
    if not torch.is_grad_enabled():
        if _TL.uses_ops(rel):
            return _TL.edge_softmax_backward(_TL.structure(rel), out, grad, by_dst)
        return K.edge_softmax_backward(rel, out, grad, by_dst)
    p = out * grad
    s = gspmm(rel if by_dst else rel.reverse_for_kernels(), "copy_rhs", "sum", None, p)
    s_e = gsddmm(rel, "copy_lhs", s, None, "v" if by_dst else "u", "e")
    return p - out * s_e


def edge_softmax(rel, logits: Tensor, norm_by: str = "dst") -> Tensor:
    """Differentiable edge softmax on torch tensors."""
    if norm_by not in ("dst", "src"):
        raise nwerr.ValueError(f"edge_softmax: norm_by must be 'dst' or 'src', got {norm_by!r}")
    (logits,), back = _to_float([logits])  # torch_kernels validates the operands
    if _TL.uses_ops(rel):
        out = _TL.edge_softmax(_TL.structure(rel), logits.contiguous(), norm_by == "dst")
        return _cast_back(out, back)
    return _cast_back(EdgeSoftmax.apply(rel, logits.contiguous(), norm_by == "dst"), back)


def segment_ids(offsets: Tensor) -> Tensor:
    """Segment index of every row the offsets cover (int64, offsets' device)."""
    counts = (offsets[1:] - offsets[:-1]).to(torch.int64)
    return torch.repeat_interleave(torch.arange(counts.numel(), device=offsets.device), counts)


class SegmentSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, offsets):
        out = K.segment_softmax(x, offsets)
        ctx.save_for_backward(out, offsets)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, offsets = ctx.saved_tensors
        if not torch.is_grad_enabled():
            return K.segment_softmax_backward(out, grad, offsets), None
        p = out * grad
        s = segment_reduce("sum", p, offsets)
        return p - out * s.index_select(0, segment_ids(offsets)), None


def segment_softmax(value: Tensor, offsets: Tensor) -> Tensor:
    (value,), back = _to_float([value])  # torch_kernels validates the operands
    return _cast_back(SegmentSoftmax.apply(value.contiguous(), offsets.contiguous()), back)


# ------------------------------------------------------------------------------- segment_reduce
class SegmentReduce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, reduce_op, x, offsets):
        out, arg = K.segment_reduce(reduce_op, x, offsets)
        ctx.reduce_op, ctx.x_shape = reduce_op, x.shape
        ctx.save_for_backward(offsets, arg)
        return out

    @staticmethod
    def backward(ctx, grad):
        offsets, arg = ctx.saved_tensors
        n_seg = offsets.numel() - 1
        if ctx.reduce_op in ("max", "min"):
            gflat = grad.reshape(n_seg, arg.shape[1])
            gflat = torch.where(arg >= 0, gflat, torch.zeros_like(gflat))
            z = torch.zeros((ctx.x_shape[0], arg.shape[1]), dtype=grad.dtype, device=grad.device)
            return None, z.scatter_add(0, arg.clamp(min=0), gflat).reshape(ctx.x_shape), None
        if ctx.reduce_op == "mean":
            counts = (offsets[1:] - offsets[:-1]).to(grad.dtype).clamp(min=1)
            grad = grad / counts.reshape((n_seg,) + (1,) * (grad.dim() - 1))
        return None, grad.index_select(0, segment_ids(offsets)), None


def segment_reduce(reduce_op: str, value: Tensor, offsets: Tensor) -> Tensor:
    """Differentiable reduction over consecutive segments (offsets: S + 1 ints)."""
    if reduce_op not in ("sum", "mean", "max", "min"):
        raise nwerr.ValueError(f"segment_reduce: reducer must be sum, mean, max or min, got {reduce_op!r}")
    (value,), back = _to_float([value])  # torch_kernels validates the operands
    return _cast_back(SegmentReduce.apply(reduce_op, value.contiguous(), offsets.contiguous()),
                      back)


# ------------------------------------------------------------------------ gather_mm / segment_mm
def _scatter_rows(rows_out: Tensor, idx: Optional[Tensor], n: int) -> Tensor:
    """Rows summed into an (n, k) tensor at ``idx`` (as they are when idx is None)."""
    if idx is None:
        return rows_out
    z = torch.zeros((n, rows_out.shape[1]), dtype=rows_out.dtype, device=rows_out.device)
    return z.index_add(0, idx.to(torch.int64), rows_out)


def _t(w: Tensor) -> Tensor:
    return w.transpose(1, 2).contiguous()


class GatherMM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, idx_a, idx_b):
        ctx.save_for_backward(a, b, idx_a, idx_b)
        return K.gather_mm(a, b, idx_a, idx_b)

    @staticmethod
    def backward(ctx, grad):
        a, b, ia, ib = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = _scatter_rows(gather_mm(grad, _t(b), None, ib), ia, a.shape[0])
        if ctx.needs_input_grad[1]:
            gb = GatherMMGradB.apply(a, grad, ia, ib, b.shape[0])
        return ga, gb, None, None


class GatherMMGradB(torch.autograd.Function):
    """grad_b = sum_i a[ia_i]^T g_i, with its own gradient (second derivatives of typed layers)."""

    @staticmethod
    def forward(ctx, a, g, idx_a, idx_b, num_types):
        ctx.save_for_backward(a, g, idx_a, idx_b)
        return K.gather_mm_grad_b(a, g, idx_a, idx_b, num_types)

    @staticmethod
    def backward(ctx, h):
        a, g, ia, ib = ctx.saved_tensors
        ga = gg = None
        if ctx.needs_input_grad[0]:
            ga = _scatter_rows(gather_mm(g, _t(h), None, ib), ia, a.shape[0])
        if ctx.needs_input_grad[1]:
            gg = gather_mm(a, h, ia, ib)
        return ga, gg, None, None, None


def gather_mm(a: Tensor, b: Tensor, idx_a: Optional[Tensor], idx_b: Tensor) -> Tensor:
    """Differentiable ``out[i] = a[idx_a[i]] @ b[idx_b[i]]``."""
    K.check_mm("gather_mm", a, b)
    if not isinstance(idx_b, torch.Tensor) or idx_b.dim() != 1:
        raise nwerr.ValueError("gather_mm: idx_b must be a 1-D tensor of type ids")
    if idx_a is not None and idx_a.numel() != idx_b.numel():
        raise nwerr.ValueError(f"gather_mm: idx_a and idx_b must have the same length, got "
                               f"{idx_a.numel()} and {idx_b.numel()}")
    if idx_a is None and a.shape[0] != idx_b.numel():
        raise nwerr.ValueError(f"gather_mm: a has {a.shape[0]} rows but idx_b has {idx_b.numel()} "
                               "entries (pass idx_a to gather rows)")
    return GatherMM.apply(a.contiguous(), b.contiguous(), idx_a, idx_b)


class SegmentMM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, seglen):
        ctx.seglen = seglen
        ctx.save_for_backward(a, b)
        return K.segment_mm(a, b, seglen)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = segment_mm(grad, _t(b), ctx.seglen) if ctx.needs_input_grad[0] else None
        gb = SegmentMMGradB.apply(a, grad, ctx.seglen) if ctx.needs_input_grad[1] else None
        return ga, gb, None


class SegmentMMGradB(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, g, seglen):
        ctx.seglen = seglen
        ctx.save_for_backward(a, g)
        return K.segment_mm_grad_b(a, g, seglen)

    @staticmethod
    def backward(ctx, h):
        a, g = ctx.saved_tensors
        ga = segment_mm(g, _t(h), ctx.seglen) if ctx.needs_input_grad[0] else None
        gg = segment_mm(a, h, ctx.seglen) if ctx.needs_input_grad[1] else None
        return ga, gg, None


def segment_mm(a: Tensor, b: Tensor, seglen: Sequence[int]) -> Tensor:
    """Differentiable: rows of ``a`` in consecutive segments of ``seglen[r]`` rows, each ``@ b[r]``."""
    K.check_mm("segment_mm", a, b)
    seglen = [int(s) for s in seglen]
    if len(seglen) != b.shape[0]:
        raise nwerr.ValueError(f"segment_mm: seglen has {len(seglen)} entries but b has {b.shape[0]} "
                               "weight matrices")
    for i, s in enumerate(seglen):
        if s < 0:
            raise nwerr.ValueError(f"segment_mm: seglen[{i}] = {s} is negative")
    if sum(seglen) != a.shape[0]:
        raise nwerr.ValueError(f"segment_mm: seglen sums to {sum(seglen)} but a has {a.shape[0]} rows")
    return SegmentMM.apply(a.contiguous(), b.contiguous(), seglen)


# Last, because torch_library registers the gradient rules above as its operators' backward and so
# imports this module; the public functions above only read it when they run.
from nodeweave.backend import torch_library as _TL  # noqa: E402
