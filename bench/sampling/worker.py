"""Times one sampling system on one cached graph (bench/peers/graphs.py) and prints one JSON line.

Systems:
- ``nodeweave``: ``NeighborSampler.sample`` (one C++ call per batch: every layer sampled and
  compacted into blocks), called in a loop;
- ``nodeweave-loader``: nodeweave's ``DataLoader`` over the same seeds, one C++ worker thread per
  ``--threads`` (each samples its own batches with one thread);
- ``dgl``: ``dgl.sampling.sample_neighbors`` + ``dgl.to_block`` per layer, the loop DGL's own
  ``NeighborSampler.sample_blocks`` runs, called in a loop;
- ``dgl-loader``: ``dgl.dataloading.DataLoader`` with ``dgl.dataloading.NeighborSampler``
  (``num_workers=0``: DGL's worker processes copy the graph into each process, and its default).

Tasks:
- ``sample``: ``--batches`` batches of ``--batch-size`` seeds (a fixed random permutation of the
  nodes, seed 0) for each fanout list of ``--fanouts`` (e.g. ``15,10,5;25,10``), uniform and
  weighted (edge feature ``w``: uniform in [0, 1), seed 2). Reports sampled edges per second
  (the edges of every block) — median of ``--reps`` passes after one warm-up pass.
- ``epoch``: one epoch of mini-batch GraphSAGE (two SAGEConv 'mean' layers, 128 -> 64 -> 16, ReLU,
  Adam lr 0.003) on ``--train-nodes`` seed nodes in batches of ``--batch-size``, fanouts [10, 10],
  every system on the same torch model code (nodeweave on its pytorch backend, and on its native
  engine as ``nodeweave-native``), the input features and labels gathered per batch. Median of
  ``--reps`` epochs after one warm-up epoch.

Peak memory: the process's peak resident set size after loading the graph and at the end
(``ru_maxrss``); their difference is what sampling and loading added.

Run:  bench/.venv-peers/bin/python bench/sampling/worker.py --system dgl --graph bench/peers/.cache/rmat20.v1.npz
"""

from __future__ import annotations

import os
import sys


def _pin_threads() -> int:
    n = "1"
    for i, a in enumerate(sys.argv):
        if a == "--threads" and i + 1 < len(sys.argv):
            n = sys.argv[i + 1]
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = n
    os.environ.setdefault("DGLBACKEND", "pytorch")
    return int(n)


THREADS = _pin_threads()

import abc  # noqa: E402
import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def parse_fanouts(s: str) -> list[list[int]]:
    return [[int(x) for x in part.split(",")] for part in s.split(";") if part]


class System(abc.ABC):
    """Built from the cached arrays (``System(arrays)``); ``run_sample`` returns the edges sampled."""

    @abc.abstractmethod
    def run_sample(self, seed_batches: list, fanouts: list[int], weighted: bool) -> int:
        """Samples every batch with ``fanouts`` and returns the number of block edges."""


class NodeweaveSystem(System):
    loader = False

    def __init__(self, arrays: dict, backend: str = "native") -> None:
        import nodeweave as nw
        import nodeweave.core as nc

        nw.set_backend(backend)
        nc.set_num_threads(THREADS)
        self.nw = nw
        self.g = nw.graph((arrays["src"], arrays["dst"]), num_nodes=int(arrays["num_nodes"]))
        self.g.create_formats_()
        B = nw.backend.current()
        self.g.edata["w"] = B.from_numpy(arrays["w"])
        self.samplers: dict = {}

    def _sampler(self, fanouts: list[int], weighted: bool, **kw):
        key = (tuple(fanouts), weighted, tuple(sorted(kw)))
        if key not in self.samplers:
            self.samplers[key] = self.nw.dataloading.NeighborSampler(fanouts, prob="w" if weighted else None, **kw)
        return self.samplers[key]

    def run_sample(self, seed_batches, fanouts, weighted) -> int:
        sampler = self._sampler(fanouts, weighted)
        edges = 0
        if self.loader:
            seeds = np.concatenate(seed_batches)
            # Throughput: one worker per thread, each sampling its own batches with one thread.
            loader = self.nw.dataloading.DataLoader(self.g, seeds, sampler, batch_size=len(seed_batches[0]),
                                                    num_workers=THREADS, seed=0)
            for _, _, blocks in loader:
                edges += sum(b.num_edges() for b in blocks)
            return edges
        for i, seeds in enumerate(seed_batches):
            _, _, blocks = sampler.sample(self.g, seeds, random_seed=i)
            edges += sum(b.num_edges() for b in blocks)
        return edges


