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
nodeweave.errors.ValueError: random_seed must be an int in [0, 2**64), got -1
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import _C
from nodeweave import errors as nwerr


def check_seed(value: Any, name: str, accepts: str = "an int") -> int:
    """``value`` as a seed of nodeweave's generators: an int in ``[0, 2**64)``; errors name ``name``
    and say what it ``accepts``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise nwerr.TypeError(f"{name} must be {accepts}, got {type(value).__name__}")
    if not 0 <= int(value) < 2**64:
        raise nwerr.ValueError(f"{name} must be an int in [0, 2**64), got {value}")
    return int(value)


def resolve_seed(random_seed: Any) -> int:
    """``random_seed`` checked, or a fresh draw from the default generator when None."""
    if random_seed is None:
        return int(_C.sampling.draw_seed())
    return check_seed(random_seed, "random_seed", "an int or None")


def numpy_generator(random_seed: Any = None) -> np.random.Generator:
    """A NumPy generator seeded by :func:`resolve_seed`: for randomness drawn on the host in Python
    (random graph transforms, sign flips of positional encodings), which then follows
    ``nodeweave.core.manual_seed`` like the C++ samplers do.

    >>> numpy_generator(3).integers(0, 100, 3).tolist() == numpy_generator(3).integers(0, 100, 3).tolist()
    True
    """
    return np.random.Generator(np.random.PCG64(resolve_seed(random_seed)))
