"""What every graph sampler of :mod:`nodeweave.dataloading` shares: the sampler protocol, the
feature prefetching options of DGL's ``BlockSampler``, and id conversion.

A sampler is any object with ``sample(g, indices)``; the :class:`~nodeweave.dataloading.DataLoader`
calls it once per batch of seed nodes (or edges). Samplers that draw random numbers also take a
keyword ``random_seed``: the loader passes a key derived from its seed, the epoch and the batch
index, so a run is repeatable bit for bit at any thread count.
"""

from __future__ import annotations

import abc
from typing import Any, Sequence

import numpy as np

from nodeweave import backend
from nodeweave.graph.transforms import EID, NID
from nodeweave import errors as nwerr

__all__ = ["Sampler", "BlockSampler", "set_node_lazy_features", "set_edge_lazy_features",
           "set_src_lazy_features", "set_dst_lazy_features"]


class Sampler(abc.ABC):
    """Base class of graph samplers: ``sample(g, indices, *, random_seed=None)`` returns what the
    :class:`~nodeweave.dataloading.DataLoader` yields for one batch."""

    @abc.abstractmethod
    def sample(self, g: Any, indices: Any, *, random_seed: int | None = None) -> Any:
        """One batch's output for the seed ``indices`` of graph ``g``."""


def _names(x: Any, arg: str) -> list[str]:
    if x is None:
        return []
    if isinstance(x, str):
        return [x]
    if isinstance(x, (list, tuple)) and all(isinstance(n, str) for n in x):
        return list(x)
    raise nwerr.TypeError(f"{arg} must be a feature name or a list of names, got {x!r}")


class BlockSampler(Sampler):
    """A sampler that returns ``(input_nodes, output_nodes, blocks)`` (DGL's ``BlockSampler``).

    Subclasses implement :meth:`sample_blocks`. The ``prefetch_*`` options name features the
    loader copies into the blocks ahead of use (gathered by the C++ workers where the loader runs
    them): node features of the input nodes into ``blocks[0].srcdata``, labels of the output nodes
    into ``blocks[-1].dstdata``, and edge features into every block's ``edata``. Every other
    feature of the graph is on every block too, as in DGL (``srcdata``, ``dstdata`` and ``edata``),
    gathered from the graph when it is first read.
    """

    def __init__(self, prefetch_node_feats: Sequence[str] | None = None,
                 prefetch_labels: Sequence[str] | None = None,
                 prefetch_edge_feats: Sequence[str] | None = None, output_device: Any = None) -> None:
        self.prefetch_node_feats = _names(prefetch_node_feats, "prefetch_node_feats")
        self.prefetch_labels = _names(prefetch_labels, "prefetch_labels")
        self.prefetch_edge_feats = _names(prefetch_edge_feats, "prefetch_edge_feats")
        self.output_device = output_device

    @abc.abstractmethod
    def sample_blocks(self, g: Any, seed_nodes: Any, exclude_eids: Any = None, *,
                      random_seed: int | None = None) -> tuple[Any, Any, list]:
        """``(input_nodes, output_nodes, blocks)`` for the seeds, blocks input layer first."""

    def sample(self, g: Any, seed_nodes: Any, exclude_eids: Any = None, *,
               random_seed: int | None = None) -> tuple[Any, Any, list]:
        input_nodes, output_nodes, blocks = self.sample_blocks(g, seed_nodes, exclude_eids,
                                                               random_seed=random_seed)
        self.attach_features(g, blocks)
        return input_nodes, output_nodes, blocks

    def attach_features(self, g: Any, blocks: list, ready: dict | None = None) -> None:
        """Copies the prefetched features into the blocks, gathering them from ``g`` unless
        ``ready`` already holds them as ``{('src' | 'dst', ntype, name): tensor}`` (the C++
        loader's gathered rows)."""
        if not blocks:
            return
        first, last = blocks[0], blocks[-1]
        for name in self.prefetch_node_feats:
            set_src_lazy_features(first, g, name, ready)
        for name in self.prefetch_labels:
            set_dst_lazy_features(last, g, name, ready)
        for name in self.prefetch_edge_feats:
            for b in blocks:
                set_edge_lazy_features(b, g, name)
        for b in blocks:
            attach_remaining_features(b, g)


def attach_remaining_features(block: Any, g: Any) -> None:
    """Every node and edge feature of ``g`` that ``block`` does not hold yet (its ``_ID`` columns
    and the prefetched features stay), as a column gathered from ``g`` when first read."""
    for side in ("src", "dst"):
        for nt in (block.srctypes if side == "src" else block.dsttypes):
            frame = block._node_frames[block._node_key(side, nt)]
            parent = g._node_frames[g._node_key("all", nt)]
            missing = [name for name in parent if name not in frame]
            if missing:
                ids = _ids_np(frame[NID])
                for name in missing:
                    frame.set_lazy(name, parent[name], ids)
    for ct in block.canonical_etypes:
        frame, parent = block._edge_frames[ct], g._edge_frames[ct]
        missing = [name for name in parent if name not in frame]
        if missing:
            ids = _ids_np(frame[EID])
            for name in missing:
                frame.set_lazy(name, parent[name], ids)


def _gather(col: Any, ids: np.ndarray) -> Any:
    b = backend.of(col)
    return b.index_select(col, b.int_tensor(ids, b.device_str(col), "int64"))


def _ids_np(t: Any) -> np.ndarray:
    return backend.of(t).to_numpy(t).astype(np.int64, copy=False)


def set_src_lazy_features(block: Any, g: Any, name: str, ready: dict | None = None) -> None:
    """``block.srcdata[name]`` = ``g``'s node feature ``name`` of the block's source nodes (every
    node type that has it)."""
    for nt in block.srctypes:
        if ("src", nt, name) in (ready or {}):
            block._node_frames[block._node_key("src", nt)][name] = ready[("src", nt, name)]
            continue
        frame = g._node_frames[g._node_key("all", nt)]
        if name in frame:
            ids = _ids_np(block._node_frames[block._node_key("src", nt)][NID])
            block._node_frames[block._node_key("src", nt)][name] = _gather(frame[name], ids)


def set_dst_lazy_features(block: Any, g: Any, name: str, ready: dict | None = None) -> None:
    """``block.dstdata[name]`` = ``g``'s node feature ``name`` of the block's destination nodes."""
    for nt in block.dsttypes:
        if ("dst", nt, name) in (ready or {}):
            block._node_frames[block._node_key("dst", nt)][name] = ready[("dst", nt, name)]
            continue
        frame = g._node_frames[g._node_key("all", nt)]
        if name in frame:
            ids = _ids_np(block._node_frames[block._node_key("dst", nt)][NID])
            block._node_frames[block._node_key("dst", nt)][name] = _gather(frame[name], ids)


set_node_lazy_features = set_src_lazy_features


def set_edge_lazy_features(block: Any, g: Any, name: str) -> None:
    """``block.edata[name]`` = ``g``'s edge feature ``name`` of the block's edges."""
    for ct in block.canonical_etypes:
        frame = g._edge_frames[ct]
        if name in frame:
            ids = _ids_np(block._edge_frames[ct][EID])
            block._edge_frames[ct][name] = _gather(frame[name], ids)
