"""Message passing on a graph: ``apply_nodes``, ``apply_edges``, ``update_all``,
``send_and_recv``, ``pull`` and ``multi_update_all``. Mixed into
:class:`nodeweave.graph.HeteroGraph`.

A builtin message with a builtin reducer (``nodeweave.function``) runs as one fused gSpMM: no
per-edge message tensor is ever made. A message touching the destination (``u_add_v``) is computed
per edge with gSDDMM first. User-defined functions see edge batches (``edges.src``, ``edges.dst``,
``edges.data``) and node batches whose ``mailbox`` has shape (nodes, in-degree, ...), one batch
per distinct in-degree (degree bucketing).

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

from typing import Any, Callable, Dict, Optional, Union

import numpy as np

from nodeweave import backend
from nodeweave.function import BuiltinMessage, BuiltinReduce
from nodeweave import errors as nwerr

MessageFunc = Union[BuiltinMessage, Callable[["EdgeBatch"], Dict[str, Any]]]
ReduceFunc = Union[BuiltinReduce, Callable[["NodeBatch"], Dict[str, Any]]]


class EdgeBatch:
    """The edges a user-defined message/edge function sees.

    ``src``/``dst`` map field names to the features of each edge's endpoints, ``data`` to the
    edge features; rows follow the batch's edge order.
    """

    def __init__(self, src: dict, dst: dict, data: dict, uv_eid) -> None:
        self.src, self.dst, self.data = src, dst, data
        self._uv_eid = uv_eid

    def edges(self):
        """(src ids, dst ids, edge ids) of the batch."""
        return self._uv_eid

    def batch_size(self) -> int:
        return len(self._uv_eid[2])

    def __len__(self) -> int:
        return self.batch_size()


class NodeBatch:
    """The nodes a user-defined reduce/apply function sees: ``data`` and ``mailbox``."""

    def __init__(self, data: dict, mailbox: Optional[dict], nodes) -> None:
        self.data, self._nodes = data, nodes
        self.mailbox = mailbox if mailbox is not None else {}

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


def _lazy_rows(frame, rows_np):
    """A dict of ``frame``'s columns restricted to rows (all when rows_np is None)."""
    if rows_np is None:
        return dict(frame.items())
    ids = _Ids(rows_np)
    out = {}
    for k, v in frame.items():
        b = backend.of(v)
        out[k] = b.index_select(v, ids.on(b, b.device_str(v)))
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

    def _operand(self, target: str, field: str, cet):
        """The tensor a builtin reads: source/destination node data or edge data."""
        if target == "e":
            frame, what = self._edge_frames[cet], "edata"
        else:
            key = self._node_key("src", cet[0]) if target == "u" else self._node_key("dst", cet[2])
            frame, what = self._node_frames[key], ("srcdata" if target == "u" else "dstdata")
        if field not in frame:
            raise nwerr.KeyError(f"{what} has no field {field!r} (have {sorted(frame.keys())})")
        return frame[field]

    def _edge_batch(self, cet, eids: Optional[np.ndarray]):
        b = backend.current()
        rel = self._rels[cet]
        src, dst = rel.coo()
        if eids is not None:
            src, dst = src[eids], dst[eids]
        all_e = np.arange(rel.num_edges) if eids is None else eids
        return EdgeBatch(_lazy_rows(self._node_frames[self._node_key("src", cet[0])], src),
                         _lazy_rows(self._node_frames[self._node_key("dst", cet[2])], dst),
                         _lazy_rows(self._edge_frames[cet], eids),
                         (b.int_tensor(src.astype(np.int64), self._device),
                          b.int_tensor(dst.astype(np.int64), self._device),
                          b.int_tensor(all_e.astype(np.int64), self._device)))

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
        return out

    def _reduce(self, rel, cet, message_func: MessageFunc, reduce_func: ReduceFunc,
                eids: Optional[np.ndarray]):
        """Runs message + reduce over the edges of ``rel`` (all, or the subset ``eids``) and
        returns {field: (num_dst, ...) tensor}. Builtin pairs on u/e fuse into one gSpMM."""
        from nodeweave.ops import gspmm

        if eids is not None:
            src, dst = rel.coo()
            sub = type(rel).from_coo(rel.num_src, rel.num_dst, src[eids], dst[eids], rel.idtype)
            rel_run = sub.to(self._device) if self._device != "cpu" else sub
        else:
            rel_run = rel
        if isinstance(reduce_func, BuiltinReduce) and isinstance(message_func, BuiltinMessage):
            if reduce_func.msg_field != message_func.out_field:
                raise nwerr.KeyError(f"reduce function reads message {reduce_func.msg_field!r} but the "
                                     f"message function writes {message_func.out_field!r}")
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
        from nodeweave.ops import spmm

        lhs = self._operand(m.lhs_target, m.lhs_field, cet)
        if m.rhs_target is None:
            kop = "copy_lhs" if m.lhs_target == "u" else "copy_rhs"
            return spmm.gspmm(rel, kop, reduce_name, lhs if kop == "copy_lhs" else None,
                              lhs if kop == "copy_rhs" else None)
        rhs = self._operand(m.rhs_target, m.rhs_field, cet)
        if m.lhs_target == "u":
            return spmm.gspmm(rel, m.op, reduce_name, lhs, rhs)
        kop, red, a, c = spmm._swap_e_u(m.op, reduce_name, lhs, rhs)
        return spmm.gspmm(rel, kop, red, a, c)

    def _bucketed_reduce(self, rel, cet, msgs: Dict[str, Any], reduce_func) -> Dict[str, Any]:
        """Degree bucketing: one NodeBatch per distinct in-degree, mailbox (n, degree, ...)."""
        b = backend.current()
        indptr, _, eids = (a.astype(np.int64) for a in rel.to("cpu").csc())
        deg = np.diff(indptr)
        dst_t = cet[2]
        frame = self._node_frames[self._node_key("dst", dst_t)]
        results: Dict[str, list] = {}
        order = []
        for d in np.unique(deg[deg > 0]):
            nodes = np.nonzero(deg == d)[0]
            # Edge ids of each node's in-edges, row by row: (n, d).
            pos = indptr[nodes][:, None] + np.arange(d)[None, :]
            edge_idx = eids[pos].reshape(-1)
            mailbox = {}
            for k, rows in _lazy_rows(msgs, edge_idx).items():
                mailbox[k] = rows.reshape((len(nodes), int(d)) + tuple(rows.shape[1:]))
            nb = NodeBatch(_lazy_rows(frame, nodes), mailbox,
                           b.int_tensor(nodes, self._device))
            out = reduce_func(nb)
            if not isinstance(out, dict):
                raise nwerr.TypeError("a reduce function must return a dict of tensors, got "
                                      f"{type(out).__name__}")
            for k, v in out.items():
                results.setdefault(k, []).append(v)
            order.append(nodes)
        if not order:
            return {}
        all_nodes = np.concatenate(order)
        # Rows come bucket by bucket; put them back in node order, zero for nodes without mail.
        num = rel.num_dst
        ids = _Ids(all_nodes)
        final = {}
        for k, parts in results.items():
            rb = backend.of(parts[0])
            cat = rb.cat(parts) if len(parts) > 1 else parts[0]
            shape = (num,) + tuple(rb.shape(cat)[1:])
            out = rb.zeros(shape, rb.dtype_name(cat), self._device)
            final[k] = rb.index_copy(out, ids.on(rb, self._device), cat)
        return final

    def _write_nodes(self, ntype: str, values: Dict[str, Any], nodes: Optional[np.ndarray],
                     apply_node_func=None):
        """Stores reduced values; only ``nodes`` (None: all) change."""
        b = backend.current()
        frame = self._node_frames[self._node_key("dst", ntype)]
        count = self._side_count("dst", ntype)
        if apply_node_func is not None:
            data = dict(frame.items())
            data.update(values)
            ids = np.arange(count) if nodes is None else nodes
            extra = apply_node_func(NodeBatch(_lazy_rows(data, nodes), None,
                                              b.int_tensor(ids, self._device)))
            values = dict(_lazy_rows(values, nodes), **extra)
        ids = None if nodes is None else _Ids(nodes)
        for k, v in values.items():
            if nodes is None:
                frame[k] = v
            else:
                b = backend.of(v)
                idx = ids.on(b, self._device)
                rows = v if b.shape(v)[0] == len(nodes) else b.index_select(v, idx)
                base = frame[k] if k in frame else b.zeros(
                    (count,) + tuple(b.shape(rows)[1:]), b.dtype_name(rows),
                    self._device)
                frame[k] = b.index_copy(base, idx, rows)

    # ---------------------------------------------------------------- public API
    def apply_nodes(self, func: Callable[[NodeBatch], Dict[str, Any]], v="__ALL__",
                    ntype: Optional[str] = None) -> None:
        """Update node features with ``func(nodes) -> {field: tensor}`` on nodes ``v``."""
        b = backend.current()
        ntype = ntype if ntype is not None else self._single_ntype()
        nodes = None if isinstance(v, str) and v == "__ALL__" else self._id_array(v)
        # On a block, the destination nodes (the ones a layer updates).
        ids = np.arange(self._side_count("dst", ntype)) if nodes is None else nodes
        out = func(NodeBatch(_lazy_rows(self._node_frames[self._node_key("dst", ntype)], nodes), None,
                             b.int_tensor(ids, self._device)))
        self._write_nodes(ntype, out, nodes)

    def apply_edges(self, func: MessageFunc, edges="__ALL__", etype=None) -> None:
        """Compute edge features with a builtin (one gSDDMM) or ``func(edges) -> dict``."""
        cet = self._resolve_etype(etype)
        rel = self._rels[cet]
        eids = None if isinstance(edges, str) and edges == "__ALL__" else self._id_array(edges)
        if isinstance(func, BuiltinMessage):
            out = {func.out_field: self._builtin_edges(func, rel, cet)}
            if eids is not None:
                out = _lazy_rows(out, eids)
        else:
            out = self._messages(func, rel, cet, eids)
        frame = self._edge_frames[cet]
        ids = None if eids is None else _Ids(eids)
        for k, val in out.items():
            if eids is None:
                frame[k] = val
            else:
                b = backend.of(val)
                idx = ids.on(b, self._device)
                base = frame[k] if k in frame else b.zeros(
                    (rel.num_edges,) + tuple(b.shape(val)[1:]), b.dtype_name(val), self._device)
                frame[k] = b.index_copy(base, idx, val)

    def update_all(self, message_func: MessageFunc, reduce_func: ReduceFunc,
                   apply_node_func=None, etype=None) -> None:
        """Send messages along every edge and reduce them on every destination node."""
        cet = self._resolve_etype(etype)
        values = self._reduce(self._rels[cet], cet, message_func, reduce_func, None)
        self._write_nodes(cet[2], values, None, apply_node_func)

    def send_and_recv(self, edges, message_func: MessageFunc, reduce_func: ReduceFunc,
                      apply_node_func=None, etype=None) -> None:
        """Message passing along ``edges`` only; destinations of those edges are updated, other
        nodes keep their features."""
        cet = self._resolve_etype(etype)
        rel = self._rels[cet]
        eids = self._id_array(edges)
        if eids.size and (eids.min() < 0 or eids.max() >= rel.num_edges):
            raise nwerr.IndexError(f"send_and_recv: edge ids must be in [0, {rel.num_edges}), got "
                                   f"{eids.min()}..{eids.max()}")
        values = self._reduce(rel, cet, message_func, reduce_func, eids)
        dst = rel.to("cpu").coo()[1][eids]
        self._write_nodes(cet[2], values, np.unique(dst.astype(np.int64)), apply_node_func)

    def pull(self, v, message_func: MessageFunc, reduce_func: ReduceFunc, apply_node_func=None,
             etype=None) -> None:
        """Nodes ``v`` pull messages along their in-edges; only ``v`` are updated."""
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
        with ``cross_reducer`` (``sum``, ``mean``, ``max``, ``min`` or ``stack``)."""
        if cross_reducer not in ("sum", "mean", "max", "min", "stack"):
            raise nwerr.ValueError("cross_reducer must be sum, mean, max, min or stack, got "
                                   f"{cross_reducer!r}")
        per_type: Dict[str, Dict[str, list]] = {}
        for etype, funcs in etype_dict.items():
            cet = self._resolve_etype(etype)
            message_func, reduce_func = funcs[0], funcs[1]
            values = self._reduce(self._rels[cet], cet, message_func, reduce_func, None)
            for k, v in values.items():
                per_type.setdefault(cet[2], {}).setdefault(k, []).append(v)
        for ntype, fields in per_type.items():
            merged = {k: backend.of(vs[0]).cross_reduce(vs, cross_reducer)
                      for k, vs in fields.items()}
            self._write_nodes(ntype, merged, None, apply_node_func)

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
