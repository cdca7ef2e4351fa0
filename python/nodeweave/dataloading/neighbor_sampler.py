"""Multi-layer neighbour sampling into blocks (DGL's ``dgl.dataloading.NeighborSampler``): one C++
call per batch samples every layer and compacts it (``sampling/block_sampler.cc``).

>>> import nodeweave as nw
>>> g = nw.graph(([1, 2, 3, 4, 0, 0, 2], [0, 0, 0, 0, 1, 2, 1]))
>>> sampler = nw.dataloading.NeighborSampler([2, 2])
>>> input_nodes, output_nodes, blocks = sampler.sample(g, [0], random_seed=0)
>>> [b.num_dst_nodes() for b in blocks], output_nodes.tolist()
([3, 1], [0])
>>> blocks[0].dstdata[nw.NID].tolist() == blocks[1].srcdata[nw.NID].tolist()
True
"""

from __future__ import annotations

import weakref
from typing import Any, Sequence

import numpy as np

from nodeweave import _C, backend
from nodeweave.dataloading.base import BlockSampler
from nodeweave.graph.block import Block, block_from_parts
from nodeweave.graph.transforms import NID
from nodeweave.sampling._seed import resolve_seed
from nodeweave.graph.id_sets import edge_sets, node_sets
from nodeweave.sampling.neighbor import check_graph, edge_weights, fanout_value, per_etype
from nodeweave import errors as nwerr

__all__ = ["NeighborSampler", "MultiLayerFullNeighborSampler", "MultiLayerNeighborSampler"]


def check_fanouts(fanouts: Any) -> list:
    if isinstance(fanouts, (str, bytes)) or not isinstance(fanouts, Sequence):
        raise nwerr.TypeError(f"fanouts must be a list with one fanout per layer, got {type(fanouts).__name__}")
    if len(fanouts) == 0:
        raise nwerr.ValueError("fanouts must name at least one layer, got an empty list")
    out = []
    for i, f in enumerate(fanouts):
        if isinstance(f, dict):
            out.append({k: fanout_value(v, f"fanouts[{i}][{k!r}]") for k, v in f.items()})
        else:
            out.append(fanout_value(f, f"fanouts[{i}]"))
    return out


