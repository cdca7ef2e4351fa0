"""The MPI job of a partition-and-train run: :func:`init` joins it (rank and size come from the
launcher, ``mpirun -np 4 python train.py`` or ``srun``), and the collectives move NumPy arrays
between the ranks. Without a launcher a process is a job of one, so the same script runs alone.

MPI is bound from C++ (``distributed/mpi_world.h``), not through mpi4py: the distributed sampler's
and feature fetch's exchanges run inside C++ loops without the GIL, and the GPU path (NCCL) sits
behind the same calls.

>>> import numpy as np
>>> rank, size = init()                      # a job of one when not started by mpirun
>>> (rank, size)
(0, 1)
>>> all_reduce(np.arange(3.0))               # the sum over ranks, here just itself
array([0., 1., 2.])
>>> [a.tolist() for a in all_to_all([np.array([7, 8])])]
[[7, 8]]
"""

from __future__ import annotations

import atexit
import sys
from typing import Any, Sequence

import numpy as np

from nodeweave import _C
from nodeweave import errors as nwerr

__all__ = ["init", "is_initialized", "rank", "world_size", "all_reduce", "all_reduce_in_place", "all_to_all",
           "barrier", "comm_stats", "reset_comm_stats", "raise_together"]

_M = _C.distributed

# What this rank moved through the collectives since the last reset (for the benchmarks and the
# training examples' per-epoch report): bytes it sent to other ranks in all_to_all, and bytes of the
# arrays it all-reduced (a ring all-reduce sends about twice that, whatever the rank count).
_stats = {"all_to_all_bytes": 0, "all_to_all_calls": 0, "all_reduce_bytes": 0, "all_reduce_calls": 0}
_by_purpose: dict[str, int] = {}


def comm_stats() -> dict[str, int]:
    """This rank's traffic since :func:`reset_comm_stats`: ``all_to_all_bytes`` (sent to other
    ranks), ``all_to_all_calls``, ``all_reduce_bytes`` (size of the arrays reduced),
    ``all_reduce_calls``, and ``all_to_all_bytes/<purpose>`` for the exchanges that name one
    (``sampling``, ``features``)."""
    return dict(_stats, **{f"all_to_all_bytes/{k}": v for k, v in _by_purpose.items()})


def reset_comm_stats() -> None:
    for k in _stats:
        _stats[k] = 0
    _by_purpose.clear()


def init() -> tuple[int, int]:
    """Joins the MPI job (once; later calls return the same) and returns ``(rank, world_size)``.
    The process leaves the job when it exits (launchers report a rank that exits without leaving
    as failed)."""
    if not _M.mpi_is_initialized():
        atexit.register(_M.mpi_finalize)
        world = tuple(_M.mpi_init())
        if world[1] > 1:
            _abort_on_uncaught_exception()
        return world
    return tuple(_M.mpi_init())


def _abort_on_uncaught_exception() -> None:
    """An uncaught exception on one rank ends the whole job (MPI_Abort) after its traceback is
    printed: finalising instead would wait for the other ranks, which may be waiting for this one
    in a collective, and the job would hang."""
    previous = sys.excepthook

    def hook(kind: Any, value: Any, tb: Any) -> None:
        previous(kind, value, tb)
        print(f"nodeweave.distributed: rank {rank()} failed; ending the MPI job", file=sys.stderr, flush=True)
        sys.stdout.flush()
        _M.abort_job(1)

    sys.excepthook = hook


def is_initialized() -> bool:
    return bool(_M.mpi_is_initialized())


def _world() -> tuple[int, int]:
    if not _M.mpi_is_initialized():
        raise nwerr.RuntimeError("nodeweave.distributed: call nodeweave.distributed.init() first")
    return tuple(_M.mpi_world())


def rank() -> int:
    """This process's rank, ``0 .. world_size() - 1``."""
    return _world()[0]


def world_size() -> int:
    """The number of processes in the job."""
    return _world()[1]


