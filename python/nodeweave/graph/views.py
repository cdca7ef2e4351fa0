"""DGL-style views of a graph's nodes, edges and features: ``g.nodes``, ``g.edges``, ``g.ndata`` ...

Views hold the graph and look its frames up on every access, so they follow ``local_scope()``.

>>> import nodeweave as nw, nodeweave.core as nc
>>> g = nw.heterograph({("user", "follows", "user"): ([0, 1], [1, 2]),
...                     ("user", "plays", "game"): ([0, 2], [0, 0])})
>>> g.nodes("user").tolist()
[0, 1, 2]
>>> g.nodes["game"].data["score"] = nc.tensor([0.5])
>>> g.ndata["score"]
{'game': tensor([0.5])}
>>> g.edges["plays"].data["w"] = nc.ones(2)
>>> sorted(g.edata["w"])
[('user', 'plays', 'game')]

Indexing by ids (optionally with a type) gives the features of those rows; assigning writes them,
creating the feature when it does not exist yet, its other rows filled by the initializer (zeros
unless ``g.set_n_initializer`` / ``g.set_e_initializer`` chose another):

>>> g.nodes[("user", [0, 2])].data["x"] = nc.tensor([[1.0], [3.0]])
>>> g.nodes["user"].data["x"].tolist()
[[1.0], [0.0], [3.0]]
>>> g.nodes[("user", [2])].data["x"].tolist()
[[3.0]]
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Iterator

import numpy as np

from nodeweave import backend
from nodeweave import errors as nwerr


class FrameView(MutableMapping):
    """The features of one node type (``kind='node'``) or one canonical edge type (``'edge'``)."""

    __slots__ = ("_graph", "_kind", "_key")

    def __init__(self, graph: Any, kind: str, key: Any) -> None:
        self._graph, self._kind, self._key = graph, kind, key

    @property
    def _frame(self):
        frames = self._graph._node_frames if self._kind == "node" else self._graph._edge_frames
        return frames[self._key]

    def __getitem__(self, name: str) -> Any:
        return self._frame[name]

    def __setitem__(self, name: str, value: Any) -> None:
        self._frame[name] = value

    def __delitem__(self, name: str) -> None:
        del self._frame[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._frame)

    def __len__(self) -> int:
        return len(self._frame)

    def __contains__(self, name: object) -> bool:
        return name in self._frame

    def __repr__(self) -> str:
        return repr({k: v for k, v in self._frame.items()})

    @property
    def schemes(self):
        return self._frame.schemes


class HeteroFrameView(MutableMapping):
    """Features over several node (or edge) types: ``view['h']`` is ``{type: tensor}`` for the types
    that have ``'h'``, and ``view['h'] = {type: tensor, ...}`` sets it per type."""

    __slots__ = ("_graph", "_kind", "_keys", "_side")

    def __init__(self, graph: Any, kind: str, keys: list, side: str = "all") -> None:
        self._graph, self._kind, self._keys, self._side = graph, kind, keys, side

    def _frames(self) -> dict:
        """``{type: frame}``, keyed by the type names users see (a block's source and destination
        frames of one type have different internal keys)."""
        if self._kind == "edge":
            return {k: self._graph._edge_frames[k] for k in self._keys}
        g = self._graph
        return {k: g._node_frames[g._node_key(self._side, k)] for k in self._keys}

    def _resolve(self, key: Any) -> Any:
        if self._kind == "edge":
            ct = self._graph.to_canonical_etype(key)
        else:
            ct = self._graph._ntype(key)
        if ct not in self._keys:
            raise nwerr.ValueError(f"{ct!r} is not one of the types of this view: {self._keys}")
        return ct

    def __getitem__(self, name: str) -> dict:
        out = {k: f[name] for k, f in self._frames().items() if name in f}
        if not out:
            raise nwerr.KeyError(f"no {self._kind} type has feature {name!r}")
        return out

    def __setitem__(self, name: str, value: Any) -> None:
        if not isinstance(value, dict):
            what = "node" if self._kind == "node" else "edge"
            raise nwerr.TypeError(f"the graph has several {what} types; set {'ndata' if what == 'node' else 'edata'}"
                                  f"[{name!r}] to a dict {{{what}_type: tensor}}, got {type(value).__name__}")
        resolved = {self._resolve(k): v for k, v in value.items()}
        frames = self._frames()
        for k, v in resolved.items():  # validate everything before storing anything
            frames[k]._check(name, v)
        for k, v in resolved.items():
            frames[k][name] = v

    def __delitem__(self, name: str) -> None:
        found = False
        for f in self._frames().values():
            if name in f:
                del f[name]
                found = True
        if not found:
            raise nwerr.KeyError(f"no {self._kind} type has feature {name!r}")

    def __iter__(self) -> Iterator[str]:
        seen: dict[str, None] = {}
        for f in self._frames().values():
            for k in f:
                seen.setdefault(k, None)
        return iter(seen)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        return any(name in f for f in self._frames().values())

    def __repr__(self) -> str:
        return repr({k: self[k] for k in self})


class RowsFrameView(MutableMapping):
    """Features of some rows (``g.nodes[ids].data``): reads gather the rows, writes replace them
    out of place (so autograd sees the write) and create a missing feature, its other rows filled
    by the frame's initializer."""

    __slots__ = ("_view", "_ids")

    def __init__(self, view: FrameView, ids: Any) -> None:
        self._view, self._ids = view, ids

    def __getitem__(self, name: str) -> Any:
        col = self._view[name]
        return backend.of(col).index_select(col, self._ids)

    def __setitem__(self, name: str, value: Any) -> None:
        B = backend.of(value)
        rows = B.shape(value)[0] if B is not None else None
        if rows != len(self._ids):
            got = "a non-tensor" if rows is None else f"{rows} rows"
            raise nwerr.ValueError(f"feature {name!r}: expected a tensor with {len(self._ids)} rows (one per "
                                   f"selected id), got {got}")
        frame = self._view._frame
        if name in frame:
            base = frame[name]
        else:  # the other rows hold what the feature's initializer makes (zeros by default)
            base = frame.initial_rows(name, value, 0, frame.num_rows)
        idx = B.int_tensor(self._ids, B.device_str(base), "int64")
        frame[name] = B.index_copy(base, idx, value)

    def __delitem__(self, name: str) -> None:
        raise nwerr.TypeError("cannot delete a feature from a subset of rows; delete it from the whole "
                              "type (g.ndata / g.edata)")

    def __iter__(self) -> Iterator[str]:
        return iter(self._view)

    def __len__(self) -> int:
        return len(self._view)

    def __repr__(self) -> str:
        return repr({k: self[k] for k in self})


