"""Where samplers get their randomness: one 64-bit seed per call.

Every sampler in :mod:`nodeweave.sampling` takes ``random_seed=None``. Given, it fixes the result
bit for bit, whatever the thread count (the C++ samplers derive per-node streams from it, see
``sampling/random.h``). Omitted, a fresh seed is drawn from nodeweave's default generator, so
``nodeweave.seed(s)`` (or ``nodeweave.core.manual_seed(s)``) before a run makes it repeatable.

>>> from nodeweave.sampling._seed import resolve_seed
>>> resolve_seed(7)
7
>>> resolve_seed(-1)
Traceback (most recent call last):
...
ValueError: random_seed must be an int in [0, 2**64), got -1
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import _C


def resolve_seed(random_seed: Any) -> int:
    """``random_seed`` checked, or a fresh draw from the default generator when None."""
    if random_seed is None:
        return int(_C.sampling.draw_seed())
    if isinstance(random_seed, (bool, np.bool_)) or not isinstance(random_seed, (int, np.integer)):
        raise TypeError(f"random_seed must be an int or None, got {type(random_seed).__name__}")
    if not 0 <= int(random_seed) < 2**64:
        raise ValueError(f"random_seed must be an int in [0, 2**64), got {random_seed}")
    return int(random_seed)


def numpy_generator(random_seed: Any = None) -> np.random.Generator:
    """A NumPy generator seeded by :func:`resolve_seed`: for randomness drawn on the host in Python
    (random graph transforms, sign flips of positional encodings), which then follows
    ``nodeweave.core.manual_seed`` like the C++ samplers do.

    >>> numpy_generator(3).integers(0, 100, 3).tolist() == numpy_generator(3).integers(0, 100, 3).tolist()
    True
    """
    return np.random.Generator(np.random.PCG64(resolve_seed(random_seed)))
