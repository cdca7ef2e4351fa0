"""Lowering of user-defined edge functions to the fused kernels (PyTorch backend).

A DGL-style edge function reads endpoint features over every edge, ``edges.src['h']`` and
``edges.dst['h']``, and combines them: ``(edges.src['h'] * edges.dst['h']).sum(-1)`` is an
attention score, ``edges.src['h'] * edges.data['w']`` a weighted message. Run literally, each
read gathers an ``(E, d)`` copy of a node feature, the product writes another, and the backward
pass reads and writes them all again; the builtins ``u_dot_v`` / ``u_mul_e`` compute the same
values straight from the node features with one gSDDMM.

Here an endpoint read over all edges returns an :class:`EdgeOperand`: a ``torch.Tensor`` (a wrapper
subclass with the right shape, dtype and device, so ``isinstance``, ``.shape`` and ``.dtype`` work)
whose rows are not gathered yet. Only two patterns are rewritten, exactly:

- ``a ⊙ b`` for ``⊙`` in ``* + - /`` between two operands on different sides (source, destination,
  or any tensor with one row per edge, in edge-id order), both floating point of one dtype and
  with as many dimensions: one ``gsddmm(op)``, NumPy broadcasting over the feature dimensions as
  torch broadcasts them;
- ``(a * b).sum(-1)`` (or ``sum(dim=-1, keepdim=...)``, ``torch.sum``) of such a product:
  ``gsddmm('dot')``.

Anything else — another function, a scalar, indexing, a second use of a product — first gathers
the operand (once; the gathered tensor is kept) and runs the user's operation on it as written,
so results are those of the literal code up to floating-point summation order. The function's
returned tensors are gathered before they are stored. ``nodeweave.graph.edge_operands.ENABLED =
False`` turns the rewriting off (every read then gathers at once).

>>> import torch, nodeweave as nw
>>> _ = nw.set_backend("pytorch")
>>> g = nw.graph(([0, 1, 2], [1, 2, 0]))
>>> g.ndata["h"] = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
>>> seen = []
>>> def score(e):
...     seen.append(type(e.src["h"]).__name__)
...     return {"s": (e.src["h"] * e.dst["h"]).sum(-1)}      # runs as u_dot_v
>>> g.apply_edges(score)
>>> g.edata["s"].tolist(), seen, type(g.edata["s"]).__name__
([11.0, 39.0, 17.0], ['EdgeOperand'], 'Tensor')
>>> _ = nw.set_backend("native")
"""

from __future__ import annotations

import sys
from typing import Any

ENABLED = True

_ops: dict | None = None
_sums: tuple = ()
_metadata: tuple = ()


def _tables() -> None:
    """The torch functions the rewriting recognises (built on first use: torch is optional)."""
    global _ops, _sums, _metadata
    import torch

    T = torch.Tensor
    _ops = {T.mul: "mul", torch.mul: "mul", T.add: "add", torch.add: "add", T.sub: "sub", torch.sub: "sub",
            T.div: "div", torch.div: "div", T.true_divide: "div", torch.true_divide: "div"}
    _sums = (T.sum, torch.sum)
    # Answered from the wrapper's own metadata, without gathering.
    _metadata = (T.shape.__get__, T.dtype.__get__, T.device.__get__, T.ndim.__get__, T.dim, T.size,
                 T.requires_grad.__get__, T.is_floating_point, T.layout.__get__, T.numel, T.__len__,
                 T.is_sparse.__get__, T.is_cuda.__get__)


def operand(rel: Any, feature: Any, target: str) -> Any:
    """``feature`` (a node feature tensor) on every edge of ``rel`` from its source
    (``target='u'``) or destination (``'v'``): an :class:`EdgeOperand`, or None where the rewriting
    does not apply (not torch, not floating point, fewer than 2 dimensions, under ``torch.compile``)."""
    torch = sys.modules.get("torch")   # not imported: the feature is not a torch tensor (and the
    if not ENABLED or torch is None:     # native backend must not pay for importing it)
        return None
    if type(feature) is not torch.Tensor:
        return None
    if not feature.is_floating_point() or feature.dim() < 2:
        return None
    compiler = getattr(torch, "compiler", None)
    if compiler is not None and getattr(compiler, "is_compiling", lambda: False)():
        return None
    if _ops is None:
        _tables()
    return _class()._leaf(rel, feature, target)


def materialize(x: Any) -> Any:
    """``x`` as a plain tensor if it is an :class:`EdgeOperand`, else ``x``."""
    return x._value() if type(x) is EdgeOperand else x


