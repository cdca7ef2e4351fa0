"""The graph kernels as PyTorch custom operators (``torch.library``), for ``torch.compile``.

Eager code on the pytorch backend runs the kernels through the ``torch.autograd.Function``\\ s of
:mod:`nodeweave.backend.torch_autograd`, which hand the C++ kernels the pybind ``RelationGraph``.
Dynamo cannot trace into that object or into the DLPack calls, so while ``torch.compile`` traces,
the same public functions call the operators registered here instead:

===================================  ===========================================================
``nodeweave::gspmm``                 ``(out, arg_lhs, arg_rhs)`` of gSpMM (the arg outputs are
                                     empty unless the reducer is max/min)
``nodeweave::gsddmm``                per-edge ``op(lhs[target_l], rhs[target_r])``
``nodeweave::edge_softmax``          softmax of edge scores over each node's in- or out-edges
``nodeweave::edge_softmax_backward`` its fused first-order backward kernel
===================================  ===========================================================

**Graph structure is an operator input.** Every operator takes the relation as tensors — its
COO ``src`` and ``dst`` ids in edge-id order — plus the node counts (:class:`RelationTensors`),
so the operators are pure functions of their inputs that fake tensors and AOTAutograd understand.
The reversed graph, which the backward passes walk, is the same two tensors swapped. The C++
kernels still need a ``RelationGraph`` (with its cached CSR/CSC): the kernel looks it up by the
tensors' memory in a registry filled when :func:`structure` made them, and builds one from the
tensors only for tensors it has never seen (then caches it while the tensors live).

Under ``torch.compile`` the structure is still an input. :func:`structure` reads it from a
property of the ``RelationGraph`` whose getter is implemented in C (see :class:`_PerRelation`):
Dynamo calls such a getter on the real object while it traces, so the id tensors become inputs of
the compiled graph, guarded by their shape and dtype like any input tensor. A compiled model then
runs on the next graph — the next mini-batch's block — without tracing again. A graph of other
sizes recompiles with those sizes dynamic (Dynamo's automatic dynamic shapes), and later graphs of
any size reuse that program.

**One shape rule, one gradient.** The fake kernels allocate through the same functions as the
real launchers (:func:`torch_kernels.spmm_outputs` ...), and the registered backward formulas are
the very functions the eager ``autograd.Function``\\ s call (:func:`torch_autograd.spmm_backward`
...). Those call the public differentiable kernels again, which for a :class:`RelationTensors`
graph are these operators, so the backward is traceable and higher orders work.

>>> import torch, nodeweave as nw
>>> from nodeweave.backend import torch_library as TL
>>> rel = nw.graph(([0, 1, 2], [1, 2, 2]), num_nodes=3)._rels[("_N", "_E", "_N")]
>>> g = TL.structure(rel)
>>> g.num_src, g.num_dst, g.src.tolist(), g.dst.tolist()
(3, 3, [0, 1, 2], [1, 2, 2])
>>> out, _, _ = torch.ops.nodeweave.gspmm(g.src, g.dst, g.num_src, g.num_dst, "copy_lhs", "sum",
...                                       torch.tensor([[1.0], [2.0], [4.0]]), None)
>>> out.tolist()
[[0.0], [1.0], [6.0]]
"""

from __future__ import annotations

import weakref
from typing import Dict, NamedTuple, Optional, Tuple

import numpy as np
import torch

from nodeweave.backend import torch_autograd as TA
from nodeweave.backend import torch_kernels as K
from nodeweave import errors as nwerr

Tensor = torch.Tensor

__all__ = ["RelationTensors", "structure", "has_zero_in_degree", "uses_ops", "is_compiling", "gspmm",
           "gsddmm", "edge_softmax", "edge_softmax_backward", "OPS", "HAS_CUSTOM_OPS"]

# Every operator this module registers (the tests run torch.library.opcheck on each).
OPS = ("gspmm", "gsddmm", "edge_softmax", "edge_softmax_backward")

