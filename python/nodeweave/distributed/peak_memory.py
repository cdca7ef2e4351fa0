"""How much memory a step of the process added at its peak, from Linux's resident-set counters:
the peak (``VmHWM``) is reset when the step starts (``/proc/self/clear_refs``), read when it ends,
and compared with the resident size (``VmRSS``) at the start. Resident memory counts C++, NumPy
and METIS allocations alike, which Python's own tracers do not see.

>>> with PeakMemory() as m:
...     block = b"x" * (64 << 20)       # 64 MiB, every page written
>>> m.available and m.growth >= 60 << 20 or not m.available
True
"""

from __future__ import annotations

from typing import Any

__all__ = ["PeakMemory"]


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class PeakMemory:
    """A context manager measuring ``growth``: the peak resident size inside the block minus the
    resident size on entry, in bytes (``available`` is False where /proc is missing: growth 0).
    Entering resets the process's peak counter, which ``getrusage``'s ``ru_maxrss`` also reads."""

    def __init__(self) -> None:
        self.start = self.peak = 0
        self.available = False

    def __enter__(self) -> "PeakMemory":
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            self.available = True
        except OSError:
            self.available = False
        self.start = (_status_kib("VmRSS") or 0) * 1024
        return self

    def __exit__(self, *exc: Any) -> None:
        self.peak = (_status_kib("VmHWM") or 0) * 1024 if self.available else self.start

    @property
    def growth(self) -> int:
        return max(self.peak - self.start, 0)
