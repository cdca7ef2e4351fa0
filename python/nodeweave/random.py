"""``nodeweave.seed`` (as ``dgl.seed`` / ``dgl.random.seed``): one call that makes nodeweave's own
randomness repeatable.

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

from nodeweave import _C
from nodeweave.sampling._seed import check_seed

__all__ = ["seed"]


def seed(val: Any) -> None:
    """Seeds nodeweave's generator with ``val``, an int in ``[0, 2**64)``."""
    _C.manual_seed(check_seed(val, "seed"))