#: Whether this torch has ``torch.library.custom_op`` (torch 2.4 and later). Without it the
#: operators are not registered: eager code runs as it does anyway (through the
#: ``autograd.Function``\ s), but ``torch.compile`` over the graph kernels is not supported (older
#: Dynamo cannot trace the pybind graph objects). Calling an operator then raises, naming the torch
#: version it needs.
HAS_CUSTOM_OPS = hasattr(torch.library, "custom_op")


def is_compiling() -> bool:
    """Whether ``torch.compile`` is tracing through the operators (never on a torch without
    them)."""
    return HAS_CUSTOM_OPS and torch.compiler.is_compiling()


# ------------------------------------------------------------------------------- the structure
class RelationTensors(NamedTuple):
    """One relation's structure as tensors: COO ``src``/``dst`` ids in edge-id order (int32 or
    int64, on the relation's device) and the node counts. It stands in for a ``RelationGraph``
    wherever the gradient rules of :mod:`torch_autograd` take a graph.

    >>> import torch
    >>> g = RelationTensors(torch.tensor([0, 0, 1]), torch.tensor([1, 2, 2]), 2, 3)
    >>> g.num_edges, g.reverse_for_kernels().src.tolist(), g.in_degrees().tolist()
    (3, [1, 2, 2], [0, 1, 2])
    """

    src: Tensor
    dst: Tensor
    num_src: int
    num_dst: int

    @property
    def num_edges(self) -> int:
        return self.src.shape[0]

    def reverse_for_kernels(self) -> "RelationTensors":
        """The reversed relation (edges dst -> src, same edge ids): the tensors swapped."""
        return RelationTensors(self.dst, self.src, self.num_dst, self.num_src)

    def in_degrees(self) -> Tensor:
        """In-degree of every destination node (int64). A scatter rather than ``bincount``, whose
        output size depends on the data, so fake tensors know the shape."""
        ones = torch.ones(self.dst.shape, dtype=torch.int64, device=self.dst.device)
        zeros = torch.zeros(self.num_dst, dtype=torch.int64, device=self.dst.device)
        return zeros.index_add(0, self.dst.to(torch.int64), ones)


def uses_ops(graph) -> bool:
    """Whether kernels on ``graph`` go through the custom operators: for a
    :class:`RelationTensors`, and for anything while ``torch.compile`` traces."""
    return isinstance(graph, RelationTensors) or is_compiling()


def structure(graph) -> RelationTensors:
    """The :class:`RelationTensors` of a ``RelationGraph`` (made once per relation and cached
    while it lives); a :class:`RelationTensors` is returned as it is."""
    if isinstance(graph, RelationTensors):
        return graph
    return graph._torch_structure


def has_zero_in_degree(rel) -> bool:
    """Whether some destination node of the ``RelationGraph`` has no in-edge (cached per
    relation; a plain bool, so a compiled model guards on it rather than reading the degrees)."""
    return rel._torch_zero_in_degree


class _PerRelation(dict):
    """A read-only attribute of every ``RelationGraph``, computed once per relation.

    Why a dict: Dynamo cannot call into the pybind object, but it reads a property whose getter is
    implemented in C (as pybind's own properties are) by calling it on the real object while it
    traces, and then treats the result like any attribute of an input: tensors in it become
    inputs of the compiled graph, guarded by shape and dtype, and Python values get equality
    guards. The getter here is this dict's C ``__getitem__``, which never finds a relation (none
    is stored, so nothing keeps one alive) and so calls :meth:`__missing__`, which looks the value
    up by ``id`` — removed when the relation dies, before its id can be reused.

    So a compiled model reads the structure of whatever graph it is called with, and runs on the
    next graph without tracing again while the sizes (or, after one recompile, only the dynamic
    sizes) stay the same: the graph structure is an input of the compiled program.
    """

    def __init__(self, compute) -> None:
        super().__init__()
        self._compute, self._by_id = compute, {}

    def __missing__(self, rel):
        key = id(rel)
        value = self._by_id.get(key)
        if value is None:
            value = self._by_id[key] = self._compute(rel)
            weakref.finalize(rel, self._by_id.pop, key, None)
        return value


