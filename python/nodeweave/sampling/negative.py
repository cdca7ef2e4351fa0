"""Global negative sampling (DGL's ``dgl.sampling.global_uniform_negative_sampling``).

Pairs ``(u, v)`` drawn uniformly among the pairs that are *not* edges of one edge type, for link
prediction. The sampling runs in C++ (``sampling/negative_sampler.h``) without the GIL; the check
that a pair is not an edge is exact. The same ``random_seed`` gives the same pairs at any thread
count.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1, 2], [1, 2, 3]))
>>> src, dst = nw.sampling.global_uniform_negative_sampling(g, 4, random_seed=0)
>>> len(src)
4
>>> existing = set(zip(*[t.tolist() for t in g.edges()]))
>>> any(p in existing or p[0] == p[1] for p in zip(src.tolist(), dst.tolist()))
False
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import _C
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.sampling._seed import resolve_seed
from nodeweave import errors as nwerr

__all__ = ["global_uniform_negative_sampling"]


def _check_count(x: Any, name: str) -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise nwerr.TypeError(f"{name} must be an int, got {type(x).__name__}")
    if x < 0:
        raise nwerr.ValueError(f"{name} must be >= 0, got {x}")
    return int(x)


def _check_redundancy(x: Any) -> float | None:
    if x is None:
        return None
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise nwerr.TypeError(f"redundancy must be a number or None, got {type(x).__name__}")
    if not np.isfinite(x) or x < 0:
        raise nwerr.ValueError(f"redundancy must be a finite number >= 0, got {x}")
    return float(x)


def global_uniform_negative_sampling(g: HeteroGraph, num_samples: int, exclude_self_loops: bool = True,
                                     replace: bool = False, etype: str | tuple | None = None,
                                     redundancy: float | None = None, *, random_seed: int | None = None):
    """Up to ``num_samples`` pairs ``(src, dst)`` of edge type ``etype`` that are not edges of ``g``.

    ``src`` ids lie in ``[0, g.num_nodes(src_type))`` and ``dst`` ids in
    ``[0, g.num_nodes(dst_type))``; no returned pair is an edge of ``etype``.

    Parameters
    ----------
    g : HeteroGraph
    num_samples : int
        How many pairs to return.
    exclude_self_loops : bool
        Leave out pairs ``(v, v)``; only applies when the edge type joins a node type to itself.
    replace : bool
        Allow a pair to appear more than once. Without replacement every pair is distinct.
    etype : str or (str, str, str), optional
        The edge type; may be omitted when ``g`` has one.
    redundancy : float, optional
        Extra candidates to draw in the first round, as a fraction of ``num_samples`` (DGL's
        parameter); by default it follows from the edge type's density.
    random_seed : int, optional
        Fixes the result (see :mod:`nodeweave.sampling._seed`).

    Returns
    -------
    (src, dst) : id tensors of the graph's idtype on the active backend, in random order.

    Notes
    -----
    As DGL's sampler, it may return fewer than ``num_samples`` pairs when the edge type is so dense
    (or the graph so small) that non-edges are rare or fewer than ``num_samples`` distinct ones
    exist. Candidates are drawn in rounds until enough are found or a round finds nothing new.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 0, 1, 1], [0, 1, 0, 1]))  # every pair of nodes 0 and 1 is an edge
    >>> src, dst = nw.sampling.global_uniform_negative_sampling(g, 3, random_seed=1)
    >>> len(src)
    0
    """
    if not isinstance(g, HeteroGraph):
        raise nwerr.TypeError(f"g must be a nodeweave graph, got {type(g).__name__}")
    num_samples = _check_count(num_samples, "num_samples")
    redundancy = _check_redundancy(redundancy)
    ct = g.to_canonical_etype(etype)
    seed = resolve_seed(random_seed)
    no_loops = bool(exclude_self_loops) and ct[0] == ct[2]
    src, dst = _C.sampling.global_uniform_negatives(g._host(ct), num_samples, no_loops, bool(replace),
                                                    redundancy, seed, g.canonical_etypes.index(ct))
    return g._ids_out(src), g._ids_out(dst)
