"""Positional encodings of the nodes of a homogeneous graph (DGL's ``random_walk_pe``, ``lap_pe`` /
``laplacian_pe`` and ``svd_pe``): per-node float32 vectors computed from the adjacency matrix
with NumPy/SciPy, returned as ``(num_nodes, ...)`` tensors of the active backend on the graph's device.

The adjacency matrix ``A`` counts edges: ``A[u, v]`` is the number of edges ``u -> v`` (rows are
sources, as :meth:`~nodeweave.HeteroGraph.adj`). Random sign flips are drawn from nodeweave's
default generator, so ``nodeweave.core.manual_seed`` makes them repeatable.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1, 1], [1, 1, 0]))
>>> nw.random_walk_pe(g, 2).tolist()
[[0.0, 0.5], [0.5, 0.75]]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from nodeweave import backend
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave.graph.transforms._common import (_adjacency, _check_graph, _check_k, _edge_weights, _homo_types,
                                                _normalized_laplacian)
from nodeweave.sampling._seed import numpy_generator
from nodeweave import errors as nwerr

__all__ = ["random_walk_pe", "lap_pe", "laplacian_pe", "svd_pe"]

# Up to this many nodes lap_pe solves the dense eigenproblem (exact, O(n^3)); above it, a sparse
# Lanczos solver finds only the k + 1 eigenpairs it needs.
DENSE_EIGEN_LIMIT = 2000


def _out(arr: np.ndarray, g: HeteroGraph) -> Any:
    return backend.current().from_numpy(np.ascontiguousarray(arr, np.float32), g._device)


def random_walk_pe(g: HeteroGraph, k: int, eweight_name: str | None = None) -> Any:
    """Random-walk positional encoding (Dwivedi et al., ICLR 2022): column ``i`` holds each node's
    probability of being back where it started after ``i + 1`` steps of a random walk.

    The walk moves along out-edges with probability proportional to their count (or to the
    weights ``edata[eweight_name]``): ``P = D_out^-1 A``, and the result is
    ``[diag(P), diag(P^2), ..., diag(P^k)]``, shape ``(N, k)``, float32. A node without out-edges
    has a zero row in ``P``.

    >>> import nodeweave as nw
    >>> nw.random_walk_pe(nw.graph(([0, 1, 2], [1, 2, 0])), 3).tolist()
    [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    """
    _check_graph(g)
    k = _check_k(k, "random_walk_pe", low=1)
    _homo_types(g, "random_walk_pe")
    w = None if eweight_name is None else _edge_weights(g, g._etypes[0], eweight_name, "random_walk_pe")
    a = _adjacency(g, "random_walk_pe", w)
    rowsum = np.asarray(a.sum(1)).ravel()
    inv = np.divide(1.0, rowsum, out=np.zeros_like(rowsum), where=rowsum != 0)
    p = sp.diags(inv) @ a
    p = p.tocsr()
    cols = []
    power = p
    for i in range(k):
        if i:
            power = (power @ p).tocsr()
        cols.append(power.diagonal())
    return _out(np.stack(cols, 1) if cols else np.zeros((a.shape[0], 0)), g)


def _smallest_eigenpairs_directed(lap: sp.csr_matrix, count: int) -> tuple[np.ndarray, np.ndarray]:
    """For a non-symmetric ``lap`` (a directed graph), as DGL: the ``count`` eigenvalues of smallest
    real part (ascending) and their eigenvectors, both as real parts. The eigenpairs may be complex;
    the real part of an eigenvector depends on the solver's choice of its phase, so these vectors
    are only defined up to that choice."""
    n = lap.shape[0]
    if n <= DENSE_EIGEN_LIMIT or count >= n - 1:
        vals, vecs = np.linalg.eig(lap.toarray())
    else:
        from scipy.sparse.linalg import eigs

        start = np.ones(n) / np.sqrt(n)  # a fixed start vector: the same graph gives the same result
        vals, vecs = eigs(lap, k=count, which="SR", v0=start)
    order = np.argsort(vals.real, kind="stable")[:count]
    return vals[order].real, vecs[:, order].real


def _smallest_eigenpairs(lap: sp.csr_matrix, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` smallest eigenvalues (ascending) of the symmetric ``lap`` and their
    eigenvectors (columns)."""
    n = lap.shape[0]
    if n <= DENSE_EIGEN_LIMIT or count >= n - 1:
        vals, vecs = np.linalg.eigh(lap.toarray())
        return vals[:count], vecs[:, :count]
    from scipy.sparse.linalg import eigsh

    # The normalized Laplacian's spectrum lies in [0, 2]: the smallest eigenvalues of L are the
    # largest of 2I - L, which Lanczos finds quickly (the smallest of L directly converge slowly).
    shifted = (2.0 * sp.identity(n, format="csr") - lap).tocsr()
    start = np.ones(n) / np.sqrt(n)  # a fixed start vector: the same graph gives the same result
    vals, vecs = eigsh(shifted, k=count, which="LA", v0=start)
    vals = 2.0 - vals
    order = np.argsort(vals, kind="stable")
    return vals[order], vecs[:, order]


def lap_pe(g: HeteroGraph, k: int, padding: bool = False, return_eigval: bool = False):
    """Laplacian positional encoding (Dwivedi et al., "Benchmarking Graph Neural Networks"): the
    eigenvectors of the ``k`` smallest non-trivial eigenvalues of the normalized Laplacian
    ``L = I - D^-1/2 A D^-1/2`` (``D``: in-degrees, at least 1), each multiplied by a random sign.

    "Non-trivial" skips the smallest eigenvalue (0 for a graph with edges). Up to
    ``DENSE_EIGEN_LIMIT`` nodes the dense eigenproblem is solved exactly, above it a sparse solver
    finds the ``k + 1`` pairs.

    On a directed graph ``L`` is not symmetric; as DGL, the eigenvalues are then ordered by real
    part and the result holds the real parts of the (possibly complex) eigenvectors and eigenvalues.
    Those real parts depend on the phase the eigensolver gives each complex eigenvector, so prefer a
    bidirected graph (:func:`~nodeweave.to_bidirected`) when the encoding should be well defined.

    Parameters
    ----------
    k : int
        Number of eigenvectors.
    padding : bool
        When ``k >= N``: pad with zero columns (eigenvalues with NaN) to width ``k`` instead of
        raising ValueError.
    return_eigval : bool
        Also return the ``k`` eigenvalues (float32, ascending).

    Returns
    -------
    Tensor ``(N, k)`` float32, or ``(PE, eigenvalues)``.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2, 3, 1, 2, 3, 0], [1, 2, 3, 0, 0, 1, 2, 3]))   # a 4-cycle
    >>> pe, val = nw.lap_pe(g, 3, return_eigval=True)
    >>> tuple(pe.shape), [round(x, 4) for x in val.tolist()]
    ((4, 3), [1.0, 1.0, 2.0])
    """
    _check_graph(g)
    k = _check_k(k, "lap_pe", low=1)
    lap = _normalized_laplacian(g, "lap_pe", bidirected=False)
    n = lap.shape[0]
    eigenpairs = _smallest_eigenpairs if not (lap != lap.T).nnz else _smallest_eigenpairs_directed
    if n <= k and not padding:
        raise nwerr.ValueError(f"lap_pe: k must be smaller than the number of nodes, got k={k} for {n} nodes "
                               "(pass padding=True to pad with zeros)")
    m = min(k, n - 1) if n else 0  # eigenvectors that exist after skipping the trivial one
    vals, vecs = eigenpairs(lap, m + 1) if m > 0 else (np.zeros(0), np.zeros((n, 0)))
    vals, vecs = vals[1:m + 1], vecs[:, 1:m + 1]
    signs = numpy_generator().choice(np.array([-1.0, 1.0]), size=m)
    pe = np.zeros((n, k))
    pe[:, :m] = vecs * signs
    eig = np.full(k, np.nan)
    eig[:m] = vals
    pe_t = _out(pe, g)
    return (pe_t, _out(eig, g)) if return_eigval else pe_t


def laplacian_pe(g: HeteroGraph, k: int, padding: bool = False, return_eigval: bool = False):
    """The same as :func:`lap_pe` (DGL's older name).

    >>> import nodeweave as nw
    >>> tuple(nw.laplacian_pe(nw.graph(([0, 1], [1, 0]), num_nodes=3), 1).shape)
    (3, 1)
    """
    return lap_pe(g, k, padding=padding, return_eigval=return_eigval)


def svd_pe(g: HeteroGraph, k: int, padding: bool = False, random_flip: bool = True) -> Any:
    """SVD positional encoding (Hussain et al., "Global Self-Attention as a Replacement for Graph
    Convolution"): with ``A = U S V^T``, node ``i`` gets ``[U[i, :k] sqrt(S_k), V[i, :k] sqrt(S_k)]``
    for the ``k`` largest singular values, shape ``(N, 2k)``, float32.

    Parameters
    ----------
    k : int
    padding : bool
        When ``k > N``: pad with ``2 (k - N)`` zero columns instead of raising ValueError.
    random_flip : bool
        Multiply each node's row by a random sign (a training-time augmentation).

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2], [1, 2, 0]))
    >>> pe = nw.svd_pe(g, 2, random_flip=False)
    >>> tuple(pe.shape)
    (3, 4)
    """
    _check_graph(g)
    k = _check_k(k, "svd_pe", low=1)
    a = _adjacency(g, "svd_pe").toarray()
    n = a.shape[0]
    if n < k and not padding:
        raise nwerr.ValueError(f"svd_pe: k must be at most the number of nodes, got k={k} for {n} nodes "
                               "(pass padding=True to pad with zeros)")
    m = min(n, k)
    u, s, vh = np.linalg.svd(a) if n else (np.zeros((0, 0)), np.zeros(0), np.zeros((0, 0)))
    root = np.sqrt(s[:m])
    enc = np.zeros((n, 2 * k))
    enc[:, :m] = u[:, :m] * root
    enc[:, m:2 * m] = vh[:m].T * root
    if random_flip:
        enc *= numpy_generator().choice(np.array([-1.0, 1.0]), size=n)[:, None]
    return _out(enc, g)