def _install(name: str, compute, doc: str) -> None:
    from nodeweave._C import RelationGraph

    setattr(RelationGraph, name, property(_PerRelation(compute).__getitem__, doc=doc))


def _make_structure(rel) -> RelationTensors:
    host = rel if rel.device == "cpu" else rel.to("cpu")
    if "coo" in host.allowed_formats:
        src, dst = host.coo()
    else:  # a relation restricted to CSR or CSC: put the compressed entries back in edge order
        fmt = "csc" if "csc" in host.allowed_formats else "csr"
        indptr, indices, eids = host.csc() if fmt == "csc" else host.csr()
        rows = np.repeat(np.arange(len(indptr) - 1, dtype=indices.dtype), np.diff(indptr))
        a, b = np.empty_like(indices), np.empty_like(indices)
        a[eids], b[eids] = rows, indices
        src, dst = (b, a) if fmt == "csc" else (a, b)
    # Copies: the NumPy views are read-only C++ storage, and torch should own what it holds.
    src_t = torch.from_numpy(np.array(src, copy=True)).to(rel.device)
    dst_t = torch.from_numpy(np.array(dst, copy=True)).to(rel.device)
    _register(src_t, dst_t, rel.num_src, rel.num_dst, rel, own=False)
    return RelationTensors(src_t, dst_t, rel.num_src, rel.num_dst)


_install("_torch_structure", _make_structure,
         "The relation's RelationTensors (nodeweave.backend.torch_library), made on first use.")
_install("_torch_zero_in_degree", lambda rel: bool((rel.in_degrees() == 0).any()),
         "Whether a destination node has no in-edge (nodeweave.backend.torch_library).")


# ------------------------------------------------------- tensors -> RelationGraph, for the kernels
class _Entry:
    """A relation the kernels run on, for the structure tensors it was registered with. The
    tensors are held weakly (the entry goes when ``src`` dies, so its memory cannot be reused
    while the entry exists) and their version counters are checked, so writing into them in place
    is noticed. A relation some graph owns is held weakly too; one made here, strongly."""

    __slots__ = ("src", "dst", "versions", "rel", "own")

    def __init__(self, src: Tensor, dst: Tensor, rel, own: bool) -> None:
        self.src, self.dst = weakref.ref(src), weakref.ref(dst)
        self.versions = (src._version, dst._version)
        self.rel, self.own = (rel if own else weakref.ref(rel)), own

    def live(self):
        src, dst = self.src(), self.dst()
        if src is None or dst is None or (src._version, dst._version) != self.versions:
            return None
        return self.rel if self.own else self.rel()


_RELATIONS: Dict[tuple, _Entry] = {}


def _key(src: Tensor, dst: Tensor, num_src: int, num_dst: int) -> tuple:
    return (src.device, src.dtype, src.data_ptr(), dst.data_ptr(), tuple(src.shape),
            tuple(dst.shape), src.stride(), dst.stride(), int(num_src), int(num_dst))


def _register(src: Tensor, dst: Tensor, num_src: int, num_dst: int, rel, own: bool) -> None:
    key = _key(src, dst, num_src, num_dst)
    _RELATIONS[key] = _Entry(src, dst, rel, own)
    weakref.finalize(src, _RELATIONS.pop, key, None)


def _relation(src: Tensor, dst: Tensor, num_src: int, num_dst: int):
    """The ``RelationGraph`` the kernels run on for structure tensors: the registered one, the
    reverse of a registered one, or one built from the tensors (then registered)."""
    entry = _RELATIONS.get(_key(src, dst, num_src, num_dst))
    rel = entry.live() if entry is not None else None
    if rel is not None:
        return rel
    entry = _RELATIONS.get(_key(dst, src, num_dst, num_src))
    fwd = entry.live() if entry is not None else None
    rel = fwd.reverse_for_kernels() if fwd is not None else _build(src, dst, num_src, num_dst)
    _register(src, dst, num_src, num_dst, rel, own=True)
    return rel


