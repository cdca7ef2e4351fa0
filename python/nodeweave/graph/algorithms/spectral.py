"""The largest eigenvalue of the normalized Laplacian (DGL's ``laplacian_lambda_max``), which
ChebConv-style layers use to rescale the Laplacian's spectrum into ``[-1, 1]``.

>>> import nodeweave as nw
>>> ring = nw.graph(([0, 1, 2, 3, 4, 0, 1, 2, 3, 4], [1, 2, 3, 4, 0, 4, 0, 1, 2, 3]))
>>> [round(x, 6) for x in nw.laplacian_lambda_max(ring)]       # 1 - cos(4 pi / 5)
[1.809017]
"""

from __future__ import annotations

import numpy as np

from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms._common import _bnn, _check_graph, _homo_types, _normalized_laplacian
from nodeweave import errors as nwerr

__all__ = ["laplacian_lambda_max"]

# Up to this many nodes a graph's eigenvalues come from the dense symmetric solver (exact, and
# cheaper than starting Lanczos on so small a matrix); above it, Lanczos finds only the largest.
DENSE_LIMIT = 256


def laplacian_lambda_max(g: HeteroGraph) -> list[float]:
    """The largest eigenvalue of ``L = I - D^-1/2 A D^-1/2`` (``D``: in-degrees, at least 1) of
    each graph of a batch (one for an unbatched graph), as a list of Python floats.

    The graph must be homogeneous and bidirected (``A`` symmetric, so ``L`` is and its eigenvalues
    are real, in ``[0, 2]``); ValueError names a pair of nodes joined unequally otherwise (DGL does
    not check, and on a directed graph returns the real part of a complex eigenvalue).

    >>> import nodeweave as nw
    >>> pair = nw.graph(([0, 1], [1, 0]))
    >>> nw.laplacian_lambda_max(nw.batch([pair, pair]))    # I - A for one edge: eigenvalues 0, 2
    [2.0, 2.0]
    """
    fn = "laplacian_lambda_max"
    _check_graph(g)
    nt, _ = _homo_types(g, fn)
    lap = _normalized_laplacian(g, fn)
    counts = _bnn(g)[nt]
    out = []
    start = 0
    for i, n in enumerate(counts.tolist()):
        if n == 0:
            raise nwerr.ValueError(f"{fn}: graph {i} of the batch has no nodes, so no eigenvalue")
        block = lap[start:start + n, start:start + n]
        start += n
        if n <= DENSE_LIMIT:
            out.append(float(np.linalg.eigvalsh(block.toarray())[-1]))
            continue
        from scipy.sparse.linalg import eigsh

        # A fixed start vector: the same graph gives the same digits on every run.
        val = eigsh(block, k=1, which="LA", v0=np.ones(n) / np.sqrt(n), return_eigenvectors=False)
        out.append(float(val[0]))
    return out