class NeighborSampler(BlockSampler):
    """Samples ``fanouts[l]`` neighbours per node and layer, from the output nodes towards the
    input (``fanouts[0]`` is the input layer, as DGL).

    Parameters
    ----------
    fanouts : list of int or of ``{etype: int}``
        One entry per layer; -1 takes every neighbour.
    edge_dir : 'in' or 'out'
        Sample in-edges (messages flow along edges) or out-edges (against them).
    prob : str, optional
        Edge feature of non-negative sampling weights.
    mask : str, optional
        Bool edge feature: only edges where it is True are sampled.
    replace : bool
        Sample with replacement.
    prefetch_node_feats, prefetch_labels, prefetch_edge_feats, output_device
        See :class:`~nodeweave.dataloading.BlockSampler`.

    The C++ sampler is built once per graph (weights validated and laid out once) and reused.
    """

    def __init__(self, fanouts: Sequence[Any], edge_dir: str = "in", prob: str | None = None,
                 mask: str | None = None, replace: bool = False, prefetch_node_feats: Any = None,
                 prefetch_labels: Any = None, prefetch_edge_feats: Any = None,
                 output_device: Any = None) -> None:
        super().__init__(prefetch_node_feats, prefetch_labels, prefetch_edge_feats, output_device)
        self.fanouts = check_fanouts(fanouts)
        if edge_dir not in ("in", "out"):
            raise nwerr.ValueError(f"edge_dir must be 'in' or 'out', got {edge_dir!r}")
        if prob is not None and mask is not None:
            raise nwerr.ValueError("pass either prob or mask, not both")
        self.edge_dir = edge_dir
        self.prob = prob
        self.mask = mask
        self.replace = bool(replace)
        self._cpp: tuple | None = None

    @property
    def num_layers(self) -> int:
        return len(self.fanouts)

    def native_sampler(self, g: Any):
        """The C++ ``BlockSampler`` for graph ``g`` (built on first use, rebuilt when ``g`` or the
        weight feature tensor changes)."""
        weight_name = self.prob if self.prob is not None else self.mask
        cols = tuple(id(g._edge_frames[ct][weight_name]) if weight_name in g._edge_frames[ct] else None
                     for ct in g.canonical_etypes) if weight_name else ()
        if self._cpp is not None:
            ref, key, sampler = self._cpp
            if ref() is g and key == cols:
                return sampler
        ntypes, etypes = g.ntypes, g.canonical_etypes
        fanouts = [[v[ct] for ct in etypes] for v in (per_etype(g, f, "fanouts", fanout_value) for f in self.fanouts)]
        relations = []
        for ct in etypes:
            arg = "prob" if self.prob is not None else "mask"
            w = edge_weights(g, ct, weight_name, arg) if weight_name else None
            if self.mask is not None and w is not None and w.dtype != np.bool_:
                raise nwerr.TypeError(f"mask: edge feature {self.mask!r} must be bool, got {w.dtype}")
            rel = g._rels[ct] if g._device == "cpu" else g._host(ct)
            relations.append((ntypes.index(ct[0]), ntypes.index(ct[2]), rel, w))
        if self.edge_dir == "out" and len(etypes) > 1:
            raise nwerr.ValueError("edge_dir='out' blocks are built on graphs with one edge type; reverse the "
                                   "heterograph (nw.reverse) and sample in-edges instead")
        sampler = _C.sampling.BlockSampler([g.num_nodes(nt) for nt in ntypes], relations, fanouts,
                                           self.replace, self.edge_dir == "out", **self.native_options())
        self._cpp = (weakref.ref(g), cols, sampler)
        return sampler

    def native_options(self) -> dict:
        """Extra options of the C++ BlockSampler (the kind of sampling and its parameters)."""
        return {"kind": "neighbor"}

    def sample_blocks(self, g: Any, seed_nodes: Any, exclude_eids: Any = None, *,
                      random_seed: int | None = None) -> tuple[Any, Any, list[Block]]:
        check_graph(g, type(self).__name__)
        ntypes = g.ntypes
        seeds = node_sets(g, seed_nodes, "seed_nodes")
        excl = edge_sets(g, exclude_eids, "exclude_eids") if exclude_eids is not None else {}
        raw = self.native_sampler(g).sample(
            [seeds.get(nt, np.zeros(0, np.int64)) for nt in ntypes], resolve_seed(random_seed),
            [excl.get(ct) for ct in g.canonical_etypes], g._idtype_name)
        blocks = [block_from_parts(g, *parts) for parts in raw]
        return finish_blocks(g, blocks, self.output_device)


def finish_blocks(g: Any, blocks: list[Block], output_device: Any) -> tuple[Any, Any, list[Block]]:
    """``(input_nodes, output_nodes, blocks)`` with the blocks moved to ``output_device`` (default:
    the graph's device). Node ids are tensors, or ``{ntype: tensor}`` on heterographs."""
    device = g._device if output_device is None else backend.current().canonical_device(output_device)
    if device != "cpu":
        blocks = [b.to(device) for b in blocks]
    first, last = blocks[0], blocks[-1]
    if len(g.ntypes) == 1:
        input_nodes, output_nodes = first.srcdata[NID], last.dstdata[NID]
    else:
        input_nodes = {nt: first._node_frames[("src", nt)][NID] for nt in g.ntypes}
        output_nodes = {nt: last._node_frames[("dst", nt)][NID] for nt in g.ntypes}
    return input_nodes, output_nodes, blocks


class MultiLayerFullNeighborSampler(NeighborSampler):
    """Every neighbour on every layer: ``NeighborSampler([-1] * num_layers)``. A layer applied to
    its blocks equals the full-graph layer restricted to the seeds.

    >>> import nodeweave as nw
    >>> g = nw.graph(([1, 2, 3], [0, 0, 1]))
    >>> _, _, blocks = nw.dataloading.MultiLayerFullNeighborSampler(2).sample(g, [0])
    >>> [b.num_edges() for b in blocks]
    [3, 2]
    """

    def __init__(self, num_layers: int, **kwargs: Any) -> None:
        if isinstance(num_layers, bool) or not isinstance(num_layers, (int, np.integer)) or num_layers < 1:
            raise nwerr.ValueError(f"num_layers must be a positive int, got {num_layers!r}")
        super().__init__([-1] * int(num_layers), **kwargs)


MultiLayerNeighborSampler = NeighborSampler  # DGL's pre-0.8 name