def _build(src: Tensor, dst: Tensor, num_src: int, num_dst: int):
    from nodeweave._C import RelationGraph

    for name, t in (("src", src), ("dst", dst)):
        if t.dim() != 1 or t.dtype not in (torch.int32, torch.int64):
            raise nwerr.TypeError(f"graph structure: {name} must be a 1-D int32 or int64 tensor, "
                                  f"got {t.dtype} of shape {tuple(t.shape)}")
    if src.dtype != dst.dtype or src.device != dst.device:
        raise nwerr.TypeError(f"graph structure: src and dst must share dtype and device, got "
                              f"{src.dtype} on {src.device} and {dst.dtype} on {dst.device}")
    idtype = str(src.dtype).replace("torch.", "")
    rel = RelationGraph.from_coo(int(num_src), int(num_dst), src.cpu().numpy(), dst.cpu().numpy(),
                                 idtype)  # checks the lengths and the id ranges
    return rel if src.device.type == "cpu" else rel.to(str(src.device))


def _or_empty(t: Optional[Tensor], like: Tensor) -> Tensor:
    """A custom operator returns a fixed list of tensors: an absent arg output is an empty one."""
    return t if t is not None else torch.empty((0,), dtype=torch.int64, device=like.device)


class _Unregistered:
    """What an operator is on a torch without ``torch.library.custom_op``: its fake kernel and
    gradient are not registered, and calling it (a :class:`RelationTensors` graph handed to a
    kernel) says which torch it needs."""

    def __init__(self, name: str) -> None:
        self.name = name

    def register_fake(self, fn):
        return fn

    def register_autograd(self, *args, **kwargs) -> None:
        pass

    def __call__(self, *args, **kwargs):
        raise nwerr.RuntimeError(
            f"{self.name}: graph structure given as tensors (RelationTensors) runs through "
            f"torch.library custom operators, which need torch >= 2.4; this is torch "
            f"{torch.__version__}. Pass the graph itself (eager kernels work on any torch >= 2.0)")


def _custom_op(name: str, schema: str):
    """``torch.library.custom_op(name, schema=schema)``, or on an older torch a decorator that
    makes the function an :class:`_Unregistered` operator."""
    if HAS_CUSTOM_OPS:
        return torch.library.custom_op(name, mutates_args=(), schema=schema)
    return lambda fn: _Unregistered(name)


class _UnregisteredNamespace:
    def __getattr__(self, op: str) -> _Unregistered:
        return _Unregistered(f"nodeweave::{op}")


# The registered operators (torch.ops.nodeweave), which the public functions below call.
_OPS = torch.ops.nodeweave if HAS_CUSTOM_OPS else _UnregisteredNamespace()


# ------------------------------------------------------------------------------------------ gspmm
@_custom_op("nodeweave::gspmm", schema=(
    "(Tensor src, Tensor dst, SymInt num_src, SymInt num_dst, str op, str reduce_op, Tensor? lhs, "
    "Tensor? rhs) -> (Tensor, Tensor, Tensor)"))
def _gspmm(src: Tensor, dst: Tensor, num_src: int, num_dst: int, op: str, reduce_op: str,
           lhs: Optional[Tensor], rhs: Optional[Tensor]) -> Tuple[Tensor, Tensor, Tensor]:
    out, arg_l, arg_r = K.spmm(_relation(src, dst, num_src, num_dst), op, reduce_op, lhs, rhs)
    return out, _or_empty(arg_l, out), _or_empty(arg_r, out)


@_gspmm.register_fake
def _(src, dst, num_src, num_dst, op, reduce_op, lhs, rhs):
    _, _, out, arg_l, arg_r = K.spmm_outputs(num_dst, op, reduce_op, lhs, rhs)
    return out, _or_empty(arg_l, out), _or_empty(arg_r, out)


def _padded(shape, rank: int) -> Tuple[int, ...]:
    """``shape`` with its feature dims right-aligned to ``rank`` dims (as K.align pads)."""
    return (shape[0],) + (1,) * (rank - len(shape)) + tuple(shape[1:])


