"""Data-parallel training over the MPI job: after ``backward()`` and before the optimizer step,
:func:`all_reduce_gradients` makes every parameter's gradient the mean over the ranks, so each
rank's optimizer takes the same step and the replicas stay equal. It works for the native engine's
parameters and for PyTorch's (``torch.nn.Module.parameters()``): with the PyTorch backend it
replaces ``DistributedDataParallel``, which would need a torch process group besides MPI.

Gradients travel in buckets (consecutive parameters of one dtype, up to ``bucket_bytes``): one
all-reduce per bucket instead of one per parameter.

>>> import numpy as np, nodeweave.core as nc, nodeweave.distributed as dist
>>> _ = dist.init()                                  # a job of one here: the mean is the gradient itself
>>> w = nc.tensor(np.ones(3, np.float32), requires_grad=True)
>>> (w * 2).sum().backward()
>>> all_reduce_gradients([w])
>>> w.grad.numpy().tolist()
[2.0, 2.0, 2.0]
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from nodeweave import errors as nwerr
from nodeweave.distributed import mpi

__all__ = ["all_reduce_gradients"]


def _grad_view(p: Any, i: int) -> np.ndarray:
    """A writable NumPy view of parameter ``p``'s gradient (a zero gradient is made for a parameter
    this rank did not use, so that every rank reduces the same buckets)."""
    if getattr(p, "grad", None) is None:
        if not hasattr(p, "grad"):
            raise nwerr.TypeError(f"all_reduce_gradients: parameter {i} is a {type(p).__name__}, not a tensor")
        if type(p).__module__.startswith("torch"):
            import torch

            p.grad = torch.zeros_like(p)
        else:
            import nodeweave.core as nc

            p.grad = nc.zeros(*p.shape, dtype=p.dtype)
    g = p.grad
    torch_grad = type(g).__module__.startswith("torch")
    if torch_grad and g.device.type != "cpu":
        raise nwerr.ValueError(f"all_reduce_gradients: parameter {i}'s gradient is on {g.device}; the MPI "
                               "path reduces host memory (GPU gradients go over NCCL)")
    view = g.detach().numpy() if torch_grad else g.numpy()
    if not view.flags.c_contiguous or not view.flags.writeable:
        # a broadcast (stride-0) or otherwise shared gradient: give the parameter its own copy
        if torch_grad:
            p.grad = g.detach().contiguous().clone()
            view = p.grad.numpy()
        else:
            import nodeweave.core as nc

            p.grad = nc.tensor(np.ascontiguousarray(view))
            view = p.grad.numpy()
    return view


def all_reduce_gradients(params: Iterable[Any], *, average: bool = True, bucket_bytes: int = 25 << 20) -> None:
    """Sums every parameter's gradient over the ranks, in place, and divides by the number of ranks
    when ``average`` (the gradient of the global batch's mean loss when every rank's batch is the
    same size). Every rank passes the same parameters in the same order.

    Parameters
    ----------
    params : iterable of tensors
        Native (``nodeweave.core``) or PyTorch parameters, CPU.
    average : bool
        Divide the sums by ``world_size()``.
    bucket_bytes : int
        Largest all-reduce message, in bytes (a larger parameter travels alone).
    """
    size = mpi.world_size()
    if isinstance(bucket_bytes, bool) or not isinstance(bucket_bytes, int) or bucket_bytes < 1:
        raise nwerr.ValueError(f"all_reduce_gradients: bucket_bytes must be a positive int, got {bucket_bytes!r}")
    views = [_grad_view(p, i) for i, p in enumerate(params)]
    bucket: list[np.ndarray] = []
    nbytes = 0

    def flush() -> None:
        nonlocal bucket, nbytes
        if bucket:
            flat = np.concatenate([v.reshape(-1) for v in bucket])
            mpi.all_reduce_in_place(flat)
            if average and size > 1:
                flat /= size
            off = 0
            for v in bucket:
                v.reshape(-1)[...] = flat[off:off + v.size]
                off += v.size
        bucket, nbytes = [], 0

    for v in views:
        if v.dtype not in (np.float32, np.float64):
            raise nwerr.TypeError(f"all_reduce_gradients: gradients must be float32 or float64, got {v.dtype}")
        if bucket and (v.dtype != bucket[0].dtype or nbytes + v.nbytes > bucket_bytes):
            flush()
        bucket.append(v)
        nbytes += v.nbytes
    flush()
