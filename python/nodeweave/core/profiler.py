"""Where the time goes: per-op wall-clock totals collected by the dispatcher.

While a :func:`profile` block is active, every op the native engine dispatches at top level (forward
ops, the ops autograd runs for backward, in-place optimizer updates) is timed, output allocation
included. Ops that dispatch further ops are counted once, as themselves. Time outside ops (Python,
autograd bookkeeping) is what remains of the wall-clock time.

>>> import nodeweave.core as nc
>>> x = nc.randn(64, 64, requires_grad=True)
>>> with nc.profiler.profile() as prof:
...     (x @ x).relu().sum().backward()
>>> stats = prof.table()
>>> "mm" in stats and stats["mm"].calls >= 1
True
>>> prof.total(["mm"]) <= prof.total()
True

On CUDA tensors kernels run asynchronously, so the figures are launch times unless the code
synchronizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from nodeweave import _C
from nodeweave import errors as nwerr

__all__ = ["OpStats", "Profile", "profile"]


@dataclass(frozen=True)
class OpStats:
    """Totals for one op."""

    calls: int
    seconds: float


class Profile:
    """The totals of one :func:`profile` block (filled in when the block ends)."""

    def __init__(self) -> None:
        self._stats: dict[str, OpStats] = {}

    def table(self) -> dict[str, OpStats]:
        """Op name -> :class:`OpStats`, slowest first."""
        return dict(sorted(self._stats.items(), key=lambda kv: -kv[1].seconds))

    def total(self, ops: Iterable[str] | None = None) -> float:
        """Seconds spent in ``ops`` (all ops when None)."""
        if ops is None:
            return sum(s.seconds for s in self._stats.values())
        wanted = set(ops)
        return sum(s.seconds for name, s in self._stats.items() if name in wanted)

    def __str__(self) -> str:
        rows = [f"{'op':<24}{'calls':>8}{'ms':>12}"]
        rows += [f"{name:<24}{s.calls:>8}{s.seconds * 1e3:>12.3f}" for name, s in self.table().items()]
        return "\n".join(rows)


class profile:  # noqa: N801 - a context manager named like torch.profiler.profile
    """Collects per-op totals for the ``with`` block. Blocks do not nest."""

    def __enter__(self) -> Profile:
        if _C._profiler_enabled():
            raise nwerr.RuntimeError("nodeweave.core.profiler.profile blocks do not nest")
        self._prof = Profile()
        _C._profiler_reset()
        _C._profiler_enable(True)
        return self._prof

    def __exit__(self, *exc) -> None:
        _C._profiler_enable(False)
        self._prof._stats = {name: OpStats(calls, secs) for name, calls, secs in _C._profiler_table()}
        _C._profiler_reset()