def _gspmm_setup(ctx, inputs, output) -> None:
    src, dst, num_src, num_dst, op, reduce_op, lhs, rhs = inputs
    _, arg_l, arg_r = output
    need_l, need_r = op != "copy_rhs", op != "copy_lhs"
    lhs, rhs = lhs if need_l else None, rhs if need_r else None
    ctx.shapes = (None if lhs is None else lhs.shape, None if rhs is None else rhs.shape)
    keep = TA.spmm_keeps_operands(op, reduce_op)
    # The operands as given: aligned here they would be views without autograd history, and a
    # second derivative would not reach the inputs through them.
    ctx.save_for_backward(src, dst, lhs if keep else None, rhs if keep else None, arg_l, arg_r)
    rank = max(t.dim() for t in (lhs, rhs) if t is not None)
    ctx.graph_meta = (num_src, num_dst, op, reduce_op, rank)


def _gspmm_backward(ctx, grad, _grad_arg_l, _grad_arg_r):
    src, dst, lhs, rhs, arg_l, arg_r = ctx.saved_tensors
    num_src, num_dst, op, reduce_op, rank = ctx.graph_meta
    lshape, rshape = ctx.shapes
    lhs, rhs = K.align("gspmm", lhs, rhs)
    gl, gr = TA.spmm_backward(
        RelationTensors(src, dst, num_src, num_dst), op, reduce_op, grad, lhs, rhs,
        arg_l if arg_l.numel() else None, arg_r if arg_r.numel() else None,
        ctx.needs_input_grad[6], ctx.needs_input_grad[7],
        None if lshape is None else _padded(lshape, rank),
        None if rshape is None else _padded(rshape, rank))
    return (None,) * 6 + (None if gl is None else gl.reshape(lshape),
                          None if gr is None else gr.reshape(rshape))


_gspmm.register_autograd(_gspmm_backward, setup_context=_gspmm_setup)


def gspmm(graph: RelationTensors, op: str, reduce_op: str, lhs: Optional[Tensor],
          rhs: Optional[Tensor]) -> Tensor:
    """gSpMM's result through ``nodeweave::gspmm`` (operands as :func:`torch_kernels.spmm`
    takes them: validated by the operator, aligned by the caller)."""
    return _OPS.gspmm(graph.src, graph.dst, graph.num_src, graph.num_dst, op,
                                     reduce_op, lhs, rhs)[0]


# ----------------------------------------------------------------------------------------- gsddmm
@_custom_op("nodeweave::gsddmm", schema=(
    "(Tensor src, Tensor dst, SymInt num_src, SymInt num_dst, str op, Tensor? lhs, Tensor? rhs, "
    "str lhs_target, str rhs_target) -> Tensor"))
def _gsddmm(src: Tensor, dst: Tensor, num_src: int, num_dst: int, op: str, lhs: Optional[Tensor],
            rhs: Optional[Tensor], lhs_target: str, rhs_target: str) -> Tensor:
    return K.sddmm(_relation(src, dst, num_src, num_dst), op, lhs, rhs, lhs_target, rhs_target)


@_gsddmm.register_fake
def _(src, dst, num_src, num_dst, op, lhs, rhs, lhs_target, rhs_target):
    return K.sddmm_outputs(src.shape[0], op, lhs, rhs)[2]


def _gsddmm_setup(ctx, inputs, output) -> None:
    src, dst, num_src, num_dst, op, lhs, rhs, lt, rt = inputs
    need_l, need_r = op != "copy_rhs", op != "copy_lhs"
    lhs, rhs = lhs if need_l else None, rhs if need_r else None
    ctx.shapes = (None if lhs is None else lhs.shape, None if rhs is None else rhs.shape)
    keep_l, keep_r, keep_out = TA.sddmm_keeps(op)
    ctx.save_for_backward(src, dst, lhs if keep_l else None, rhs if keep_r else None,
                          output if keep_out else None)  # as given: see _gspmm_setup
    rank = max(t.dim() for t in (lhs, rhs) if t is not None)
    ctx.graph_meta = (num_src, num_dst, op, lt, rt, rank)


