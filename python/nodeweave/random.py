"""``nodeweave.seed`` (as ``dgl.seed`` / ``dgl.random.seed``): one call that makes nodeweave's own
randomness repeatable; and ``choice`` (``dgl.random.choice``), a draw from that generator.

nodeweave draws every random number from one generator, the engine's default generator: random
tensors and dropout of :mod:`nodeweave.core`, the seeds of every sampler and of the mini-batch loader
when none is given (:mod:`nodeweave.sampling`, :mod:`nodeweave.dataloading`), and the random graph
generators (``nw.rand_graph`` ...) when called without ``seed=``. Seeding it seeds all of them; it is
the generator ``nodeweave.core.manual_seed`` seeds.

As ``dgl.seed``, it leaves other libraries' generators alone: NumPy's and Python's global state,
and PyTorch's (which the pytorch backend's layers use to initialise weights and for dropout), are
seeded by ``np.random.seed``, ``random.seed`` and ``torch.manual_seed``.

>>> import nodeweave as nw
>>> nw.seed(42)
>>> a = nw.rand_graph(10, 20).edges()[0].tolist()
>>> nw.seed(42)
>>> nw.rand_graph(10, 20).edges()[0].tolist() == a
True
>>> nw.seed(-1)
Traceback (most recent call last):
...
nodeweave.errors.ValueError: seed must be an int in [0, 2**64), got -1
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import _C, backend
from nodeweave.sampling._seed import check_seed, numpy_generator
from nodeweave import errors as nwerr

__all__ = ["seed", "choice"]


def seed(val: Any) -> None:
    """Seeds nodeweave's generator with ``val``, an int in ``[0, 2**64)``."""
    _C.manual_seed(check_seed(val, "seed"))


def choice(a: Any, size: Any, replace: bool = True, prob: Any = None) -> Any:
    """``size`` elements drawn from ``a`` (an int ``n``: from ``0 .. n-1``; or a 1-D tensor),
    with or without replacement, uniformly or with probabilities ``prob`` (one non-negative weight
    per element, normalised here), from nodeweave's generator (DGL's ``dgl.random.choice``).

    Returns a tensor of the active backend: int64 ids for an int ``a``, else elements of ``a``.

    >>> import nodeweave as nw
    >>> nw.seed(0)
    >>> sorted(nw.random.choice(5, 5, replace=False).tolist())
    [0, 1, 2, 3, 4]
    """
    Ba = backend.of(a)
    if Ba is None:
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)) or a < 0:
            raise nwerr.ValueError(f"choice: a must be an int >= 0 or a 1-D tensor, got {a!r}")
        n = int(a)
    else:
        if len(Ba.shape(a)) != 1:
            raise nwerr.ValueError(f"choice: a must be 1-D, got shape {Ba.shape(a)}")
        n = Ba.shape(a)[0]
    p = None
    if prob is not None:
        Bp = backend.of(prob)
        p = np.asarray(Bp.to_numpy(prob) if Bp is not None else prob, np.float64).reshape(-1)
        if len(p) != n or not np.all(p >= 0) or not p.sum() > 0:
            raise nwerr.ValueError(f"choice: prob must hold {n} non-negative weights with a positive sum")
        p = p / p.sum()
    size = int(np.prod(size)) if isinstance(size, (tuple, list)) else int(size)
    if not replace and size > (n if p is None else int(np.count_nonzero(p))):
        raise nwerr.ValueError(f"choice: cannot draw {size} distinct elements from {n}"
                               + ("" if p is None else f" ({int(np.count_nonzero(p))} with a positive weight)"))
    picked = numpy_generator().choice(n, size, replace=bool(replace), p=p).astype(np.int64)
    if Ba is None:
        return backend.current().from_numpy(picked)
    return Ba.index_select(a, Ba.int_tensor(picked, Ba.device_str(a), "int64"))