def _make_class():
    import torch
    from torch.utils._pytree import tree_map

    class EdgeOperand(torch.Tensor):
        """An ``(E, ...)`` tensor defined by node features and the graph, computed on first use;
        see the module docstring."""

        @staticmethod
        def __new__(cls, shape, like, requires_grad):
            return torch.Tensor._make_wrapper_subclass(cls, shape, dtype=like.dtype, device=like.device,
                                                       requires_grad=requires_grad)

        @classmethod
        def _leaf(cls, rel, feature, target):
            out = cls((rel.num_edges,) + tuple(feature.shape[1:]), feature, feature.requires_grad)
            out._rel, out._op, out._args, out._computed = rel, "copy", ((feature, target),), None
            return out

        @classmethod
        def _binary(cls, rel, op, lhs, rhs, shape):
            like = lhs[0]
            out = cls(shape, like, lhs[0].requires_grad or rhs[0].requires_grad)
            out._rel, out._op, out._args, out._computed = rel, op, (lhs, rhs), None
            return out

        def _value(self):
            if self._computed is None:
                from nodeweave.ops import gsddmm

                if self._op == "copy":
                    (feature, target), = self._args
                    self._computed = gsddmm(self._rel, "copy_lhs", feature, None, target, "e")
                else:
                    (lhs, lt), (rhs, rt) = self._args
                    self._computed = gsddmm(self._rel, self._op, lhs, rhs, lt, rt)
            return self._computed

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func in _metadata:
                with torch._C.DisableTorchFunctionSubclass():
                    return func(*args, **kwargs)
            if func in _ops and not kwargs and len(args) == 2:
                fused = _fuse_binary(_ops[func], args[0], args[1])
                if fused is not None:
                    return fused
            if func in _sums and args and type(args[0]) is EdgeOperand:
                fused = _fuse_dot(args[0], args[1:], kwargs)
                if fused is not None:
                    return fused
            args, kwargs = tree_map(materialize, (args, kwargs))
            return func(*args, **kwargs)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            # Every use goes through __torch_function__ first and gathers there; reaching the
            # dispatcher means a path that bypasses it (then say so rather than compute garbage).
            from nodeweave import errors as nwerr

            raise nwerr.RuntimeError(f"nodeweave EdgeOperand reached torch's dispatcher in {func}; call "
                               "nodeweave.graph.edge_operands.materialize on it first")

        def __repr__(self):
            return f"EdgeOperand({self._op}, shape={tuple(self.shape)}):\n{self._value()!r}"

    def _side_of(x, rel):
        """``(tensor, target)`` of a binary operand, or None when it cannot be one."""
        if type(x) is EdgeOperand:   # a deferred read: (node feature, 'u' or 'v')
            return x._args[0] if x._rel is rel else None
        if type(x) is torch.Tensor and x.dim() >= 1 and x.shape[0] == rel.num_edges:
            return x, "e"
        return None

    def _fuse_binary(op, a, b):
        proxy = a if type(a) is EdgeOperand else b
        if type(proxy) is not EdgeOperand:
            return None
        rel = proxy._rel
        if (type(a) is EdgeOperand and a._op != "copy") or (type(b) is EdgeOperand and b._op != "copy"):
            return None  # a product used again: gather it (fusing further would recompute it)
        lhs, rhs = _side_of(a, rel), _side_of(b, rel)
        if lhs is None or rhs is None or lhs[1] == rhs[1]:
            return None
        (x, _), (y, _) = lhs, rhs
        if x.dtype != y.dtype or x.device != y.device or x.dim() != y.dim() or not x.is_floating_point():
            return None
        try:
            feat = torch.broadcast_shapes(tuple(x.shape[1:]), tuple(y.shape[1:]))
        except RuntimeError:
            return None
        return EdgeOperand._binary(rel, op, lhs, rhs, (rel.num_edges,) + tuple(feat))

    def _fuse_dot(p, rest, kwargs):
        if p._op != "mul" or p._computed is not None:
            return None
        dim = rest[0] if rest else kwargs.get("dim")
        keepdim = rest[1] if len(rest) > 1 else kwargs.get("keepdim", False)
        if len(rest) > 2 or set(kwargs) - {"dim", "keepdim"}:
            return None
        if isinstance(dim, (tuple, list)) and len(dim) == 1:
            dim = dim[0]
        if not isinstance(dim, int) or dim not in (-1, p.dim() - 1):
            return None
        (x, lt), (y, rt) = p._args
        if x.shape[-1] != y.shape[-1]:
            return None  # dot does not broadcast its last dimension
        from nodeweave.ops import gsddmm

        out = gsddmm(p._rel, "dot", x, y, lt, rt)
        return out if keepdim else out.squeeze(-1)

    return EdgeOperand


EdgeOperand: Any = None   # the class, made on first use (torch is imported then)


def _class() -> Any:
    global EdgeOperand
    if EdgeOperand is None:
        EdgeOperand = _make_class()
    return EdgeOperand
