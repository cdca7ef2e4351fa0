"""Message passing on a graph: ``apply_nodes``, ``apply_edges``, ``update_all``,
``send_and_recv``, ``pull`` and ``multi_update_all``. Mixed into
:class:`nodeweave.graph.HeteroGraph`.

A builtin message with a builtin reducer (``nodeweave.function``) runs as one fused gSpMM: no
per-edge message tensor is ever made. A message touching the destination (``u_add_v``) is computed
per edge with gSDDMM first. User-defined functions see edge batches (``edges.src``, ``edges.dst``,
``edges.data``) and node batches whose ``mailbox`` has shape (nodes, in-degree, ...), one batch
per distinct in-degree (degree bucketing). Nodes a user-defined reducer never sees (no in-edges)
get what the feature's initializer makes (zeros unless ``g.set_n_initializer`` chose another).

With ``apply_node_func``, what the apply function returns is what is written (as in DGL): the
reduced fields it does not return are not kept.

On a graph with several edge types, ``update_all`` and ``apply_edges`` without ``etype=`` run builtin
functions over every edge type: ``apply_edges`` writes each type's edges, ``update_all`` reduces at
each node the messages of all edge types arriving there with the one reducer (sum, max or min over
all of them; see :mod:`nodeweave.graph.merged_relation`). ``multi_update_all`` reduces per edge type
first and then across types.

>>> import nodeweave as nw, nodeweave.core as nc, nodeweave.function as fn
>>> g = nw.graph(([0, 1, 2], [1, 2, 2]), num_nodes=3)
>>> g.ndata["h"] = nc.tensor([[1.0], [2.0], [4.0]])
>>> g.update_all(fn.copy_u("h", "m"), fn.sum("m", "h_sum"))
>>> g.ndata["h_sum"].tolist()
[[0.0], [1.0], [6.0]]
>>> g.update_all(lambda e: {"m": e.src["h"] * 2}, lambda n: {"h2": n.mailbox["m"].sum(1)})
>>> g.ndata["h2"].tolist()
[[0.0], [2.0], [12.0]]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Dict, Optional, Union

import numpy as np

from nodeweave import backend
from nodeweave.function import BuiltinMessage, BuiltinReduce
from nodeweave.graph.degree_buckets import DegreeBuckets
from nodeweave.graph import edge_operands
from nodeweave import errors as nwerr

MessageFunc = Union[BuiltinMessage, Callable[["EdgeBatch"], Dict[str, Any]]]
ReduceFunc = Union[BuiltinReduce, Callable[["NodeBatch"], Dict[str, Any]]]


class EdgeBatch:
    """The edges a user-defined message/edge function sees.

    ``src``/``dst`` map field names to the features of each edge's endpoints, ``data`` to the
    edge features; rows follow the batch's edge order.
    """

    def __init__(self, src: dict, dst: dict, data: dict, uv_eid, canonical_etype=None) -> None:
        self.src, self.dst, self.data = src, dst, data
        self._uv_eid = uv_eid
        self.canonical_etype = canonical_etype
        """The ``(src_type, etype, dst_type)`` of the edges."""

    def edges(self):
        """(src ids, dst ids, edge ids) of the batch."""
        return self._uv_eid

    def batch_size(self) -> int:
        return len(self._uv_eid[2])

    def __len__(self) -> int:
        return self.batch_size()


class NodeBatch:
    """The nodes a user-defined reduce/apply function sees: ``data`` and ``mailbox``, and their
    node type ``ntype``."""

    def __init__(self, data: dict, mailbox: Optional[dict], nodes, ntype: Optional[str] = None) -> None:
        self.data, self._nodes = data, nodes
        self.mailbox = mailbox if mailbox is not None else {}
        self.ntype = ntype

    def nodes(self):
        return self._nodes

    def batch_size(self) -> int:
        return len(self._nodes)

    def __len__(self) -> int:
        return self.batch_size()


class _Ids:
    """One NumPy id array as index tensors, built once per (backend, device) that the columns it
    indexes need: a frame may hold tensors of either backend."""

    def __init__(self, ids: np.ndarray) -> None:
        self._ids = ids.astype(np.int64)
        self._tensors: Dict[tuple, Any] = {}

    def on(self, b, device: str):
        key = (b.name, device)
        if key not in self._tensors:
            self._tensors[key] = b.int_tensor(self._ids, device)
        return self._tensors[key]


class _LazyRows(Mapping):
    """``frame``'s columns restricted to rows ``ids``, each gathered when first read: a user
    function reads one or two fields of a frame that may hold many (as DGL's lazy frames do).
    ``gather(column)``, when given, gathers instead of ``index_select`` where it returns a tensor
    (None: fall back)."""

    def __init__(self, columns: Dict[str, Any], ids: _Ids,
                 gather: Optional[Callable[[Any], Any]] = None) -> None:
        self._columns, self._ids, self._gather, self._rows = columns, ids, gather, {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._rows:
            v = self._columns[key]
            rows = self._gather(v) if self._gather is not None else None
            if rows is None:
                b = backend.of(v)
                rows = b.index_select(v, self._ids.on(b, b.device_str(v)))
            self._rows[key] = rows
        return self._rows[key]

    def __iter__(self):
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)

    def __repr__(self) -> str:
        return f"<rows of {sorted(self._columns)}>"


def _lazy_rows(frame, rows_np):
    """``frame``'s columns restricted to rows (all when rows_np is None): a dict, or for a row
    subset a mapping that gathers a column when it is read."""
    if rows_np is None:
        return dict(frame.items())
    return _LazyRows(dict(frame.items()), _Ids(rows_np))


def _copy_to_edges(rel, v, target: str):
    """``v``'s row at each edge's source (``target`` 'u') or destination ('v'), in edge-id order,
    by gSDDMM; None where that kernel does not take ``v`` (integer or boolean columns, 1-D)."""
    from nodeweave.ops import gsddmm

    b = backend.of(v)
    if b is None or b.dtype_name(v) not in ("float32", "float64") or len(b.shape(v)) < 2:
        return None
    return gsddmm(rel, "copy_lhs", v, None, target, "e")


def _endpoint_on_edges(rel, v, target: str):
    """``v`` on every edge: a deferred :mod:`edge_operands` read where it applies, else gathered."""
    deferred = edge_operands.operand(rel, v, target)
    return deferred if deferred is not None else _copy_to_edges(rel, v, target)


def _cat_rows(parts: list):
    """``parts`` concatenated along the rows (the tensor itself when there is one)."""
    return parts[0] if len(parts) == 1 else backend.of(parts[0]).cat(parts, 0)


def _check_funcs(message_func, reduce_func) -> None:
    if not (isinstance(message_func, BuiltinMessage) or callable(message_func)):
        raise nwerr.TypeError("message_func must be a builtin (nodeweave.function) or a function of an "
                              f"edge batch, got {type(message_func).__name__}")
    if not (isinstance(reduce_func, BuiltinReduce) or callable(reduce_func)):
        raise nwerr.TypeError("reduce_func must be a builtin (nodeweave.function) or a function of a "
                              f"node batch, got {type(reduce_func).__name__}")
    if (isinstance(message_func, BuiltinMessage) and isinstance(reduce_func, BuiltinReduce)
            and reduce_func.msg_field != message_func.out_field):
        raise nwerr.KeyError(f"reduce function reads message {reduce_func.msg_field!r} but the message "
                             f"function writes {message_func.out_field!r}")


def _cross_reduce(parts: list, reducer: str, num_rows: int, device: str):
    """Combines the results of several edge types at one node type (``multi_update_all``).

    ``parts`` holds ``(tensor, no_mail)`` pairs, ``no_mail`` a bool array of the nodes the edge type
    sent nothing to when its reducer was a builtin max or min (None otherwise). Those rows stand
    for "no value", so a cross-type max or min skips them, and a node no edge type reached gets 0.
    The other reducers combine the rows as they are (0 for such nodes, as every reducer gives).
    """
    tensors = [t for t, _ in parts]
    b = backend.of(tensors[0])
    if reducer not in ("max", "min") or not any(nm is not None and nm.any() for _, nm in parts):
        return b.cross_reduce(tensors, reducer)
    dtype = b.dtype_name(tensors[0])
    if dtype.startswith(("float", "bfloat")):
        fill = float("-inf") if reducer == "max" else float("inf")
    else:
        info = np.iinfo(np.dtype(dtype))
        fill = int(info.min if reducer == "max" else info.max)
    covered = np.zeros(num_rows, bool)
    filled = []
    for t, no_mail in parts:
        if no_mail is None:
            covered[:] = True
        else:
            covered |= ~no_mail
            rows = np.flatnonzero(no_mail)
            if rows.size:
                shape = (rows.size,) + tuple(b.shape(t)[1:])
                t = b.index_copy(t, b.int_tensor(rows, device), b.zeros(shape, b.dtype_of(t), device) + fill)
        filled.append(t)
    out = b.cross_reduce(filled, reducer)
    empty = np.flatnonzero(~covered)
    if empty.size:
        shape = (empty.size,) + tuple(b.shape(out)[1:])
        out = b.index_copy(out, b.int_tensor(empty, device), b.zeros(shape, b.dtype_of(out), device))
    return out


class MessagePassing:
    """Message-passing methods of a graph (see docs/message_passing.md)."""

    # ---------------------------------------------------------------- helpers
    def _resolve_etype(self, etype=None):
        """Canonical edge type for ``etype`` (None: the only one; a string: a unique name)."""
        if etype is None:
            if len(self._etypes) != 1:
                raise nwerr.ValueError("this graph has several edge types "
                                       f"{self._etypes}; pass etype=")
            return self._etypes[0]
        if isinstance(etype, tuple):
            if etype not in self._rels:
                raise nwerr.KeyError(f"unknown edge type {etype}; the graph has {self._etypes}")
            return etype
        matches = [c for c in self._etypes if c[1] == etype]
        if len(matches) != 1:
            raise nwerr.KeyError(f"edge type {etype!r} " + ("is ambiguous" if matches else "not found")
                                 + f"; the graph has {self._etypes}")
        return matches[0]

    def _node_operand(self, side: str, ntype: str, field: str):
        """Feature ``field`` of the ``side`` ('src' or 'dst') nodes of ``ntype``."""
        frame = self._node_frames[self._node_key(side, ntype)]
        if field not in frame:
            what = (("srcdata" if side == "src" else "dstdata") if len(self._ntypes) == 1
                    else f"nodes[{ntype!r}].data")
            raise nwerr.KeyError(f"{what} has no field {field!r} (have {sorted(frame.keys())})")
        return frame[field]

    def _edge_operand(self, cet, field: str):
        frame = self._edge_frames[cet]
        if field not in frame:
            what = "edata" if len(self._etypes) == 1 else f"edges[{cet!r}].data"
            raise nwerr.KeyError(f"{what} has no field {field!r} (have {sorted(frame.keys())})")
        return frame[field]

    def _operand(self, target: str, field: str, cet):
        """The tensor a builtin reads: source/destination node data or edge data."""
        if target == "e":
            return self._edge_operand(cet, field)
        return self._node_operand("src" if target == "u" else "dst",
                                  cet[0] if target == "u" else cet[2], field)

    def _edge_selection(self, edges, cet, fn: str) -> np.ndarray:
        """Edge ids from ``edges``: ids (int, sequence, tensor), a bool mask, or a ``(u, v)`` tuple
        of endpoints (the edges ``u[i] -> v[i]``, as DGL reads a tuple)."""
        if isinstance(edges, tuple):
            if len(edges) != 2:
                raise nwerr.ValueError(f"{fn}: a tuple of edges must be (u, v) endpoint ids, got a tuple of "
                                       f"{len(edges)}")
            found = self.edge_ids(edges[0], edges[1], etype=cet)
            return self._id_array(found)
        eids = self._id_array(edges)
        n = self._rels[cet].num_edges
        if eids.size and (eids.min() < 0 or eids.max() >= n):
            raise nwerr.IndexError(f"{fn}: edge ids must be in [0, {n}), got {eids.min()}..{eids.max()}")
        return eids

    def _edge_batch(self, cet, eids: Optional[np.ndarray]):
        b = backend.current()
        rel = self._rels[cet]
        src, dst = rel.coo()
        if eids is not None:
            src, dst = src[eids], dst[eids]
        all_e = np.arange(rel.num_edges) if eids is None else eids

        def endpoint_rows(side: str, target: str):
            columns = dict(self._node_frames[self._node_key(side, cet[0] if side == "src" else cet[2])].items())
            # Over all edges, float features are gathered by the gSDDMM copy kernel: its gradient
            # is a gSpMM (a sum per node in CSR order), not a scatter of every edge's row. On torch
            # the read is deferred (edge_operands) so that a product with the other side, or its
            # sum, runs as one fused gSDDMM.
            gather = None if eids is not None else (lambda v: _endpoint_on_edges(rel, v, target))
            return _LazyRows(columns, _Ids(src if side == "src" else dst), gather)

        return EdgeBatch(endpoint_rows("src", "u"), endpoint_rows("dst", "v"),
                         _lazy_rows(self._edge_frames[cet], eids),
                         (b.int_tensor(src.astype(np.int64), self._device),
                          b.int_tensor(dst.astype(np.int64), self._device),
                          b.int_tensor(all_e.astype(np.int64), self._device)), cet)

    def _builtin_edges(self, func: BuiltinMessage, rel, cet):
        """Per-edge result of a builtin message (one gSDDMM, or the edge field itself)."""
        from nodeweave.ops import gsddmm

        lhs = self._operand(func.lhs_target, func.lhs_field, cet)
        if func.rhs_target is None:
            if func.lhs_target == "e":
                return lhs
            return gsddmm(rel, "copy_lhs", lhs, None, func.lhs_target, "e")
        rhs = self._operand(func.rhs_target, func.rhs_field, cet)
        return gsddmm(rel, func.op, lhs, rhs, func.lhs_target, func.rhs_target)

    def _messages(self, message_func: MessageFunc, rel, cet, eids) -> Dict[str, Any]:
        if isinstance(message_func, BuiltinMessage):
            out = {message_func.out_field: self._builtin_edges(message_func, rel, cet)}
            return out if eids is None else _lazy_rows(out, eids)
        out = message_func(self._edge_batch(cet, eids))
        if not isinstance(out, dict):
            raise nwerr.TypeError("a message function must return a dict of tensors, got "
                                  f"{type(out).__name__}")
        return {k: edge_operands.materialize(v) for k, v in out.items()}

    def _reduce(self, rel, cet, message_func: MessageFunc, reduce_func: ReduceFunc,
                eids: Optional[np.ndarray]):
        """Runs message + reduce over the edges of ``rel`` (all, or the subset ``eids``) and
        returns {field: (num_dst, ...) tensor}. Builtin pairs on u/e fuse into one gSpMM."""
        from nodeweave.ops import gspmm

        _check_funcs(message_func, reduce_func)
        if eids is not None:
            src, dst = rel.coo()
            sub = type(rel).from_coo(rel.num_src, rel.num_dst, src[eids], dst[eids], rel.idtype)
            rel_run = sub.to(self._device) if self._device != "cpu" else sub
        else:
            rel_run = rel
        if isinstance(reduce_func, BuiltinReduce) and isinstance(message_func, BuiltinMessage):
            m = message_func
            fusable = (m.op != "dot" and "v" not in (m.lhs_target, m.rhs_target)
                       and eids is None)
            if fusable:
                return {reduce_func.out_field: self._fused_spmm(m, reduce_func.name, rel, cet)}
        msgs = self._messages(message_func, rel, cet, eids)
        if isinstance(reduce_func, BuiltinReduce):
            if reduce_func.msg_field not in msgs:
                raise nwerr.KeyError(f"reduce function reads message {reduce_func.msg_field!r}; the "
                                     f"message function produced {sorted(msgs)}")
            return {reduce_func.out_field: gspmm(rel_run, "copy_rhs", reduce_func.name, None,
                                                 msgs[reduce_func.msg_field])}
        return self._bucketed_reduce(rel_run, cet, msgs, reduce_func)

    def _fused_spmm(self, m: BuiltinMessage, reduce_name: str, rel, cet):
        lhs = self._operand(m.lhs_target, m.lhs_field, cet)
        rhs = None if m.rhs_target is None else self._operand(m.rhs_target, m.rhs_field, cet)
        return self._spmm(m, reduce_name, rel, lhs, rhs)

    @staticmethod
    def _spmm(m: BuiltinMessage, reduce_name: str, rel, lhs, rhs):
        """One gSpMM for a builtin message on u/e operands ``lhs`` (and ``rhs``)."""
        from nodeweave.ops import spmm

        if m.rhs_target is None:
            kop = "copy_lhs" if m.lhs_target == "u" else "copy_rhs"
            return spmm.gspmm(rel, kop, reduce_name, lhs if kop == "copy_lhs" else None,
                              lhs if kop == "copy_rhs" else None)
        if m.lhs_target == "u":
            return spmm.gspmm(rel, m.op, reduce_name, lhs, rhs)
        kop, red, a, c = spmm._swap_e_u(m.op, reduce_name, lhs, rhs)
        return spmm.gspmm(rel, kop, red, a, c)

    def _bucketed_reduce(self, rel, cet, msgs: Dict[str, Any], reduce_func) -> Dict[str, Any]:
        """Degree bucketing: one NodeBatch per distinct in-degree, mailbox (n, degree, ...). Each
        message field is gathered once into bucket order and split into per-bucket views
        (see :mod:`nodeweave.graph.degree_buckets`)."""
        b = backend.current()
        indptr, _, eids = (a.astype(np.int64) for a in rel.to("cpu").csc())
        plan = DegreeBuckets(indptr, eids)
        if not len(plan):
            return {}
        dst_t = cet[2]
        frame = self._node_frames[self._node_key("dst", dst_t)]
        columns = dict(frame.items())
        pieces = {}  # field -> (per-bucket rows, shape of one message)
        for k, rows in _lazy_rows(msgs, plan.edge_order).items():
            mb = backend.of(rows)
            pieces[k] = (mb.split_rows(rows, plan.edge_counts), tuple(mb.shape(rows)[1:]))
        results: Dict[str, list] = {}
        for i, (d, nodes) in enumerate(plan.buckets()):
            mailbox = {k: p[i].reshape((len(nodes), d) + rest) for k, (p, rest) in pieces.items()}
            nb = NodeBatch(_LazyRows(columns, _Ids(nodes)), mailbox, b.int_tensor(nodes, self._device), dst_t)
            out = reduce_func(nb)
            if not isinstance(out, dict):
                raise nwerr.TypeError("a reduce function must return a dict of tensors, got "
                                      f"{type(out).__name__}")
            for k, v in out.items():
                results.setdefault(k, []).append(v)
        # Rows come bucket by bucket; put them back in node order. Nodes without mail get what the
        # field's initializer makes (zeros by default), as in DGL.
        num = rel.num_dst
        ids = _Ids(plan.nodes)
        final = {}
        for k, parts in results.items():
            rb = backend.of(parts[0])
            cat = rb.cat(parts) if len(parts) > 1 else parts[0]
            base = frame.initial_rows(k, cat, 0, num)
            final[k] = rb.index_copy(base, ids.on(rb, self._device), cat)
        return final

    def _apply(self, ntype: str, values: Dict[str, Any], nodes: Optional[np.ndarray],
               apply_node_func) -> Dict[str, Any]:
        """``apply_node_func`` on nodes ``nodes`` (None: all) of ``ntype``, seeing their features
        with ``values`` (full-size reduce results) over them; returns its output, rows of
        ``nodes``."""
        b = backend.current()
        frame = self._node_frames[self._node_key("dst", ntype)]
        data = dict(frame.items())
        data.update(values)
        ids = np.arange(self._side_count("dst", ntype)) if nodes is None else nodes
        out = apply_node_func(NodeBatch(_lazy_rows(data, nodes), None,
                                        b.int_tensor(ids, self._device), ntype))
        if not isinstance(out, dict):
            raise nwerr.TypeError("an apply function must return a dict of tensors, got "
                                  f"{type(out).__name__}")
        return out

    def _store_rows(self, frame, count: int, values: Dict[str, Any], ids: Optional[np.ndarray]):
        """Writes ``values`` into ``frame``: whole columns when ``ids`` is None, else rows ``ids``
        (``values`` holds one row per id); a new field's other rows come from its initializer."""
        if ids is None:
            frame.update(values)
            return
        idx = _Ids(ids)
        for k, rows in values.items():
            b = backend.of(rows)
            if b is None or b.shape(rows)[0] != len(ids):
                got = type(rows).__name__ if b is None else f"{b.shape(rows)[0]} rows"
                raise nwerr.ValueError(f"{frame.name}[{k!r}]: expected a tensor with {len(ids)} rows (one per "
                                       f"updated {frame.row_name}), got {got}")
            base = frame[k] if k in frame else frame.initial_rows(k, rows, 0, count)
            frame[k] = b.index_copy(base, idx.on(b, self._device), rows)

    def _write_nodes(self, ntype: str, values: Dict[str, Any], nodes: Optional[np.ndarray],
                     apply_node_func=None):
        """Stores reduced values (full-size); only ``nodes`` (None: all) change. With
        ``apply_node_func``, its output is what is stored."""
        if apply_node_func is not None:
            values = self._apply(ntype, values, nodes, apply_node_func)
        elif nodes is not None:
            values = _lazy_rows(values, nodes)
        frame = self._node_frames[self._node_key("dst", ntype)]
        self._store_rows(frame, self._side_count("dst", ntype), values, nodes)

    def _several_types(self, what: str, funcs: tuple) -> None:
        """Checks that ``funcs`` are builtins, which ``what`` needs on several edge types."""
        if not all(isinstance(f, (BuiltinMessage, BuiltinReduce)) for f in funcs):
            raise nwerr.TypeError(f"{what} without etype= on a graph with several edge types runs builtin "
                                  "functions (nodeweave.function) over all of them; for user-defined "
                                  "functions pass etype=, or use multi_update_all")

    # ---------------------------------------------------------------- public API
    def apply_nodes(self, func: Callable[[NodeBatch], Dict[str, Any]], v="__ALL__",
                    ntype: Optional[str] = None) -> None:
        """Update node features with ``func(nodes) -> {field: tensor}`` on nodes ``v``."""
        ntype = ntype if ntype is not None else self._single_ntype()
        nodes = None if isinstance(v, str) and v == "__ALL__" else self._id_array(v)
        # On a block, the destination nodes (the ones a layer updates).
        out = self._apply(ntype, {}, nodes, func)
        frame = self._node_frames[self._node_key("dst", ntype)]
        self._store_rows(frame, self._side_count("dst", ntype), out, nodes)

    def apply_edges(self, func: MessageFunc, edges="__ALL__", etype=None) -> None:
        """Compute edge features with a builtin (one gSDDMM) or ``func(edges) -> dict``.

        ``edges``: edge ids, a bool mask, or a ``(u, v)`` tuple of endpoints. Without ``etype`` on a
        graph with several edge types, a builtin runs on every edge type (all edges).
        """
        if etype is None and len(self._etypes) > 1:
            self._several_types("apply_edges", (func,))
            if not (isinstance(edges, str) and edges == "__ALL__"):
                raise nwerr.ValueError("apply_edges: selected edges need etype= on a graph with several "
                                       "edge types")
            out = {ct: self._builtin_edges(func, self._rels[ct], ct) for ct in self._etypes}
            for ct, val in out.items():  # all computed before any is stored
                self._edge_frames[ct][func.out_field] = val
            return
        cet = self._resolve_etype(etype)
        rel = self._rels[cet]
        eids = (None if isinstance(edges, str) and edges == "__ALL__"
                else self._edge_selection(edges, cet, "apply_edges"))
        if isinstance(func, BuiltinMessage):
            out = {func.out_field: self._builtin_edges(func, rel, cet)}
            if eids is not None:
                out = _lazy_rows(out, eids)
        else:
            out = self._messages(func, rel, cet, eids)
        self._store_rows(self._edge_frames[cet], rel.num_edges, out, eids)

    def update_all(self, message_func: MessageFunc, reduce_func: ReduceFunc,
                   apply_node_func=None, etype=None) -> None:
        """Send messages along every edge and reduce them on every destination node.

        Without ``etype`` on a graph with several edge types (builtins only), each node reduces
        the messages of all edge types arriving at it with the one reducer (``sum``, ``max`` or
        ``min``; ``mean`` raises NotImplementedError, as in DGL: use :meth:`multi_update_all`).
        """
        if etype is None and len(self._etypes) > 1:
            self._update_all_types(message_func, reduce_func, apply_node_func)
            return
        cet = self._resolve_etype(etype)
        values = self._reduce(self._rels[cet], cet, message_func, reduce_func, None)
        self._write_nodes(cet[2], values, None, apply_node_func)

    def _update_all_types(self, message_func, reduce_func, apply_node_func) -> None:
        from nodeweave.graph.merged_relation import merged_relation
        from nodeweave.ops import gspmm

        self._several_types("update_all", (message_func, reduce_func))
        _check_funcs(message_func, reduce_func)
        if reduce_func.name == "mean":
            raise nwerr.NotImplementedError("update_all without etype= on several edge types cannot take "
                                            "the mean over types and within them at once; use "
                                            "multi_update_all(..., cross_reducer='mean')")
        # One kernel call over all edge types merged into one relation: each node's messages of
        # every type meet in one reduction (a true max over all of them, not over per-type maxima).
        m = message_func
        merged = merged_relation(self, self._etypes)
        if m.op != "dot" and "v" not in (m.lhs_target, m.rhs_target):
            operands = [self._merged_operand(merged, t, f)
                        for t, f in ((m.lhs_target, m.lhs_field), (m.rhs_target, m.rhs_field))
                        if t is not None]
            out = self._spmm(m, reduce_func.name, merged.relation, *operands, *[None] * (2 - len(operands)))
        else:
            msgs = _cat_rows([self._builtin_edges(m, self._rels[ct], ct) for ct in merged.etypes])
            out = gspmm(merged.relation, "copy_rhs", reduce_func.name, None, msgs)
        off = merged.dst_offsets
        for i, dt in enumerate(merged.dst_types):
            value = out if len(merged.dst_types) == 1 else out[off[i]:off[i + 1]]
            self._write_nodes(dt, {reduce_func.out_field: value}, None, apply_node_func)

    def _merged_operand(self, merged, target: str, field: str):
        """Feature ``field`` on the sources (``u``) or edges (``e``) of a merged relation, in its
        order."""
        if target == "u":
            return _cat_rows([self._node_operand("src", t, field) for t in merged.src_types])
        return _cat_rows([self._edge_operand(ct, field) for ct in merged.etypes])

    def send_and_recv(self, edges, message_func: MessageFunc, reduce_func: ReduceFunc,
                      apply_node_func=None, etype=None) -> None:
        """Message passing along ``edges`` only (edge ids, a bool mask, or a ``(u, v)`` tuple of
        endpoints); destinations of those edges are updated, other nodes keep their features."""
        cet = self._resolve_etype(etype)
        rel = self._rels[cet]
        # Edge-id order: a user-defined reducer sees each node's mail in edge-id order, as in DGL.
        eids = np.sort(self._edge_selection(edges, cet, "send_and_recv"))
        values = self._reduce(rel, cet, message_func, reduce_func, eids)
        dst = rel.to("cpu").coo()[1][eids]
        self._write_nodes(cet[2], values, np.unique(dst.astype(np.int64)), apply_node_func)

    def push(self, u, message_func: MessageFunc, reduce_func: ReduceFunc, apply_node_func=None,
             etype=None) -> None:
        """Nodes ``u`` send messages along their out-edges; the receivers are updated
        (``send_and_recv`` on those edges)."""
        cet = self._resolve_etype(etype)
        eids = self._id_array(self.out_edges(u, form="eid", etype=cet))
        self.send_and_recv(eids, message_func, reduce_func, apply_node_func, etype=cet)

    def pull(self, v, message_func: MessageFunc, reduce_func: ReduceFunc, apply_node_func=None,
             etype=None) -> None:
        """Nodes ``v`` pull messages along their in-edges; only ``v`` are updated (a node without
        in-edges gets its initializer's value, then ``apply_node_func``)."""
        cet = self._resolve_etype(etype)
        rel = self._rels[cet]
        nodes = np.unique(self._id_array(v))
        if nodes.size and (nodes.min() < 0 or nodes.max() >= rel.num_dst):
            raise nwerr.IndexError(f"pull: node ids must be in [0, {rel.num_dst}), got "
                                   f"{nodes.min()}..{nodes.max()}")
        indptr, _, eids = (a.astype(np.int64) for a in rel.to("cpu").csc())
        sel = np.concatenate([eids[indptr[n]:indptr[n + 1]] for n in nodes]) if nodes.size \
            else np.zeros(0, np.int64)
        values = self._reduce(rel, cet, message_func, reduce_func, np.sort(sel))
        self._write_nodes(cet[2], values, nodes, apply_node_func)

    def multi_update_all(self, etype_dict: Dict[Any, tuple], cross_reducer: str,
                         apply_node_func=None) -> None:
        """``update_all`` per edge type, then combine the results arriving at each node type
        with ``cross_reducer`` (``sum``, ``mean``, ``max``, ``min`` or ``stack``, stacking in the
        graph's edge type order).

        ``etype_dict`` maps edge types to ``(message_func, reduce_func)`` or
        ``(message_func, reduce_func, apply_node_func)``; that apply function runs on the edge
        type's result before the types are combined, ``apply_node_func`` after. With builtin
        ``max``/``min`` reducers, a node an edge type sends nothing to takes no part in a
        ``max``/``min`` across types (a node no type reaches gets 0).
        """
        if cross_reducer not in ("sum", "mean", "max", "min", "stack"):
            raise nwerr.ValueError("cross_reducer must be sum, mean, max, min or stack, got "
                                   f"{cross_reducer!r}")
        if not isinstance(etype_dict, dict):
            raise nwerr.TypeError("etype_dict must be a dict etype -> (message_func, reduce_func[, "
                                  f"apply_node_func]), got {type(etype_dict).__name__}")
        per_type: Dict[str, list] = {}
        for etype, funcs in etype_dict.items():
            cet = self._resolve_etype(etype)
            if not isinstance(funcs, (tuple, list)) or len(funcs) not in (2, 3):
                raise nwerr.TypeError(f"etype_dict[{etype!r}] must be (message_func, reduce_func[, "
                                      f"apply_node_func]), got {funcs!r}")
            rel = self._rels[cet]
            values = self._reduce(rel, cet, funcs[0], funcs[1], None)
            if len(funcs) == 3 and funcs[2] is not None:
                values = self._apply(cet[2], values, None, funcs[2])
            no_mail = None
            if isinstance(funcs[1], BuiltinReduce) and funcs[1].name in ("max", "min"):
                no_mail = rel.to("cpu").in_degrees() == 0
            per_type.setdefault(cet[2], []).append((self._etypes.index(cet), values, no_mail))
        for ntype, results in per_type.items():
            results.sort(key=lambda r: r[0])
            fields = list(dict.fromkeys(k for _, values, _ in results for k in values))
            merged = {k: _cross_reduce([(values[k], nm) for _, values, nm in results if k in values],
                                       cross_reducer, self._side_count("dst", ntype), self._device)
                      for k in fields}
            self._write_nodes(ntype, merged, None, apply_node_func)

    def filter_nodes(self, predicate: Callable[[NodeBatch], Any], nodes="__ALL__",
                     ntype: Optional[str] = None):
        """Ids of the nodes (among ``nodes``, all by default) of ``ntype`` for which
        ``predicate(node_batch)`` holds; the predicate returns one bool (or number) per node."""
        nt = self._ntype(ntype)
        ids, _ = self._node_ids(nodes, nt, "nodes")
        frame = self._node_frames[self._node_key("all", nt)]
        b = backend.current()
        mask = predicate(NodeBatch(_lazy_rows(frame, ids), None, b.int_tensor(ids, self._device), nt))
        return self._ids_out(ids[self._predicate_mask(mask, len(ids), "filter_nodes")])

    def filter_edges(self, predicate: Callable[[EdgeBatch], Any], edges="__ALL__", etype=None):
        """Ids of the edges (among ``edges``, all by default) of ``etype`` for which
        ``predicate(edge_batch)`` holds."""
        cet = self._resolve_etype(etype)
        ids = (np.arange(self._rels[cet].num_edges, dtype=np.int64)
               if isinstance(edges, str) and edges == "__ALL__"
               else self._edge_selection(edges, cet, "filter_edges"))
        mask = predicate(self._edge_batch(cet, ids))
        return self._ids_out(ids[self._predicate_mask(mask, len(ids), "filter_edges")])

    @staticmethod
    def _predicate_mask(mask, n: int, fn: str) -> np.ndarray:
        b = backend.of(mask)
        arr = b.to_numpy(mask) if b is not None else np.asarray(mask)
        if arr.shape != (n,):
            raise nwerr.ValueError(f"{fn}: the predicate must return one value per item ({n}), got shape "
                                   f"{arr.shape}")
        return arr.astype(bool)

    # ids given as list / numpy / tensor -> int64 numpy
    def _id_array(self, ids) -> np.ndarray:
        b = backend.of(ids)
        arr = b.to_numpy(ids) if b is not None else np.asarray(ids)
        if arr.dtype == np.bool_:
            return np.nonzero(arr)[0]
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise nwerr.TypeError(f"ids must be integers, got dtype {arr.dtype}")
        return arr.astype(np.int64).reshape(-1)

    def _single_ntype(self) -> str:
        if len(self._ntypes) != 1:
            raise nwerr.ValueError(f"this graph has several node types {self._ntypes}; pass ntype=")
        return self._ntypes[0]
