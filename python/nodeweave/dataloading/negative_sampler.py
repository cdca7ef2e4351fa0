"""Negative samplers for link prediction (DGL's ``dgl.dataloading.negative_sampler``).

A negative sampler turns the positive edges of a mini-batch into pairs ``(src, dst)`` to score as
non-edges: ``sampler(g, eids)`` returns ``(src, dst)`` id tensors for a graph with one edge type,
or ``{canonical_etype: (src, dst)}`` when ``eids`` is a dict ``{etype: ids}``, as DGL's
``negative_sampler.Base.__call__``. Both samplers run in C++ (``sampling/negative_sampler.h``);
a ``random_seed`` keyword fixes the result at any thread count, and each edge type of a call
draws from its own streams.

>>> import nodeweave as nw
>>> from nodeweave.dataloading import negative_sampler
>>> g = nw.graph(([0, 1, 2], [1, 2, 3]))
>>> src, dst = negative_sampler.Uniform(2)(g, [0, 1], random_seed=0)
>>> src.tolist()
[0, 0, 1, 1]
>>> src, dst = negative_sampler.GlobalUniform(2)(g, [0, 1], random_seed=0)
>>> len(src) <= 4 and not set(zip(src.tolist(), dst.tolist())) & {(0, 1), (1, 2), (2, 3)}
True
"""

from __future__ import annotations

import abc

from collections.abc import Mapping
from typing import Any

import numpy as np

from nodeweave import _C
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.id_sets import edge_sets
from nodeweave.sampling._seed import resolve_seed
from nodeweave.sampling.negative import global_uniform_negative_sampling
from nodeweave import errors as nwerr

__all__ = ["PerSourceUniform", "Uniform", "GlobalUniform"]


def _check_k(k: Any) -> int:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise nwerr.TypeError(f"k must be an int, got {type(k).__name__}")
    if k < 1:
        raise nwerr.ValueError(f"k must be >= 1 (negatives per positive edge), got {k}")
    return int(k)


class _BaseNegativeSampler(abc.ABC):
    """Dispatch of ``__call__`` over edge types; subclasses implement :meth:`_generate`."""

    @abc.abstractmethod
    def _generate(self, g: HeteroGraph, eids: np.ndarray, ct: tuple, seed: int, stream: int):
        """``(src, dst)`` NumPy arrays of the negatives of edges ``eids`` of type ``ct``."""

    def __call__(self, g: HeteroGraph, eids: Any, *, random_seed: int | None = None):
        """Negative pairs for the positive edges ``eids`` (ids, or ``{etype: ids}``).

        Returns ``(src, dst)``, or ``{canonical_etype: (src, dst)}`` for a dict ``eids``.
        """
        if not isinstance(g, HeteroGraph):
            raise nwerr.TypeError(f"g must be a nodeweave graph, got {type(g).__name__}")
        seed = resolve_seed(random_seed)
        sets = edge_sets(g, eids, "eids")
        if isinstance(eids, Mapping):
            given = [g.to_canonical_etype(et) for et in eids]
            return {ct: self._generate(g, sets[ct], ct, seed, g.canonical_etypes.index(ct)) for ct in given}
        ct = g.canonical_etypes[0]
        return self._generate(g, sets[ct], ct, seed, 0)


class PerSourceUniform(_BaseNegativeSampler):
    """For each positive edge ``(u, v)``, ``k`` pairs ``(u, v')`` with ``v'`` uniform over the
    destination node type (DGL's ``PerSourceUniform``; ``Uniform`` is the same class). Pairs
    ``[i * k, (i + 1) * k)`` belong to ``eids[i]``. The ``v'`` are not checked against existing
    edges, as in DGL: use :class:`GlobalUniform` for guaranteed non-edges.

    >>> import nodeweave as nw
    >>> g = nw.heterograph({("user", "buys", "item"): ([0, 1], [2, 0])}, {"user": 2, "item": 3})
    >>> neg = PerSourceUniform(3)(g, {"buys": [1]}, random_seed=4)
    >>> src, dst = neg[("user", "buys", "item")]
    >>> src.tolist(), all(0 <= v < 3 for v in dst.tolist())
    ([1, 1, 1], True)
    """

    def __init__(self, k: int) -> None:
        self.k = _check_k(k)

    def _generate(self, g, eids, ct, seed, stream):
        src, dst = _C.sampling.per_source_uniform_negatives(g._host(ct), eids, self.k, seed, stream)
        return g._ids_out(src), g._ids_out(dst)


Uniform = PerSourceUniform


class GlobalUniform(_BaseNegativeSampler):
    """For a batch of ``n`` positive edges, up to ``k * n`` pairs drawn uniformly among the pairs
    of the edge type that are not edges (DGL's ``GlobalUniform``), through
    :func:`nodeweave.sampling.global_uniform_negative_sampling`; see there for
    ``exclude_self_loops``, ``replace`` and ``redundancy``, and why fewer pairs may come back.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
    >>> src, dst = GlobalUniform(3, replace=True)(g, [0, 2], random_seed=1)
    >>> len(src), any(u == v for u, v in zip(src.tolist(), dst.tolist()))
    (6, False)
    """

    def __init__(self, k: int, exclude_self_loops: bool = True, replace: bool = False,
                 redundancy: float | None = None) -> None:
        self.k = _check_k(k)
        self.exclude_self_loops = exclude_self_loops
        self.replace = replace
        self.redundancy = redundancy

    def _generate(self, g, eids, ct, seed, stream):
        # The etype's index in g is the stream either way, so the standalone function and this
        # sampler agree for one seed.
        return global_uniform_negative_sampling(g, len(eids) * self.k, self.exclude_self_loops,
                                                self.replace, ct, self.redundancy, random_seed=seed)
