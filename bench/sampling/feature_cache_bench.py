"""What the DataLoader's feature cache (``cache_size=``) saves: loader epochs with and without it,
measured in the same run.

Graph: the R-MAT graph of the sampling benchmark (``bench/peers/graphs.py``: 2^20 nodes, 16 * 2^20
edges plus self-loops, a/b/c/d = .57/.19/.19/.05, seed 0). Its 128-dimensional float32 features
(512 MiB) are written once to ``--feat-file`` and read back memory-mapped (``np.load(mmap_mode="c")``
+ ``nodeweave.core.from_numpy``, zero-copy), or held in RAM with ``--in-ram``.

Each configuration iterates a ``DataLoader`` (``NeighborSampler([10, 10])``, prefetching the
features, batch 1024, ``--train`` random seeds, ``--workers`` C++ workers, no model: the loop only
takes the batches) for one counting epoch, then ``--reps`` timed epochs, interleaved with the other
configurations'; it prints the median epoch time, the cache's hit rate over the timed epochs, and the
time relative to the first configuration (give 0, no cache, first; below 1: the cache helps). The page cache is warm for every configuration alike (the file was just written or
read), so on a machine whose RAM holds the file this measures DRAM and TLB misses, not disk reads.

Run:  .venv/bin/python bench/sampling/feature_cache_bench.py [--cache 0,0.01,0.05,0.2] [--workers 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "peers"))

import graphs as peer_graphs  # noqa: E402

import nodeweave as nw  # noqa: E402
import nodeweave.core as nc  # noqa: E402
from nodeweave.dataloading import DataLoader, NeighborSampler  # noqa: E402


def epoch(loader: DataLoader) -> float:
    t0 = time.perf_counter()
    for _ in loader:
        pass
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="rmat20")
    ap.add_argument("--cache", default="0,0.01,0.05,0.2", help="cache sizes, shares of the rows")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--train", type=int, default=1 << 16)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--in-ram", action="store_true", help="features in RAM instead of memory-mapped")
    ap.add_argument("--feat-file", default="/tmp/nodeweave_bench_feat.npy")
    args = ap.parse_args()

    nc.set_num_threads(args.workers)
    data = peer_graphs.load(peer_graphs.ensure(args.graph))
    g = nw.graph((data["src"], data["dst"]), num_nodes=int(data["num_nodes"]))
    feat = data["feat"]
    if args.in_ram:
        g.ndata["feat"] = nc.from_numpy(np.ascontiguousarray(feat))
    else:
        path = Path(args.feat_file)
        if not path.exists() or np.load(path, mmap_mode="r").shape != feat.shape:
            np.save(path, feat)
        g.ndata["feat"] = nc.from_numpy(np.load(path, mmap_mode="c"))
    del data, feat
    seeds = np.random.default_rng(0).permutation(g.num_nodes())[: args.train]
    where = "in RAM" if args.in_ram else f"memory-mapped from {args.feat_file}"
    print(f"{args.graph}: {g.num_nodes()} nodes, {g.num_edges()} edges; features {where}; "
          f"{args.workers} workers, {args.train} seeds, batch 1024, fanouts [10, 10], median of {args.reps}")
    print("| cache (share of rows) | rows | hit rate | epoch (s) | / no cache |")
    print("|---:|---:|---:|---:|---:|")
    # Every page of the features is touched once first, so no configuration pays first-touch faults
    # the others don't; the timed epochs are interleaved (rep by rep) so drift hits all alike.
    float(np.asarray(g.ndata["feat"]).sum())
    shares = [float(s) for s in args.cache.split(",")]
    key, none = ("src", "_N", "feat"), {"rows": 0, "lookups": 0, "hits": 0}
    loaders, counted = [], []
    for share in shares:
        loader = DataLoader(g, seeds, NeighborSampler([10, 10], prefetch_node_feats=["feat"]), batch_size=1024,
                            shuffle=True, seed=0, num_workers=args.workers, cache_size=share)
        epoch(loader)  # the counting epoch
        loaders.append(loader)
        counted.append(loader.cache_info().get(key, none)["lookups"])
    times: list[list[float]] = [[] for _ in shares]
    for _ in range(args.reps):
        for k, loader in enumerate(loaders):
            times[k].append(epoch(loader))
    base = statistics.median(times[0])
    for share, loader, n0, ts in zip(shares, loaders, counted, times):
        info = loader.cache_info().get(key, none)
        hit = info["hits"] / (info["lookups"] - n0) if share else 0.0
        t = statistics.median(ts)
        print(f"| {share:g} | {info['rows']} | {hit:.1%} | {t:.3f} | {t / base:.2f} |")

if __name__ == "__main__":
    main()