def _gsddmm_backward(ctx, grad):
    src, dst, lhs, rhs, out = ctx.saved_tensors
    num_src, num_dst, op, lt, rt, rank = ctx.graph_meta
    lshape, rshape = ctx.shapes
    lhs, rhs = K.align("gsddmm", lhs, rhs)
    gl, gr = TA.sddmm_backward(
        RelationTensors(src, dst, num_src, num_dst), op, lt, rt, grad, lhs, rhs, out,
        ctx.needs_input_grad[5], ctx.needs_input_grad[6],
        None if lshape is None else _padded(lshape, rank),
        None if rshape is None else _padded(rshape, rank))
    return (None,) * 5 + (None if gl is None else gl.reshape(lshape),
                          None if gr is None else gr.reshape(rshape), None, None)


_gsddmm.register_autograd(_gsddmm_backward, setup_context=_gsddmm_setup)


def gsddmm(graph: RelationTensors, op: str, lhs: Optional[Tensor], rhs: Optional[Tensor],
           lhs_target: str, rhs_target: str) -> Tensor:
    """gSDDMM's result through ``nodeweave::gsddmm``."""
    return _OPS.gsddmm(graph.src, graph.dst, graph.num_src, graph.num_dst, op, lhs,
                                      rhs, lhs_target, rhs_target)


# ------------------------------------------------------------------------------------ edge softmax
@_custom_op("nodeweave::edge_softmax", schema=(
    "(Tensor src, Tensor dst, SymInt num_src, SymInt num_dst, Tensor score, bool by_dst) "
    "-> Tensor"))
def _edge_softmax(src: Tensor, dst: Tensor, num_src: int, num_dst: int, score: Tensor,
                  by_dst: bool) -> Tensor:
    return K.edge_softmax(_relation(src, dst, num_src, num_dst), score, by_dst)


@_edge_softmax.register_fake
def _(src, dst, num_src, num_dst, score, by_dst):
    return K.edge_softmax_outputs(score)[1]


def _edge_softmax_setup(ctx, inputs, output) -> None:
    src, dst, num_src, num_dst, _, by_dst = inputs
    ctx.save_for_backward(src, dst, output)
    ctx.graph_meta = (num_src, num_dst, by_dst)


def _edge_softmax_grad(ctx, grad):
    src, dst, out = ctx.saved_tensors
    num_src, num_dst, by_dst = ctx.graph_meta
    gs = TA.edge_softmax_backward(RelationTensors(src, dst, num_src, num_dst), out, grad, by_dst)
    return None, None, None, None, gs, None


_edge_softmax.register_autograd(_edge_softmax_grad, setup_context=_edge_softmax_setup)


def edge_softmax(graph: RelationTensors, score: Tensor, by_dst: bool) -> Tensor:
    """Edge softmax through ``nodeweave::edge_softmax``."""
    return _OPS.edge_softmax(graph.src, graph.dst, graph.num_src, graph.num_dst,
                                            score, by_dst)


# The fused first-order backward. It has no gradient of its own: the rule in torch_autograd takes
# it only when no graph of the backward is being recorded (create_graph differentiates the
# formula made of gspmm/gsddmm instead).
@_custom_op("nodeweave::edge_softmax_backward", schema=(
    "(Tensor src, Tensor dst, SymInt num_src, SymInt num_dst, Tensor out, Tensor grad, "
    "bool by_dst) -> Tensor"))
def _edge_softmax_backward(src: Tensor, dst: Tensor, num_src: int, num_dst: int, out: Tensor,
                           grad: Tensor, by_dst: bool) -> Tensor:
    return K.edge_softmax_backward(_relation(src, dst, num_src, num_dst), out, grad, by_dst)


@_edge_softmax_backward.register_fake
def _(src, dst, num_src, num_dst, out, grad, by_dst):
    return torch.empty_like(out)


def edge_softmax_backward(graph: RelationTensors, out: Tensor, grad: Tensor,
                          by_dst: bool) -> Tensor:
    """The score gradient of edge softmax through ``nodeweave::edge_softmax_backward``."""
    return _OPS.edge_softmax_backward(graph.src, graph.dst, graph.num_src,
                                                     graph.num_dst, out, grad, by_dst)
