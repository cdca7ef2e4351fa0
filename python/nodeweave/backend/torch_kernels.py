"""Forward launchers of the sparse kernels on torch tensors (no autograd here).

Each launcher validates and aligns the operands the way the native binding does
(``backend/native/op_util.cc``: one dtype for both operands, feature ranks padded so the kernels'
right-aligned broadcasting applies, contiguous memory), allocates the outputs with torch, and hands
everything to ``nodeweave._C.dlpack_kernels`` as DLPack capsules. The C++ side views the torch
memory in place — nothing is copied — and on CUDA queues the work on torch's current stream.

The gradient rules that use these launchers are in :mod:`nodeweave.backend.torch_autograd`.

>>> import torch, nodeweave as nw
>>> from nodeweave.backend import torch_kernels as K
>>> g = nw.graph(([0, 1, 2], [1, 2, 2]), num_nodes=3)
>>> out, _, _ = K.spmm(g._rels[g.canonical_etypes[0]], "copy_lhs", "sum",
...                    torch.tensor([[1.0], [2.0], [4.0]]), None)
>>> out.tolist()
[[0.0], [1.0], [6.0]]
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

import torch
from torch.utils.dlpack import to_dlpack

from nodeweave._C import dlpack_kernels as _K
from nodeweave import errors as nwerr

Tensor = torch.Tensor
_FLOATS = (torch.float32, torch.float64)
# Typed matmuls also take the half types (computed in float32 on the CPU, the result rounded once).
_MM_FLOATS = (*_FLOATS, torch.float16, torch.bfloat16)


def capsule(t: Optional[Tensor]):
    """A DLPack capsule viewing ``t`` (None stays None). The tensor is detached first: the kernels
    only read or write memory, autograd is handled by the caller."""
    return None if t is None else to_dlpack(t.detach())


def stream_of(t: Optional[Tensor]) -> int:
    """torch's current CUDA stream on ``t``'s device as an int handle (0 for CPU tensors)."""
    if t is None or t.device.type != "cuda":
        return 0
    return torch.cuda.current_stream(t.device).cuda_stream


def _feat(t: Optional[Tensor]) -> Tuple[int, ...]:
    return () if t is None else tuple(t.shape[1:])


def broadcast_feat(fn: str, lf: Sequence[int], rf: Sequence[int]) -> Tuple[int, ...]:
    """NumPy broadcasting of two feature shapes (right-aligned); ValueError naming ``fn``."""
    n = max(len(lf), len(rf))
    a = (1,) * (n - len(lf)) + tuple(lf)
    b = (1,) * (n - len(rf)) + tuple(rf)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            raise nwerr.ValueError(f"{fn}: lhs feature shape {tuple(lf)} and rhs feature shape "
                                   f"{tuple(rf)} do not broadcast")
        out.append(max(x, y) if x and y else 0)
    return tuple(out)


def out_feat(fn: str, op: str, lhs: Optional[Tensor], rhs: Optional[Tensor]) -> Tuple[int, ...]:
    """Feature shape of the result of message op ``op`` (``dot`` keeps a trailing 1)."""
    if op == "copy_lhs":
        return _feat(lhs)
    if op == "copy_rhs":
        return _feat(rhs)
    lf, rf = _feat(lhs), _feat(rhs)
    if op == "dot":
        if not lf or not rf or lf[-1] != rf[-1]:
            raise nwerr.ValueError(f"{fn}: dot needs the same last feature dimension on both operands, "
                                   f"got feature shapes {lf} and {rf}")
        return broadcast_feat(fn, lf[:-1] + (1,), rf[:-1] + (1,))
    return broadcast_feat(fn, lf, rf)


def _check_float(fn: str, name: str, t: Tensor) -> None:
    if not isinstance(t, torch.Tensor):
        raise nwerr.TypeError(f"{fn}: {name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dim() < 1:
        raise nwerr.ValueError(f"{fn}: {name} must have a first dimension with one row per item, got a "
                               "0-d tensor")
    if t.dtype not in _FLOATS:
        raise nwerr.TypeError(f"{fn}: {name} must be float32 or float64, got {t.dtype}")


def align(fn: str, lhs: Optional[Tensor], rhs: Optional[Tensor]):
    """One dtype for both operands, feature ranks padded to match, contiguous memory."""
    for name, t in (("lhs", lhs), ("rhs", rhs)):
        if t is not None:
            _check_float(fn, name, t)
    if lhs is not None and rhs is not None:
        if lhs.dtype != rhs.dtype:
            raise nwerr.TypeError(f"{fn}: lhs and rhs must have the same dtype, got {lhs.dtype} and "
                                  f"{rhs.dtype}")
        rank = max(lhs.dim(), rhs.dim())
        lhs = lhs.reshape((lhs.shape[0],) + (1,) * (rank - lhs.dim()) + tuple(lhs.shape[1:]))
        rhs = rhs.reshape((rhs.shape[0],) + (1,) * (rank - rhs.dim()) + tuple(rhs.shape[1:]))
    return (None if lhs is None else lhs.contiguous(),
            None if rhs is None else rhs.contiguous())


def _prod(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def spmm_outputs(num_dst: int, op: str, reduce_op: str, lhs: Optional[Tensor],
                 rhs: Optional[Tensor]):
    """Validates and aligns gSpMM's operands and allocates its outputs: ``(lhs, rhs, out, arg_lhs,
    arg_rhs)``. The one shape rule of gSpMM, shared by :func:`spmm` and the fake (meta) kernel of
    the ``nodeweave::gspmm`` custom op (:mod:`nodeweave.backend.torch_library`)."""
    if op == "dot":
        raise nwerr.ValueError("gspmm: the message op 'dot' is not supported; use gsddmm for dot products")
    need_l, need_r = op != "copy_rhs", op != "copy_lhs"
    if need_l and lhs is None:
        raise nwerr.ValueError(f"gspmm: op '{op}' needs lhs (source node features)")
    if need_r and rhs is None:
        raise nwerr.ValueError(f"gspmm: op '{op}' needs rhs (edge features)")
    lhs, rhs = align("gspmm", lhs if need_l else None, rhs if need_r else None)
    any_ = lhs if lhs is not None else rhs
    feat = out_feat("gspmm", op, lhs, rhs)
    out = torch.empty((num_dst,) + feat, dtype=any_.dtype, device=any_.device)
    arg_l = arg_r = None
    if reduce_op in ("max", "min"):
        flat = (num_dst, _prod(feat))
        if need_l:
            arg_l = torch.empty(flat, dtype=torch.int64, device=any_.device)
        if need_r:
            arg_r = torch.empty(flat, dtype=torch.int64, device=any_.device)
    return lhs, rhs, out, arg_l, arg_r


def spmm(rel, op: str, reduce_op: str, lhs: Optional[Tensor], rhs: Optional[Tensor]):
    """``(out, arg_lhs, arg_rhs)`` of gSpMM; the arg tensors (int64, flat features) exist for
    max/min only, each for the operand the op reads (None otherwise)."""
    lhs, rhs, out, arg_l, arg_r = spmm_outputs(rel.num_dst, op, reduce_op, lhs, rhs)
    any_ = lhs if lhs is not None else rhs
    _K.spmm(rel, op, reduce_op, capsule(lhs), capsule(rhs), capsule(out), capsule(arg_l),
            capsule(arg_r), stream_of(any_))
    return out, arg_l, arg_r


def sddmm_outputs(num_edges: int, op: str, lhs: Optional[Tensor], rhs: Optional[Tensor]):
    """Validates and aligns gSDDMM's operands and allocates its output: ``(lhs, rhs, out)``. The
    one shape rule of gSDDMM, shared by :func:`sddmm` and the ``nodeweave::gsddmm`` fake kernel."""
    need_l, need_r = op != "copy_rhs", op != "copy_lhs"
    if need_l and lhs is None:
        raise nwerr.ValueError(f"gsddmm: op '{op}' needs lhs")
    if need_r and rhs is None:
        raise nwerr.ValueError(f"gsddmm: op '{op}' needs rhs")
    lhs, rhs = align("gsddmm", lhs if need_l else None, rhs if need_r else None)
    any_ = lhs if lhs is not None else rhs
    feat = out_feat("gsddmm", op, lhs, rhs)
    out = torch.empty((num_edges,) + feat, dtype=any_.dtype, device=any_.device)
    return lhs, rhs, out


def sddmm(rel, op: str, lhs: Optional[Tensor], rhs: Optional[Tensor], lhs_target: str,
          rhs_target: str) -> Tensor:
    """Per-edge ``op(lhs[target_l(e)], rhs[target_r(e)])``."""
    lhs, rhs, out = sddmm_outputs(rel.num_edges, op, lhs, rhs)
    any_ = lhs if lhs is not None else rhs
    _K.sddmm(rel, op, capsule(lhs), capsule(rhs), lhs_target, rhs_target, capsule(out),
             stream_of(any_))
    return out


def edge_softmax_outputs(score: Tensor):
    """Validates the scores and allocates the result: ``(score, out)`` (the shape rule of edge
    softmax, shared with the ``nodeweave::edge_softmax`` fake kernel)."""
    _check_float("edge_softmax", "score", score)
    score = score.contiguous()
    return score, torch.empty_like(score)


def edge_softmax(rel, score: Tensor, by_dst: bool) -> Tensor:
    score, out = edge_softmax_outputs(score)
    _K.edge_softmax_forward(rel, by_dst, capsule(score), capsule(out), stream_of(score))
    return out


def edge_softmax_backward(rel, out: Tensor, grad: Tensor, by_dst: bool) -> Tensor:
    grad = grad.contiguous()
    gs = torch.empty_like(out)
    _K.edge_softmax_backward(rel, by_dst, capsule(out), capsule(grad), capsule(gs), stream_of(out))
    return gs


def check_segments(fn: str, x: Tensor, offsets: Tensor) -> None:
    _check_float(fn, "value", x)
    if not isinstance(offsets, torch.Tensor) or offsets.dim() != 1 or offsets.numel() < 1:
        raise nwerr.ValueError(f"{fn}: offsets must be a 1-D tensor with num_segments + 1 entries")
    if offsets.dtype not in (torch.int32, torch.int64):
        raise nwerr.TypeError(f"{fn}: offsets must be int32 or int64, got {offsets.dtype}")
    if offsets.device != x.device:
        raise nwerr.ValueError(f"{fn}: offsets is on {offsets.device} but value is on {x.device}")


def segment_reduce(reduce_op: str, x: Tensor, offsets: Tensor):
    """``(out, arg)`` over consecutive segments; arg (int64, flat features) for max/min only."""
    check_segments("segment_reduce", x, offsets)
    x, offsets = x.contiguous(), offsets.contiguous()
    n_seg = offsets.numel() - 1
    out = torch.empty((n_seg,) + tuple(x.shape[1:]), dtype=x.dtype, device=x.device)
    arg = None
    if reduce_op in ("max", "min"):
        arg = torch.empty((n_seg, _prod(x.shape[1:])), dtype=torch.int64, device=x.device)
    _K.segment_reduce(reduce_op, capsule(x), capsule(offsets), capsule(out), capsule(arg),
                      stream_of(x))
    return out, arg


def segment_softmax(x: Tensor, offsets: Tensor) -> Tensor:
    check_segments("segment_softmax", x, offsets)
    x, offsets = x.contiguous(), offsets.contiguous()
    out = torch.empty_like(x)
    _K.segment_softmax_forward(capsule(x), capsule(offsets), capsule(out), stream_of(x))
    return out


def segment_softmax_backward(out: Tensor, grad: Tensor, offsets: Tensor) -> Tensor:
    grad = grad.contiguous()
    gx = torch.empty_like(out)
    _K.segment_softmax_backward(capsule(out), capsule(grad), capsule(offsets), capsule(gx),
                                stream_of(out))
    return gx


def check_mm(fn: str, a: Tensor, b: Tensor) -> None:
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, torch.Tensor):
            raise nwerr.TypeError(f"{fn}: {name} must be a torch.Tensor, got {type(t).__name__}")
    if a.dim() != 2:
        raise nwerr.ValueError(f"{fn}: a must be 2-D (rows, in_features), got shape {tuple(a.shape)}")
    if b.dim() != 3:
        raise nwerr.ValueError(f"{fn}: b must be 3-D (num_types, in_features, out_features), got shape "
                               f"{tuple(b.shape)}")
    if a.shape[1] != b.shape[1]:
        raise nwerr.ValueError(f"{fn}: a has {a.shape[1]} features per row but b expects {b.shape[1]}")
    if a.dtype != b.dtype:
        raise nwerr.TypeError(f"{fn}: a and b must have the same dtype, got {a.dtype} and {b.dtype}")
    if a.dtype not in _MM_FLOATS:
        raise nwerr.TypeError(f"{fn}: a must be float32, float64, float16 or bfloat16, got {a.dtype}")


def gather_mm(a: Tensor, b: Tensor, idx_a: Optional[Tensor], idx_b: Tensor) -> Tensor:
    out = torch.empty((idx_b.numel(), b.shape[2]), dtype=a.dtype, device=a.device)
    _K.gather_mm(capsule(a.contiguous()), capsule(b.contiguous()),
                 capsule(None if idx_a is None else idx_a.contiguous()),
                 capsule(idx_b.contiguous()), capsule(out), stream_of(a))
    return out


def gather_mm_grad_b(a: Tensor, grad: Tensor, idx_a: Optional[Tensor], idx_b: Tensor,
                     num_types: int) -> Tensor:
    gb = torch.zeros((num_types, a.shape[1], grad.shape[1]), dtype=a.dtype, device=a.device)
    _K.gather_mm_grad_b(capsule(a.contiguous()), capsule(grad.contiguous()),
                        capsule(None if idx_a is None else idx_a.contiguous()),
                        capsule(idx_b.contiguous()), capsule(gb), stream_of(a))
    return gb


def segment_mm(a: Tensor, b: Tensor, seglen: Sequence[int]) -> Tensor:
    out = torch.empty((a.shape[0], b.shape[2]), dtype=a.dtype, device=a.device)
    _K.segment_mm(capsule(a.contiguous()), capsule(b.contiguous()), list(seglen), capsule(out),
                  stream_of(a))
    return out


def segment_mm_grad_b(a: Tensor, grad: Tensor, seglen: Sequence[int]) -> Tensor:
    gb = torch.empty((len(seglen), a.shape[1], grad.shape[1]), dtype=a.dtype, device=a.device)
    _K.segment_mm_grad_b(capsule(a.contiguous()), capsule(grad.contiguous()), list(seglen),
                         capsule(gb), stream_of(a))
    return gb
