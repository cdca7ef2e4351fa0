"""The mini-batch loader (DGL's ``dgl.dataloading.DataLoader``): splits the seed nodes (or edges)
into batches, runs the graph sampler on each, and yields what the sampler returns.

Batches are prepared ahead of the training loop by background workers: for the neighbour samplers
of this package, C++ threads (``sampling/loader.cc``) that sample and gather the prefetched
features without the GIL; for any other sampler, Python threads whose C++ sampling calls release
the GIL. At most ``prefetch_depth`` batches wait. Order and content are a pure function of
``seed``, the epoch and the batch index, whatever the thread count. Leaving the loop early, an
exception or Ctrl-C stops the workers: the iterator shuts them down when it is closed or dropped.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1, 2, 3, 4], [1, 2, 3, 4, 0]))
>>> loader = nw.dataloading.DataLoader(g, [0, 1, 2, 3, 4], nw.dataloading.NeighborSampler([1]),
...                                    batch_size=2, shuffle=True, seed=0)
>>> len(loader)
3
>>> [output_nodes.tolist() for _, output_nodes, _ in loader]
[[0, 4], [3, 1], [2]]
"""

from __future__ import annotations

import inspect
import threading
from typing import Any, Iterator

import numpy as np

from nodeweave import _C, backend
from nodeweave.graph.heterograph import HeteroGraph, as_int_array
from nodeweave import errors as nwerr

__all__ = ["DataLoader"]


def default_num_workers() -> int:
    """One background worker when it does not take a core from the training step (see
    :class:`DataLoader`), else 0."""
    import os

    from nodeweave import core

    return 1 if core.get_num_threads() < (os.cpu_count() or 1) else 0


def _index_sets(indices: Any) -> tuple[dict | None, np.ndarray, np.ndarray]:
    """Seeds as ``(types, type_of_each, id_of_each)``: ``types`` is None for a plain id list,
    else the ordered keys of the dict (node or edge types)."""
    if isinstance(indices, dict):
        keys, tcol, icol = [], [], []
        for k, ids in indices.items():
            arr, _ = as_int_array(ids, f"indices[{k!r}]")
            keys.append(k)
            tcol.append(np.full(len(arr), len(keys) - 1, np.int64))
            icol.append(arr)
        if not keys:
            raise nwerr.ValueError("indices must not be empty: give at least one seed")
        return keys, np.concatenate(tcol), np.concatenate(icol)
    if backend.of(indices) is not None and backend.of(indices).dtype_name(indices) == "bool":
        arr = np.flatnonzero(backend.of(indices).to_numpy(indices)).astype(np.int64)
    else:
        arr, _ = as_int_array(indices, "indices")
    return None, np.zeros(len(arr), np.int64), arr