class NodeweaveLoaderSystem(NodeweaveSystem):
    loader = True


class DGLSystem(System):
    loader = False

    def __init__(self, arrays: dict) -> None:
        import dgl
        import torch

        torch.set_num_threads(THREADS)
        self.dgl, self.torch = dgl, torch
        self.g = dgl.graph((torch.from_numpy(arrays["src"]), torch.from_numpy(arrays["dst"])),
                           num_nodes=int(arrays["num_nodes"]))
        self.g.create_formats_()
        self.g.edata["w"] = torch.from_numpy(arrays["w"])

    def run_sample(self, seed_batches, fanouts, weighted) -> int:
        dgl, torch = self.dgl, self.torch
        prob = "w" if weighted else None
        edges = 0
        if self.loader:
            sampler = dgl.dataloading.NeighborSampler(fanouts, prob=prob)
            seeds = torch.from_numpy(np.concatenate(seed_batches))
            loader = dgl.dataloading.DataLoader(self.g, seeds, sampler, batch_size=len(seed_batches[0]),
                                                shuffle=False, num_workers=0)
            for _, _, blocks in loader:
                edges += sum(b.num_edges() for b in blocks)
            return edges
        for seeds in seed_batches:
            cur = torch.from_numpy(seeds)
            for fanout in reversed(fanouts):
                frontier = dgl.sampling.sample_neighbors(self.g, cur, fanout, prob=prob)
                block = dgl.to_block(frontier, cur)
                cur = block.srcdata[dgl.NID]
                edges += block.num_edges()
        return edges


class DGLLoaderSystem(DGLSystem):
    loader = True


# ----------------------------------------------------------------------------- the epoch task


