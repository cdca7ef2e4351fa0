"""Message-flow blocks (DGL's ``DGLBlock``): bipartite graphs from the source nodes of one layer to
its destination nodes, the unit of mini-batch training.

Every node type has two node sets, sources and destinations, with separate counts and features
(``block.srcdata``, ``block.dstdata``). Samplers and :func:`to_block` put each type's destination
nodes first among its sources, so ``h[:block.num_dst_nodes()]`` are the destination nodes' own
features: every layer in :mod:`nodeweave.nn` relies on it when given one tensor for a block.
``block.srcdata[nw.NID]`` / ``block.dstdata[nw.NID]`` hold the nodes' ids in the sampled graph and
``block.edata[nw.EID]`` the edges' ids.

>>> import nodeweave as nw
>>> frontier = nw.graph(([0, 1, 2, 3], [1, 2, 1, 1]))
>>> block = nw.to_block(frontier, [1, 2])
>>> block.num_src_nodes(), block.num_dst_nodes(), block.num_edges()
(4, 2, 4)
>>> block.srcdata[nw.NID].tolist(), block.dstdata[nw.NID].tolist()
([1, 2, 0, 3], [1, 2])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import _C, backend
from nodeweave.graph.frame import Frame
from nodeweave.graph.heterograph import HeteroGraph, RelationGraph
from nodeweave.graph.transforms import EID, NID
from nodeweave import errors as nwerr

Canonical = tuple


class Block(HeteroGraph):
    """A message-flow block: per node type a source and a destination node set, and one relation
    per canonical edge type from sources to destinations.

    Build blocks with :func:`to_block`, :func:`create_block` or a sampler in
    :mod:`nodeweave.dataloading`. A block answers the graph API with sides made explicit:
    ``num_src_nodes``/``num_dst_nodes``, ``srcdata``/``dstdata``, ``srcnodes``/``dstnodes``; node
    queries along an edge type read the side the edge type implies (``in_degrees`` counts
    destination nodes). ``num_nodes()`` counts both sides, as DGL's blocks do; as in DGL, a node type
    ``t`` can also be named by side, ``'SRC/t'`` or ``'DST/t'`` (``block.num_nodes('DST/t')``,
    ``block.nodes['SRC/t'].data``).
    """

    is_block = True

    def __init__(self, num_src_nodes: dict[str, int], num_dst_nodes: dict[str, int],
                 rels: dict[Canonical, RelationGraph], device: Any = "cpu") -> None:
        B = backend.current()
        self._device = B.canonical_device(device)
        for side, counts in (("source", num_src_nodes), ("destination", num_dst_nodes)):
            for nt, n in counts.items():
                if not isinstance(nt, str):
                    raise nwerr.TypeError(f"node type names must be strings, got {nt!r}")
                if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
                    raise nwerr.ValueError(f"the number of {side} nodes of {nt!r} must be a non-negative "
                                           f"int, got {n!r}")
        self._srctypes = list(num_src_nodes)
        self._dsttypes = list(num_dst_nodes)
        self._ntypes = list(dict.fromkeys(self._srctypes + self._dsttypes))
        self._num_nodes = {("src", nt): int(n) for nt, n in num_src_nodes.items()}
        self._num_nodes.update({("dst", nt): int(n) for nt, n in num_dst_nodes.items()})
        self._etypes, self._rels, idtypes = [], {}, set()
        for ct, rel in rels.items():
            st, _, dt = ct
            if st not in num_src_nodes or dt not in num_dst_nodes:
                raise nwerr.ValueError(f"edge type {ct!r}: {st!r} must be a source and {dt!r} a destination "
                                       f"node type of the block (sources {self._srctypes}, destinations "
                                       f"{self._dsttypes})")
            if rel.num_src != num_src_nodes[st] or rel.num_dst != num_dst_nodes[dt]:
                raise nwerr.ValueError(f"edge type {ct!r}: the relation has {rel.num_src} source and "
                                       f"{rel.num_dst} destination nodes, the block {num_src_nodes[st]} and "
                                       f"{num_dst_nodes[dt]}")
            self._etypes.append(ct)
            self._rels[ct] = rel
            idtypes.add(rel.idtype)
        if len(idtypes) > 1:
            raise nwerr.ValueError(f"all relations must share one idtype, got {sorted(idtypes)}")
        self._idtype_name = idtypes.pop() if idtypes else "int64"
        single = len(self._srctypes) == 1 and len(self._dsttypes) == 1
        self._node_frames = {}
        for (side, nt), n in self._num_nodes.items():
            name = f"{side}data" if single else f"{side}nodes[{nt!r}].data"
            self._node_frames[(side, nt)] = Frame(n, None, name=name, row_name=f"{side} node",
                                                  device=self._device)
        self._edge_frames = {}
        for ct in self._etypes:
            name = "edata" if len(self._etypes) == 1 else f"edges[{ct!r}].data"
            self._edge_frames[ct] = Frame(self._rels[ct].num_edges, None, name=name, row_name="edge",
                                          device=self._device)
        self._batch_num_nodes = None
        self._batch_num_edges = None
        self._cache = {}

    # ------------------------------------------------------------------ the two sides

    def _node_key(self, side: str, ntype: str) -> Any:
        named, nt = self._named_side(ntype)
        if named is not None:
            return (named, nt)
        # 'all' reads the sources: they include the destinations, so every node of the block.
        return ("dst" if side == "dst" else "src", ntype)

    def _ntype(self, ntype: str | None, arg: str = "ntype") -> str:
        if ntype is None:
            if len(self._ntypes) != 1:
                raise nwerr.ValueError(f"{arg} must be given: the block has several node types {self._ntypes}")
            return self._ntypes[0]
        named, nt = self._named_side(ntype) if isinstance(ntype, str) else (None, ntype)
        if named is not None and (named, nt) in self._num_nodes:
            return ntype
        if ntype not in self._ntypes:
            names = [f"SRC/{t}" for t in self._srctypes] + [f"DST/{t}" for t in self._dsttypes]
            raise nwerr.ValueError(f"unknown node type {ntype!r} (the block has {self._ntypes}, also named {names})")
        return ntype

    def _in_side(self, side: str, ntype: str) -> bool:
        named, nt = self._named_side(ntype)
        if named is not None:
            return side in ("all", named)
        return super()._in_side(side, ntype)

    def _side_count(self, side: str, ntype: str) -> int:
        key = self._node_key(side, ntype)
        if key not in self._num_nodes:
            kind = "destination" if key[0] == "dst" else "source"
            raise nwerr.ValueError(f"{ntype!r} is not a {kind} node type of the block")
        return self._num_nodes[key]

    @property
    def srctypes(self) -> list[str]:
        return list(self._srctypes)

    @property
    def dsttypes(self) -> list[str]:
        return list(self._dsttypes)

    @property
    def is_unibipartite(self) -> bool:
        return True

    def num_nodes(self, ntype: str | None = None) -> int:
        """All source plus destination nodes when ``ntype`` is None. Of one type, as DGL counts:
        ``'SRC/t'`` / ``'DST/t'`` name one side; a plain type name the source side when ``t`` is a
        source type, the destination side otherwise."""
        if ntype is None:
            return sum(self._num_nodes.values())
        nt = self._ntype(ntype)
        named, bare = self._named_side(nt)
        if named is not None:
            return self._num_nodes[(named, bare)]
        return self._num_nodes[("src", nt) if ("src", nt) in self._num_nodes else ("dst", nt)]

    number_of_nodes = num_nodes

    @property
    def ndata(self):
        """On a block with one node type on each side: the source node data (DGL's blocks)."""
        return self.srcdata

    def __getitem__(self, etype: Any) -> "Block":
        """The block restricted to one edge type, sharing structure and features."""
        ct = self.to_canonical_etype(etype)
        st, _, dt = ct
        sub = Block({st: self._num_nodes[("src", st)]}, {dt: self._num_nodes[("dst", dt)]},
                    {ct: self._rels[ct]}, self._device)
        sub._node_frames = {("src", st): self._node_frames[("src", st)].clone_shallow(),
                            ("dst", dt): self._node_frames[("dst", dt)].clone_shallow()}
        sub._edge_frames = {ct: self._edge_frames[ct].clone_shallow()}
        return sub

    def _derive(self, rels: dict | None = None, device: str | None = None,
                frames: str = "share") -> "Block":
        """A block with new relations (same types) sharing or moving this block's features: what
        ``astype``, ``formats`` and ``to`` build (HeteroGraph's would lose the two sides)."""
        dev = self._device if device is None else device
        out = Block({nt: self._num_nodes[("src", nt)] for nt in self._srctypes},
                    {nt: self._num_nodes[("dst", nt)] for nt in self._dsttypes},
                    rels if rels is not None else dict(self._rels), dev)
        carry = (lambda f: f.clone_shallow()) if frames == "share" else (lambda f: f.to(dev))
        out._node_frames = {k: carry(f) for k, f in self._node_frames.items()}
        out._edge_frames = {k: carry(f) for k, f in self._edge_frames.items()}
        return out

    def to(self, device: Any, **kwargs: Any) -> "Block":
        """The block on ``device`` with its features."""
        dev = backend.current().canonical_device(device)
        if dev == self._device:
            return self
        return self._derive({ct: r.to(dev) for ct, r in self._rels.items()}, device=dev, frames="move")

    def __repr__(self) -> str:
        if len(self._srctypes) == 1 and len(self._dsttypes) == 1 and len(self._etypes) == 1:
            s, d, ct = self._srctypes[0], self._dsttypes[0], self._etypes[0]
            return (f"Block(num_src_nodes={self._num_nodes[('src', s)]}, "
                    f"num_dst_nodes={self._num_nodes[('dst', d)]}, "
                    f"num_edges={self._rels[ct].num_edges})")
        src = {nt: self._num_nodes[("src", nt)] for nt in self._srctypes}
        dst = {nt: self._num_nodes[("dst", nt)] for nt in self._dsttypes}
        ne = {ct: self._rels[ct].num_edges for ct in self._etypes}
        return f"Block(num_src_nodes={src},\n      num_dst_nodes={dst},\n      num_edges={ne})"


def _ids_by_type(nodes: Any, ntypes: list[str], name: str, counts: dict[str, int]) -> dict[str, np.ndarray]:
    from nodeweave.graph.heterograph import as_int_array, check_range

    if not isinstance(nodes, dict):
        if len(ntypes) != 1:
            raise nwerr.ValueError(f"{name} must be a dict {{ntype: ids}}: the graph has node types {ntypes}")
        nodes = {ntypes[0]: nodes}
    out = {}
    for nt, ids in nodes.items():
        if nt not in counts:
            raise nwerr.ValueError(f"{name}: unknown node type {nt!r} (the graph has {ntypes})")
        arr, _ = as_int_array(ids, f"{name}[{nt!r}]" if len(ntypes) > 1 else name)
        check_range(arr, counts[nt], name, f"nodes of type {nt!r}" if len(ntypes) > 1 else "nodes")
        out[nt] = arr
    return out


def block_from_parts(g: HeteroGraph, src_nodes: list[np.ndarray], dst_nodes: list[np.ndarray],
                     rels: list[RelationGraph], eids: list[np.ndarray],
                     edge_weights: list[np.ndarray] | None = None) -> Block:
    """A block over graph ``g``'s types from the C++ samplers' output (per node type in
    ``g.ntypes`` order, per relation in ``g.canonical_etypes`` order), with ``NID``/``EID`` stored
    and, from LABOR, ``edata['edge_weights']`` (float32 inverse inclusion probabilities). Every
    node type of ``g`` is kept on both sides (with zero nodes where nothing was sampled), as DGL's
    blocks, so every edge type has its two types."""
    B = backend.current()
    ntypes = g.ntypes
    block = Block({nt: len(src_nodes[i]) for i, nt in enumerate(ntypes)},
                  {nt: len(dst_nodes[i]) for i, nt in enumerate(ntypes)},
                  dict(zip(g.canonical_etypes, rels)), device="cpu")
    idt = g._idtype_name
    for i, nt in enumerate(ntypes):
        block._node_frames[("src", nt)][NID] = B.int_tensor(src_nodes[i], "cpu", idt)
        block._node_frames[("dst", nt)][NID] = B.int_tensor(dst_nodes[i], "cpu", idt)
    for ct, e in zip(g.canonical_etypes, eids):
        block._edge_frames[ct][EID] = B.int_tensor(e, "cpu", idt)
    for ct, w in zip(g.canonical_etypes, edge_weights or []):
        block._edge_frames[ct]["edge_weights"] = B.from_numpy(w.astype(np.float32))
    return block


def to_block(g: HeteroGraph, dst_nodes: Any = None, include_dst_in_src: bool = True,
             src_nodes: Any = None) -> Block:
    """The block of graph ``g``'s edges into ``dst_nodes`` (DGL's ``dgl.to_block``).

    ``g`` is usually a frontier: the edges sampled into a set of seeds (see
    :func:`nodeweave.sampling.sample_neighbors`). The block's destination nodes are ``dst_nodes``
    (ids of ``g``, unique; a dict per node type on heterographs, where a type left out has none and
    the edge types into it keep no edges; by default every node with an in-edge, in increasing id
    order). Its source nodes of each type start with that type's
    destination nodes (unless ``include_dst_in_src=False``) followed by the other nodes that send
    an edge, in order of first appearance. ``srcdata[NID]``, ``dstdata[NID]`` and ``edata[EID]``
    map back to ``g``; node features of ``g`` are gathered onto both sides and edge features carried
    over.

    ``src_nodes`` (optional) fixes the source order: it must list every source the relabelling
    would produce, destination nodes first.

    >>> import nodeweave as nw
    >>> frontier = nw.graph(([3, 0, 4], [0, 2, 2]), num_nodes=5)
    >>> b = nw.to_block(frontier, [2, 0])
    >>> b.srcdata[nw.NID].tolist(), b.edges()[0].tolist(), b.edges()[1].tolist()
    ([2, 0, 3, 4], [2, 1, 3], [1, 0, 0])
    >>> b.edata[nw.EID].tolist()
    [0, 1, 2]
    """
    if not isinstance(g, HeteroGraph):
        raise nwerr.TypeError(f"g must be a nodeweave graph, got {type(g).__name__}")
    if g.is_block:
        raise nwerr.ValueError("to_block: g is already a block; pass the frontier graph it was built from")
    ntypes = g.ntypes
    counts = {nt: g.num_nodes(nt) for nt in ntypes}
    if dst_nodes is None:
        dst = {nt: np.zeros(0, np.int64) for nt in ntypes}
        for ct in g.canonical_etypes:
            d = g._coo(ct)[1]
            dst[ct[2]] = np.union1d(dst[ct[2]], d.astype(np.int64))
    else:
        dst = _ids_by_type(dst_nodes, ntypes, "dst_nodes", counts)
    dst_list = [dst.get(nt, np.zeros(0, np.int64)) for nt in ntypes]
    # A node type left out of a dst_nodes dict has no destination nodes: the edge types into it
    # keep none of their edges (DGL's rule).
    dropped = {ct for ct in g.canonical_etypes if ct[2] not in dst}
    relations = []
    for ct in g.canonical_etypes:
        s, d = g._coo(ct)
        if ct in dropped:
            s, d = s[:0], d[:0]
        relations.append((ntypes.index(ct[0]), ntypes.index(ct[2]), s, d))
    src_list, src_local, dst_local = _C.sampling.to_block(dst_list, relations, include_dst_in_src,
                                                          [counts[nt] for nt in ntypes])
    if src_nodes is not None:
        want = _ids_by_type(src_nodes, ntypes, "src_nodes", counts)
        for i, nt in enumerate(ntypes):
            order = want.get(nt, np.zeros(0, np.int64))
            got = src_list[i]
            if sorted(order.tolist()) != sorted(got.tolist()) or (
                    include_dst_in_src and not np.array_equal(order[:len(dst_list[i])], dst_list[i])):
                raise nwerr.ValueError(f"src_nodes[{nt!r}] must be the block's source nodes "
                                       f"({len(got)} of them, destination nodes first)")
            remap = np.empty(len(got), np.int64)
            pos = {int(v): j for j, v in enumerate(order.tolist())}
            remap[:] = [pos[int(v)] for v in got.tolist()]
            for r, ct in enumerate(g.canonical_etypes):
                if ct[0] == nt:
                    src_local[r] = remap[src_local[r]]
            src_list[i] = order
    rels, eids = [], []
    idt = g._idtype_name
    for r, ct in enumerate(g.canonical_etypes):
        si, di = ntypes.index(ct[0]), ntypes.index(ct[2])
        # Edges keep the frontier's order (block edge i is frontier edge i), as DGL's to_block.
        rels.append(RelationGraph.from_coo(len(src_list[si]), len(dst_list[di]), src_local[r],
                                           dst_local[r], idt))
        eids.append(np.arange(len(src_local[r]), dtype=np.int64))
    block = block_from_parts(g, src_list, dst_list, rels, eids)
    for ct in g.canonical_etypes:
        # Edge features come along; a frontier's EID (ids in the graph it was sampled from)
        # replaces the positions block_from_parts stored.
        for name, col in g._edge_frames[ct].items():
            block._edge_frames[ct][name] = col if ct not in dropped else backend.of(col).index_select(col, np.zeros(0, np.int64))
    for i, nt in enumerate(ntypes):
        # Node features too, gathered for each side (DGL's to_block); NID stays the ids in g.
        frame = g._node_frames[nt]
        for name, col in frame.items():
            if name != NID:
                B = backend.of(col)
                block._node_frames[("src", nt)][name] = B.index_select(col, src_list[i])
                block._node_frames[("dst", nt)][name] = B.index_select(col, dst_list[i])
    if g._device != "cpu":
        block = block.to(g._device)
    return block


def create_block(data_dict: Any, num_src_nodes: Any = None, num_dst_nodes: Any = None,
                 idtype: Any = None, device: Any = None) -> Block:
    """A block from edges (DGL's ``dgl.create_block``): ``data_dict`` is the edges of one edge type
    in any form :func:`nodeweave.graph` takes (``(src, dst)``, a list of ``(u, v)`` pairs,
    ``('coo' | 'csr' | 'csc', arrays)``; CSR rows are sources) or a dict
    ``{(src_type, etype, dst_type): edges}``. Node counts are ints (one node type per side) or dicts
    per type; a type left out gets one more than the largest id it uses. ``idtype`` as for
    :func:`nodeweave.graph`.

    >>> import nodeweave as nw
    >>> b = nw.create_block(([0, 1, 2], [0, 0, 1]), num_src_nodes=3, num_dst_nodes=2)
    >>> b.num_src_nodes(), b.num_dst_nodes(), b.in_degrees().tolist()
    (3, 2, [2, 1])
    >>> nw.create_block([(0, 1), (2, 0)]).edges()[1].tolist()
    [1, 0]
    """
    from nodeweave.graph.edge_data import check_count, infer_idtype, parse_edges

    if not isinstance(data_dict, dict):
        data_dict = {("_N", "_E", "_N"): data_dict}
    specs = {}
    for ct, edges in data_dict.items():
        if not (isinstance(ct, tuple) and len(ct) == 3 and all(isinstance(t, str) for t in ct)):
            raise nwerr.ValueError(f"create_block: edge types must be (src_type, etype, dst_type), got {ct!r}")
        specs[ct] = parse_edges(edges, f"create_block: data_dict[{ct!r}]")
    counts = {}
    for side, given, pos in (("src", num_src_nodes, 0), ("dst", num_dst_nodes, 1)):
        types = list(dict.fromkeys(ct[2 * pos] for ct in specs))
        arg = f"num_{side}_nodes"
        if given is None:
            given = {}
        elif not isinstance(given, dict):
            given = {nt: given for nt in types}
        need = {nt: 0 for nt in types}
        for ct, spec in specs.items():
            need[ct[2 * pos]] = max(need[ct[2 * pos]], spec.needed()[pos])
        side_counts = {}
        for nt in list(given) + [t for t in types if t not in given]:
            if given.get(nt) is None:
                side_counts[nt] = need[nt]
                continue
            n = check_count(given[nt], f"{arg}[{nt!r}]" if len(given) > 1 else arg)
            if n < need.get(nt, 0):
                raise nwerr.ValueError(f"create_block: {arg}={n} for node type {nt!r} is too small: the edges "
                                       f"use {side} node id {need[nt] - 1}")
            side_counts[nt] = n
        counts[side] = side_counts
    idt = infer_idtype(idtype, list(specs.values()))
    rels = {ct: spec.build(counts["src"][ct[0]], counts["dst"][ct[2]], idt, None)
            for ct, spec in specs.items()}
    block = Block(counts["src"], counts["dst"], rels)
    return block if device is None else block.to(device)


def block_to_graph(block: Block) -> HeteroGraph:
    """The block as an ordinary graph (DGL's ``block_to_graph``): source node type ``t`` becomes
    ``'t_src'``, destination type ``t`` becomes ``'t_dst'``, edge types keep their names between
    them, and every feature tensor is shared (the same objects).

    >>> import nodeweave as nw
    >>> b = nw.create_block({("A", "AB", "B"): ([1, 2, 3], [2, 1, 0])})
    >>> g = nw.block_to_graph(b)
    >>> g.ntypes, g.canonical_etypes, g.is_block
    (['A_src', 'B_dst'], [('A_src', 'AB', 'B_dst')], False)
    """
    if not isinstance(block, Block):
        raise nwerr.TypeError(f"block_to_graph: block must be a Block, got {type(block).__name__}")
    num = {f"{nt}_src": block._num_nodes[("src", nt)] for nt in block.srctypes}
    num.update({f"{nt}_dst": block._num_nodes[("dst", nt)] for nt in block.dsttypes})
    rename = {ct: (f"{ct[0]}_src", ct[1], f"{ct[2]}_dst") for ct in block.canonical_etypes}
    g = HeteroGraph._create(num, {rename[ct]: block._rels[ct] for ct in block.canonical_etypes},
                            device=block._device)
    for (side, nt), frame in block._node_frames.items():
        g._node_frames[f"{nt}_{side}"] = frame.clone_shallow()
    for ct, frame in block._edge_frames.items():
        g._edge_frames[rename[ct]] = frame.clone_shallow()
    return g