def all_reduce(array: np.ndarray) -> np.ndarray:
    """The elementwise sum of ``array`` over every rank (float32, float64, int32 or int64; every rank
    passes the same shape and dtype), as a new array; every rank gets the same bits."""
    _world()
    if not isinstance(array, np.ndarray):
        raise nwerr.TypeError(f"all_reduce: array must be a NumPy array, got {type(array).__name__}")
    if array.dtype not in (np.float32, np.float64, np.int32, np.int64):
        raise nwerr.TypeError(f"all_reduce: array must be float32, float64, int32 or int64, got {array.dtype}")
    out = np.array(array, order="C", copy=True)
    all_reduce_in_place(out)
    return out


def all_reduce_in_place(array: np.ndarray) -> None:
    """:func:`all_reduce` into ``array`` itself (C-contiguous, writable), without a copy."""
    _world()
    _M.all_reduce_sum(array)
    _stats["all_reduce_bytes"] += array.nbytes
    _stats["all_reduce_calls"] += 1


def all_to_all(blocks: Sequence[np.ndarray], purpose: str | None = None) -> list[np.ndarray]:
    """Personalised exchange: ``blocks[r]`` goes to rank ``r``; returns the blocks the ranks sent
    here, in rank order. All blocks of all ranks share one dtype and the sizes of every axis but
    the first (row counts may differ, zero included). ``purpose`` files the bytes under that name
    in :func:`comm_stats`."""
    me, size = _world()
    if len(blocks) != size:
        raise nwerr.ValueError(f"all_to_all: one block per rank is needed ({size}), got {len(blocks)}")
    arrs = [np.ascontiguousarray(b) for b in blocks]
    if not all(isinstance(b, np.ndarray) for b in blocks):
        raise nwerr.TypeError("all_to_all: every block must be a NumPy array")
    dtype, tail = arrs[0].dtype, arrs[0].shape[1:]
    for r, a in enumerate(arrs):
        if a.dtype != dtype or a.shape[1:] != tail or a.ndim == 0:
            raise nwerr.ValueError(f"all_to_all: block {r} has dtype {a.dtype} and shape {a.shape}; every block "
                                   f"must be {dtype} with rows of shape {tail}")
    send = np.concatenate([a.reshape(-1).view(np.uint8) for a in arrs]) if arrs else np.zeros(0, np.uint8)
    recv, sizes = _M.all_to_all_bytes(send, [a.nbytes for a in arrs])
    sent = sum(a.nbytes for r, a in enumerate(arrs) if r != me)
    _stats["all_to_all_bytes"] += sent
    _stats["all_to_all_calls"] += 1
    if purpose:
        _by_purpose[purpose] = _by_purpose.get(purpose, 0) + sent
    row = dtype.itemsize * int(np.prod(tail, dtype=np.int64))
    out, off = [], 0
    for n in sizes:
        if row == 0 or n % row:
            raise nwerr.ValueError(f"all_to_all: received {n} bytes, not whole rows of {row} bytes: the ranks "
                                   "passed blocks of different dtypes or row shapes")
        out.append(recv[off:off + n].view(dtype).reshape((n // row,) + tail))
        off += n
    return out


def raise_together(error: BaseException | None, what: str) -> None:
    """Collective input check: every rank passes the error its own input raised (or None), and
    every rank raises when any did, so that no rank enters an exchange that another has left
    (which would hang the job). A rank without an error of its own raises a RuntimeError naming
    ``what`` and the ranks that failed."""
    _, size = _world()
    flags = np.zeros(size, np.int64)
    flags[rank()] = error is not None
    all_reduce_in_place(flags)
    if error is not None:
        raise error
    if flags.any():
        raise nwerr.RuntimeError(f"{what} failed on rank(s) {np.flatnonzero(flags).tolist()}; see their error")


def barrier() -> None:
    """Waits until every rank has called it."""
    _world()
    _M.barrier()