class DataLoader:
    """Iterates over mini-batches of ``indices`` sampled by ``graph_sampler``.

    Parameters
    ----------
    graph : graph
        The graph to sample from.
    indices : ids, bool mask, or ``{type: ids}``
        Seed nodes (or seed edges for an edge-prediction sampler).
    graph_sampler : sampler
        An object with ``sample(g, indices)``, e.g. :class:`NeighborSampler`.
    batch_size, shuffle, drop_last
        As ``torch.utils.data.DataLoader``.
    device : optional
        Where the blocks and features go (default: the graph's device).
    num_workers : int, optional
        Background worker threads (0: sample in the calling thread, no prefetching). Default: one
        worker when a core is free for it (nodeweave's thread count below the machine's cores),
        else 0: on a machine whose cores the training step already keeps busy, a worker only takes
        cycles from it. That holds on the pytorch backend too (measured, 2 threads on 2 cores,
        ``bench/sampling/run.py``: a worker made the GraphSAGE epoch 0.38 -> 0.53 s on R-MAT and
        0.46 -> 0.59 s on DBLP).
    prefetch_depth : int
        Batches prepared ahead at most (default ``2 * max(num_workers, 1)``).
    seed : int, optional
        Fixes shuffling and sampling (default: drawn once from nodeweave's generator, so
        ``nodeweave.core.manual_seed`` before building the loader makes runs repeatable).
    use_ddp : bool
        Keyword only. With ``torch.distributed`` initialized, each rank iterates over its own
        contiguous share of ``indices``, as DGL splits them: ``len(indices) // world_size`` seeds
        under ``drop_last``, otherwise ``ceil(len(indices) / world_size)`` with the last ranks
        topped up from the start of ``indices``, so that every rank runs the same number of batches.
    cache_size : int or float
        Rows of each prefetched feature to keep in a cache of the most frequently gathered nodes
        (an int, or a float in [0, 1] for that share of the node type's rows; default 0, no cache).
        The first epoch counts how often each row is gathered; later epochs read the hottest rows
        from one packed table (``sampling/feature_cache.h``). Worth it when reading a random row is
        slow: features memory-mapped from a file, or a table far larger than the CPU caches.
        Batches are the same with or without it (features must not be changed in place while
        cached; a replaced feature gets a new cache); :meth:`cache_info` reports hits. Needs the C++
        loader: a :class:`NeighborSampler` (or :class:`LaborSampler`) with ``num_workers >= 1``.
    """

    def __init__(self, graph: Any, indices: Any, graph_sampler: Any, device: Any = None,
                 batch_size: int = 1, shuffle: bool = False, drop_last: bool = False,
                 num_workers: int | None = None, prefetch_depth: int | None = None, seed: int | None = None,
                 use_uva: bool = False, cache_size: int | float = 0, **kwargs: Any) -> None:
        from nodeweave.sampling._seed import resolve_seed

        if not isinstance(graph, HeteroGraph):
            raise nwerr.TypeError(f"graph must be a nodeweave graph, got {type(graph).__name__}")
        if not callable(getattr(graph_sampler, "sample", None)):
            raise nwerr.TypeError(f"graph_sampler must have a sample(g, indices) method, got "
                                  f"{type(graph_sampler).__name__}")
        if num_workers is None:
            num_workers = default_num_workers()
        for name, v, low in (("batch_size", batch_size, 1), ("num_workers", num_workers, 0)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise nwerr.ValueError(f"{name} must be an int >= {low}, got {v!r}")
        if prefetch_depth is None:
            prefetch_depth = 2 * max(int(num_workers), 1)
        if isinstance(prefetch_depth, bool) or not isinstance(prefetch_depth, (int, np.integer)) or prefetch_depth < 1:
            raise nwerr.ValueError(f"prefetch_depth must be an int >= 1, got {prefetch_depth!r}")
        ignored = set(kwargs) - {"use_ddp", "ddp_seed", "use_prefetch_thread", "use_alternate_streams",
                                 "pin_prefetcher", "persistent_workers", "pin_memory"}
        if ignored:
            raise nwerr.TypeError(f"DataLoader got unexpected keyword arguments {sorted(ignored)}")
        # The others are performance hints with no counterpart here (ddp_seed too: shuffling
        # follows ``seed``); use_ddp changes which seeds this process sees.
        self.graph = graph
        self.graph_sampler = graph_sampler
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.num_workers = int(num_workers)
        self.prefetch_depth = int(prefetch_depth)
        self.device = device
        self.seed = resolve_seed(seed)
        self._types, self._type_col, self._id_col = _index_sets(indices)
        if len(self._id_col) == 0:
            raise nwerr.ValueError("indices must not be empty: give at least one seed")
        if kwargs.get("use_ddp"):
            self._type_col, self._id_col = _ddp_shard(self._type_col, self._id_col, self.drop_last)
        self._epoch = 0
        self._takes_seed = "random_seed" in inspect.signature(graph_sampler.sample).parameters
        self.cache_size = _check_cache_size(cache_size)
        if self.cache_size and not (self.num_workers >= 1 and _native_path(self)):
            raise nwerr.ValueError("cache_size needs the C++ loader: a NeighborSampler or LaborSampler on a "
                                   "CPU graph with num_workers >= 1")
        # (side, ntype, feature name) -> (the feature tensor it caches, _C.sampling.FeatureCache)
        self._caches: dict[tuple, tuple[Any, Any]] = {}

    def cache_info(self) -> dict[tuple[str, str, str], dict[str, int]]:
        """Per cached feature ``(side, ntype, name)`` (side ``'src'`` for input features,
        ``'dst'`` for labels): rows held (0 during the first epoch), rows gathered and how many
        came from the cache, over all epochs so far."""
        return {k: {"rows": c.size, "lookups": c.lookups, "hits": c.hits} for k, (_, c) in self._caches.items()}

    def _cache_for(self, key: tuple, col: Any, rows: int) -> Any:
        """The cache of feature tensor ``col``; a new one (counting afresh) when the graph's feature
        was replaced since. Rows are copied once: a feature changed in place is not seen."""
        if not self.cache_size:
            return None
        held = self._caches.get(key)
        if held is None or held[0] is not col:
            cap = self.cache_size if isinstance(self.cache_size, int) else int(round(self.cache_size * rows))
            if cap == 0:  # a share that rounds to no rows: no cache, and no counting either
                return None
            self._caches[key] = (col, _C.sampling.FeatureCache(rows, cap))
        return self._caches[key][1]

    def __len__(self) -> int:
        n = len(self._id_col)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    # ------------------------------------------------------------------ batches

    def _order(self, epoch: int) -> np.ndarray:
        n = len(self._id_col)
        if not self.shuffle:
            return np.arange(n)
        rng = np.random.Generator(np.random.PCG64(_C.sampling.derive_key(self.seed, epoch)))
        return rng.permutation(n)

    def _batch_indices(self, order: np.ndarray, i: int) -> Any:
        pos = order[i * self.batch_size:(i + 1) * self.batch_size]
        ids = self._id_col[pos]
        if self._types is None:
            return self.graph._ids_out(ids)
        types = self._type_col[pos]
        return {k: self.graph._ids_out(ids[types == t]) for t, k in enumerate(self._types)}

    def _batch_key(self, epoch: int, i: int) -> int:
        # A sampler with batch_dependency k (LABOR) shares its randomness over groups of k batches.
        group = i // getattr(self.graph_sampler, "batch_dependency", 1)
        return _C.sampling.derive_key(_C.sampling.derive_key(self.seed, epoch), group)

    def _make(self, order: np.ndarray, epoch: int, i: int) -> Any:
        batch = self._batch_indices(order, i)
        if self._takes_seed:
            out = self.graph_sampler.sample(self.graph, batch, random_seed=self._batch_key(epoch, i))
        else:
            out = self.graph_sampler.sample(self.graph, batch)
        return _to_device(out, self.device)

    def __iter__(self) -> Iterator[Any]:
        epoch = self._epoch
        self._epoch += 1
        order = self._order(epoch)
        if self.num_workers == 0:
            return (self._make(order, epoch, i) for i in range(len(self)))
        if _native_path(self):
            return _NativeIterator(self, order, epoch)
        return _PrefetchIterator(self, order, epoch)


def _ddp_shard(types: np.ndarray, ids: np.ndarray, drop_last: bool) -> tuple[np.ndarray, np.ndarray]:
    """This ``torch.distributed`` rank's share of the seeds (DGL's ``use_ddp``): rank ``r`` of
    ``w`` takes the seeds at positions ``r*m .. (r+1)*m - 1`` with ``m = n // w`` under
    ``drop_last`` (the last ``n % w`` seeds go to no rank), else ``m = ceil(n / w)``, the last ranks
    topping up to ``m`` with the first seeds of the list (as PyTorch's DistributedSampler pads; DGL
    repeats the rank's own first seeds, which can put one seed twice into a batch), so every rank
    runs as many batches."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        raise nwerr.ValueError("DataLoader: use_ddp=True needs torch.distributed to be initialized "
                               "(torch.distributed.init_process_group) before the loader is built")
    rank, world = dist.get_rank(), dist.get_world_size()
    n = len(ids)
    m = n // world if drop_last else -(-n // world)
    lo, hi = rank * m, (rank + 1) * m
    own = np.arange(lo, hi, dtype=np.int64) % n  # positions past the end wrap to the list's start
    return types[own], ids[own]


def _check_cache_size(v: Any) -> int | float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise nwerr.TypeError(f"cache_size must be an int (rows) or a float in [0, 1] (a share of the rows), "
                              f"got {type(v).__name__}")
    if isinstance(v, (float, np.floating)):
        if not 0 <= v <= 1:
            raise nwerr.ValueError(f"cache_size as a float is a share of the rows in [0, 1], got {v}")
        return float(v)
    if v < 0:
        raise nwerr.ValueError(f"cache_size must be >= 0 rows, got {v}")
    return int(v)


def _to_device(out: Any, device: Any) -> Any:
    if device is None:
        return out
    if isinstance(out, HeteroGraph):
        return out.to(device)
    if isinstance(out, (list, tuple)):
        return type(out)(_to_device(x, device) for x in out)
    if isinstance(out, dict):
        return {k: _to_device(v, device) for k, v in out.items()}
    b = backend.of(out)
    return b.to_device(out, device) if b is not None else out


class _Shared:
    """What the workers and the iterator share. Workers hold only this (never the iterator), so
    dropping the iterator runs its ``__del__`` and stops them."""

    def __init__(self, depth: int) -> None:
        self.ready: dict[int, tuple[bool, Any]] = {}
        self.cv = threading.Condition()
        self.depth = depth
        self.taken = 0  # batches handed out so far
        self.stop = threading.Event()


def _work(shared: _Shared, make: Any, batches: range) -> None:
    for i in batches:
        # Batch i may start once batch i - depth has been taken: the window slides in batch
        # order, so a fast worker cannot use up the room a slow one needs for an earlier batch.
        with shared.cv:
            while i >= shared.taken + shared.depth and not shared.stop.is_set():
                shared.cv.wait(timeout=0.05)
        if shared.stop.is_set():
            return
        try:
            item = (True, make(i))
        except BaseException as e:  # handed to the consumer, raised there
            item = (False, e)
        with shared.cv:
            shared.ready[i] = item
            shared.cv.notify_all()
        if not item[0]:
            return


class _PrefetchIterator:
    """Background threads make batches ``w, w + n, w + 2n ...`` (worker ``w`` of ``n``); the
    iterator hands them out in batch order; batch ``i`` starts only after batch
    ``i - prefetch_depth`` was taken. ``close()`` (also when the iterator is dropped) stops and joins the workers."""

    def __init__(self, loader: DataLoader, order: np.ndarray, epoch: int) -> None:
        self._n = len(loader)
        self._next = 0
        self._shared = _Shared(loader.prefetch_depth)
        workers = min(loader.num_workers, max(self._n, 1))

        def make(i: int, loader=loader, order=order, epoch=epoch) -> Any:
            return loader._make(order, epoch, i)

        self._threads = [threading.Thread(target=_work, args=(self._shared, make, range(w, self._n, workers)),
                                          daemon=True, name=f"nodeweave-loader-{w}")
                         for w in range(workers)]
        for t in self._threads:
            t.start()

    def __iter__(self) -> "_PrefetchIterator":
        return self

    def __next__(self) -> Any:
        try:
            return self._next_batch()
        except BaseException:  # StopIteration, a sampler's error, Ctrl-C: stop the workers first
            self.close()
            raise

    def _next_batch(self) -> Any:
        if self._next >= self._n:
            raise StopIteration
        shared = self._shared
        with shared.cv:
            while self._next not in shared.ready:
                shared.cv.wait(timeout=0.05)  # a timeout keeps Ctrl-C responsive
            ok, item = shared.ready.pop(self._next)
            self._next += 1
            shared.taken = self._next
            shared.cv.notify_all()
        if not ok:
            raise item
        return item

    def __len__(self) -> int:
        return self._n

    def close(self) -> None:
        """Stops the workers and waits for them (idempotent)."""
        self._shared.stop.set()
        for t in self._threads:
            if t is not threading.current_thread():
                t.join()
        self._threads = []

    def __del__(self) -> None:
        self.close()


def _native_path(loader: DataLoader) -> bool:
    """Whether the C++ loader can make this loader's batches: a neighbour sampler whose sampling
    is not overridden, node seeds of a CPU graph."""
    from nodeweave.dataloading.base import BlockSampler
    from nodeweave.dataloading.neighbor_sampler import NeighborSampler

    s = loader.graph_sampler
    return (isinstance(s, NeighborSampler) and type(s).sample is BlockSampler.sample
            and type(s).sample_blocks is NeighborSampler.sample_blocks
            and loader.graph._device == "cpu"
            and (loader._types is None or all(k in loader.graph.ntypes for k in loader._types)))


def _share_numpy(arr: np.ndarray, like: Any) -> Any:
    """A tensor of ``like``'s backend viewing ``arr`` (no copy)."""
    if backend.of(like).name == "pytorch":
        import torch

        return torch.from_numpy(arr)
    from nodeweave import core

    return core.from_numpy(arr)


class _NativeIterator:
    """Batches from the C++ loader (``sampling/loader.cc``): worker threads sample the blocks and
    gather the prefetched node features and labels without the GIL; this side wraps them in
    blocks and tensors (no copy of the gathered rows)."""

    def __init__(self, loader: DataLoader, order: np.ndarray, epoch: int) -> None:
        from nodeweave import core

        g, sampler = loader.graph, loader.graph_sampler
        self._loader = loader
        ntypes = g.ntypes
        if loader._types is None:
            types = np.zeros(len(order), np.int64)
        else:
            remap = np.array([ntypes.index(k) for k in loader._types], np.int64)
            types = remap[loader._type_col[order]]
        self._arrays, self._meta, feats = [], [], []
        for side, names in (("src", sampler.prefetch_node_feats), ("dst", sampler.prefetch_labels)):
            for name in names:
                for t, nt in enumerate(ntypes):
                    frame = g._node_frames[g._node_key("all", nt)]
                    if name not in frame:
                        continue
                    col = frame[name]
                    arr = np.ascontiguousarray(backend.of(col).to_numpy(col))
                    self._arrays.append(arr)  # alive for as long as the C++ loader reads it
                    self._meta.append((side, nt, name, arr.dtype, arr.shape[1:], col))
                    feats.append((t, side == "dst", arr, loader._cache_for((side, nt, name), col, len(arr))))
        workers = loader.num_workers
        self._cpp = _C.sampling.Loader(
            sampler.native_sampler(g), types, loader._id_col[order], loader.batch_size, loader.drop_last,
            _C.sampling.derive_key(loader.seed, epoch), feats, workers, loader.prefetch_depth,
            # The training loop keeps a share of the threads: each worker samples with
            # threads / (workers + 1) of them.
            max(1, core.get_num_threads() // (workers + 1)), g._idtype_name,
            getattr(sampler, "batch_dependency", 1))

    def __iter__(self) -> "_NativeIterator":
        return self

    def __len__(self) -> int:
        return self._loader.__len__()

    def __next__(self) -> Any:
        # Any exception on the way (Ctrl-C included, wherever it lands) stops the workers first:
        # the traceback keeps this iterator alive, so waiting for its collection would leave them
        # running while the caller handles the exception.
        try:
            return self._next_batch()
        except BaseException:
            self.close()
            raise

    def _next_batch(self) -> Any:
        from nodeweave.dataloading.neighbor_sampler import finish_blocks
        from nodeweave.graph.block import block_from_parts

        item = self._cpp.next()
        if item is None:
            self.close()
            raise StopIteration
        _, raw, gathered = item
        loader, g = self._loader, self._loader.graph
        blocks = [block_from_parts(g, *parts) for parts in raw]
        ready = {}
        for (side, nt, name, dtype, row_shape, col), buf in zip(self._meta, gathered):
            rows = buf.view(dtype).reshape((-1,) + tuple(row_shape))
            ready[(side, nt, name)] = _share_numpy(rows, col)
        loader.graph_sampler.attach_features(g, blocks, ready)
        out = finish_blocks(g, blocks, loader.graph_sampler.output_device)
        return _to_device(out, loader.device)

    def close(self) -> None:
        """Stops and joins the C++ workers (idempotent)."""
        cpp = getattr(self, "_cpp", None)
        if cpp is not None:
            cpp.close()

    def __del__(self) -> None:
        self.close()
