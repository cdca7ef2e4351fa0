"""CUDA devices and the caching allocator, named like :mod:`torch.cuda`.

Every function works on machines without a GPU and in CPU-only builds: ``is_available()`` is then
``False``, ``device_count()`` is ``0``, the memory queries report ``0`` and ``empty_cache()`` does
nothing. Asking about a specific device that does not exist raises ``ValueError``.

>>> import nodeweave.core as nc
>>> nc.cuda.is_available() == (nc.cuda.device_count() > 0)
True
"""

from __future__ import annotations

from nodeweave import _C
from nodeweave import errors as nwerr

__all__ = [
    "is_available", "is_built", "device_count", "empty_cache", "memory_allocated", "memory_reserved",
    "synchronize",
]


def is_built() -> bool:
    """Whether this build of nodeweave includes the CUDA runtime and kernels."""
    return _C.cuda_is_built()


def device_count() -> int:
    """Number of visible CUDA devices (0 without a GPU, a driver, or CUDA support)."""
    return _C.cuda_device_count()


def is_available() -> bool:
    """Whether CUDA tensors can be created: a CUDA build with at least one visible device."""
    return device_count() > 0


def _device_index(device, fn: str) -> int | None:
    """The CUDA device index ``device`` names; None means "the default device, if there is one"."""
    if device is None:
        return 0 if is_available() else None
    if isinstance(device, bool) or not isinstance(device, (int, str, _C.device)):
        raise nwerr.TypeError(f"{fn}: device must be None, an int, a string or a nodeweave device, "
                              f"got {type(device).__name__}")
    dev = _C.device(device)
    if dev.type != "cuda":
        raise nwerr.ValueError(f"{fn}: expected a CUDA device, got {str(dev)!r}")
    if dev.index < 0 or dev.index >= device_count():
        raise nwerr.ValueError(f"{fn}: device {dev} is not available ({device_count()} CUDA device(s) visible)")
    return dev.index


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors on ``device`` (block sizes as the caching allocator rounds them)."""
    index = _device_index(device, "memory_allocated")
    return 0 if index is None else _C._cuda_memory_stats(index)[0]


def memory_reserved(device=None) -> int:
    """Bytes the caching allocator holds on ``device``: live blocks plus cached free blocks."""
    index = _device_index(device, "memory_reserved")
    if index is None:
        return 0
    in_use, cached = _C._cuda_memory_stats(index)
    return in_use + cached


def empty_cache() -> None:
    """Returns every cached free block on every device to the driver (live tensors are untouched)."""
    for index in range(device_count()):
        _C._cuda_empty_cache(index)


def synchronize(device=None) -> None:
    """Waits until all work nodeweave queued on ``device`` has finished."""
    index = _device_index(device, "synchronize")
    if index is not None:
        _C._cuda_synchronize(index)