def sage_model(nn_mod, relu, conv_cls, in_feats: int, n_classes: int):
    """The benchmark's two-layer GraphSAGE, written once for torch.nn or nodeweave.core.nn."""

    class SAGE(nn_mod.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn_mod.ModuleList([conv_cls(in_feats, 64, "mean"), conv_cls(64, n_classes, "mean")])

        def forward(self, blocks, x):
            h = x
            for i, (layer, b) in enumerate(zip(self.layers, blocks)):
                h = layer(b, h)
                if i == 0:
                    h = relu(h)
            return h

    return SAGE()


def epoch_dgl(arrays, train, batch_size, reps):
    import dgl
    import torch
    from dgl.nn import SAGEConv

    torch.set_num_threads(THREADS)
    torch.manual_seed(0)
    g = dgl.graph((torch.from_numpy(arrays["src"]), torch.from_numpy(arrays["dst"])), num_nodes=int(arrays["num_nodes"]))
    g.create_formats_()
    g.ndata["feat"] = torch.from_numpy(arrays["feat"])
    g.ndata["label"] = torch.from_numpy(arrays["label"])
    model = sage_model(torch.nn, torch.relu, SAGEConv, g.ndata["feat"].shape[1], int(arrays["label"].max()) + 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.003)
    sampler = dgl.dataloading.NeighborSampler([10, 10], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loader = dgl.dataloading.DataLoader(g, torch.from_numpy(train), sampler, batch_size=batch_size,
                                        shuffle=True, num_workers=0)

    def one_epoch():
        for _, _, blocks in loader:
            loss = torch.nn.functional.cross_entropy(model(blocks, blocks[0].srcdata["feat"]),
                                                     blocks[-1].dstdata["label"])
            opt.zero_grad()
            loss.backward()
            opt.step()

    return timed(one_epoch, reps)


def epoch_nodeweave(arrays, train, batch_size, reps, backend):
    import nodeweave as nw
    import nodeweave.core as nc

    nw.set_backend(backend)
    nc.set_num_threads(THREADS)
    nc.manual_seed(0)
    g = nw.graph((arrays["src"], arrays["dst"]), num_nodes=int(arrays["num_nodes"]))
    g.create_formats_()
    if backend == "pytorch":
        import torch
        from nodeweave.nn.pytorch import SAGEConv

        torch.set_num_threads(THREADS)
        torch.manual_seed(0)
        F, optim = torch.nn.functional, torch.optim
        g.ndata["feat"] = torch.from_numpy(arrays["feat"])
        g.ndata["label"] = torch.from_numpy(arrays["label"])
        model = sage_model(torch.nn, torch.relu, SAGEConv, arrays["feat"].shape[1], int(arrays["label"].max()) + 1)
    else:
        from nodeweave.nn.native import SAGEConv

        F, optim = nc.nn.functional, nc.optim
        g.ndata["feat"] = nc.from_numpy(arrays["feat"])
        g.ndata["label"] = nc.from_numpy(arrays["label"])

        model = sage_model(nc.nn, nc.relu, SAGEConv, arrays["feat"].shape[1], int(arrays["label"].max()) + 1)
    opt = optim.Adam(model.parameters(), lr=0.003)
    sampler = nw.dataloading.NeighborSampler([10, 10], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loader = nw.dataloading.DataLoader(g, train, sampler, batch_size=batch_size, shuffle=True, seed=0,
                                       num_workers=WORKERS)  # None: the DataLoader's default

    def one_epoch():
        for _, _, blocks in loader:
            loss = F.cross_entropy(model(blocks, blocks[0].srcdata["feat"]), blocks[-1].dstdata["label"])
            opt.zero_grad()
            loss.backward()
            opt.step()

    return timed(one_epoch, reps)


def timed(fn, reps: int) -> dict:
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return {"median_s": statistics.median(times), "times_s": times}


SYSTEMS = {"nodeweave": NodeweaveSystem, "nodeweave-loader": NodeweaveLoaderSystem, "dgl": DGLSystem,
           "dgl-loader": DGLLoaderSystem}
WORKERS = 1


def main() -> None:
    global WORKERS
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--system", required=True,
                   choices=sorted(SYSTEMS) + ["nodeweave-native", "nodeweave-pytorch"])
    p.add_argument("--graph", required=True, help="a .npz cache file of bench/peers/graphs.py")
    p.add_argument("--task", choices=["sample", "epoch"], default="sample")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--workers", type=int, default=None,
                   help="nodeweave DataLoader workers in the epoch task (default: the DataLoader's own)")
    p.add_argument("--fanouts", default="15,10,5;25,10")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--batches", type=int, default=50)
    p.add_argument("--train-nodes", type=int, default=32768)
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    WORKERS = args.workers
    arrays = dict(np.load(args.graph))
    arrays["src"] = arrays["src"].astype(np.int64)
    arrays["dst"] = arrays["dst"].astype(np.int64)
    n = int(arrays["num_nodes"])
    arrays["w"] = np.random.default_rng(2).random(len(arrays["src"]), dtype=np.float32)
    perm = np.random.default_rng(0).permutation(n)
    rss_start = peak_rss_mb()
    out = {"system": args.system, "graph": str(arrays.get("name", "")), "task": args.task, "threads": THREADS,
           "workers": args.workers, "num_nodes": n, "num_edges": int(len(arrays["src"]))}
    if args.task == "sample":
        system = SYSTEMS[args.system](arrays)
        rss_graph = peak_rss_mb()
        batches = [perm[i * args.batch_size:(i + 1) * args.batch_size] for i in range(args.batches)]
        results = []
        for fanouts in parse_fanouts(args.fanouts):
            for weighted in (False, True):
                edges = system.run_sample(batches, fanouts, weighted)  # warm-up, and the edge count
                t = timed(lambda: system.run_sample(batches, fanouts, weighted), args.reps)
                results.append({"fanouts": fanouts, "weighted": weighted, "edges": edges,
                                "median_s": t["median_s"], "edges_per_s": edges / t["median_s"]})
        out["results"] = results
    else:
        train = perm[:args.train_nodes]
        rss_graph = rss_start
        if args.system == "dgl":
            out["epoch"] = epoch_dgl(arrays, train, args.batch_size, args.reps)
        elif args.system in ("nodeweave-native", "nodeweave-pytorch"):
            out["epoch"] = epoch_nodeweave(arrays, train, args.batch_size, args.reps, args.system.split("-")[1])
        else:
            raise SystemExit(f"--task epoch runs dgl, nodeweave-native or nodeweave-pytorch, not {args.system}")
    out["peak_rss_mb"] = {"start": rss_start, "graph_loaded": rss_graph, "end": peak_rss_mb()}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