class NodeSpace:
    """``g.nodes[ntype]`` or ``g.nodes[(ntype, ids)]``: ``.data`` is the features of those nodes."""

    __slots__ = ("_graph", "_ntype", "_ids", "_side")

    def __init__(self, graph: Any, ntype: str, ids: Any = None, side: str = "all") -> None:
        self._graph, self._ntype, self._ids, self._side = graph, ntype, ids, side

    @property
    def data(self) -> MutableMapping:
        view = FrameView(self._graph, "node", self._graph._node_key(self._side, self._ntype))
        return view if self._ids is None else RowsFrameView(view, self._ids)


class EdgeSpace:
    """``g.edges[etype]`` or ``g.edges[(etype, ids)]``: ``.data`` is the features of those edges."""

    __slots__ = ("_graph", "_etype", "_ids")

    def __init__(self, graph: Any, etype: tuple, ids: Any = None) -> None:
        self._graph, self._etype, self._ids = graph, etype, ids

    @property
    def data(self) -> MutableMapping:
        view = FrameView(self._graph, "edge", self._etype)
        return view if self._ids is None else RowsFrameView(view, self._ids)


def _is_etype(key: Any) -> bool:
    return isinstance(key, str) or (isinstance(key, tuple) and len(key) == 3
                                    and all(isinstance(k, str) for k in key))


class NodeView:
    """``g.nodes``: call it for node ids, index it by node type for features."""

    __slots__ = ("_graph", "_side")

    def __init__(self, graph: Any, side: str = "all") -> None:
        self._graph, self._side = graph, side

    def _types(self) -> list[str]:
        g = self._graph
        return {"all": g.ntypes, "src": g.srctypes, "dst": g.dsttypes}[self._side]

    def _pick(self, ntype: str | None) -> str:
        types = self._types()
        if ntype is None:
            if len(types) != 1:
                raise nwerr.ValueError(f"ntype must be given: the graph has several node types {types}")
            return types[0]
        nt = self._graph._ntype(ntype)
        if not self._graph._in_side(self._side, nt):
            raise nwerr.ValueError(f"{nt!r} is not a {self._side} node type ({types})")
        return nt

    def __call__(self, ntype: str | None = None):
        """Ids ``0 .. num_nodes(ntype)-1`` as a tensor of the graph's idtype."""
        import numpy as np

        g = self._graph
        nt = self._pick(ntype)
        return backend.current().int_tensor(np.arange(g._side_count(self._side, nt)), g._device,
                                            g._idtype_name)

    def __getitem__(self, key: Any) -> NodeSpace:
        """``g.nodes[ntype]``, ``g.nodes[ids]`` (one node type) or ``g.nodes[(ntype, ids)]``."""
        if isinstance(key, str):
            return NodeSpace(self._graph, self._pick(key), side=self._side)
        ntype, ids = (key if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str)
                      else (None, key))
        nt = self._pick(ntype)
        if isinstance(ids, slice):
            ids = range(self._graph._side_count(self._side, nt))[ids]
        arr, _ = self._graph._node_ids(ids, nt, "nodes[...]", self._side)
        return NodeSpace(self._graph, nt, arr, self._side)

    def __len__(self) -> int:
        return sum(self._graph._side_count(self._side, t) for t in self._types())

    def __repr__(self) -> str:
        return f"NodeView(ntypes={self._types()})"


class EdgeView:
    """``g.edges``: call it for the edges (``form``, ``order``, ``etype``), index it by edge type for
    features."""

    __slots__ = ("_graph",)

    def __init__(self, graph: Any) -> None:
        self._graph = graph

    def __call__(self, form: str = "uv", order: str = "eid", etype: Any = None):
        return self._graph.all_edges(form=form, order=order, etype=etype)

    def __getitem__(self, key: Any) -> EdgeSpace:
        """``g.edges[etype]``, ``g.edges[eids]``, ``g.edges[(etype, eids)]`` or ``g.edges[u, v]``
        (the edges between node pairs, one edge type)."""
        g = self._graph
        if _is_etype(key):
            return EdgeSpace(g, g.to_canonical_etype(key))
        etype, ids = (key if isinstance(key, tuple) and len(key) == 2 and _is_etype(key[0])
                      else (None, key))
        ct = g.to_canonical_etype(etype)
        if isinstance(ids, tuple) and len(ids) == 2:  # (u, v) node pairs
            found = g.edge_ids(ids[0], ids[1], etype=ct)  # an int for one pair of ints
            ids = np.atleast_1d(found) if isinstance(found, int) else backend.current().to_numpy(found)
        elif isinstance(ids, slice):
            ids = range(g.num_edges(ct))[ids]
        arr, _ = g._edge_ids(ids, ct, "edges[...]")
        return EdgeSpace(g, ct, arr)

    def __len__(self) -> int:
        return self._graph.num_edges()

    def __repr__(self) -> str:
        return f"EdgeView(etypes={self._graph.canonical_etypes})"
