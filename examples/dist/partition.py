"""Partitions a node-classification graph for ``train_sage.py``: METIS k-way, training nodes
balanced over the parts, one HALO hop, features, labels and the train/validation/test masks stored
with the parts.

Datasets:
- ``cora`` / ``citeseer``: the public Planetoid split, from the data directory;
- ``sbm``: the stochastic-block-model graph of ``examples/sage_minibatch.py`` (16 planted
  communities, expected degree 10 inside and 6 outside, label = community, 16 noisy features),
  2^20 nodes by default (``--sbm-nodes`` scales it: ``--sbm-nodes 65536`` for a quick run), with
  1/16 of the nodes for training, 1/64 for validation and 1/16 for testing.

Run:  .venv/bin/python examples/dist/partition.py --dataset cora --num-parts 4 --out-dir parts/cora4
Then: mpirun -np 4 .venv/bin/python examples/dist/train_sage.py --part-config parts/cora4/cora.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import nodeweave as nw
from nodeweave.distributed import partition_graph


def sbm_graph(num_nodes: int, seed: int) -> nw.HeteroGraph:
    k = 16
    if num_nodes % k or num_nodes < 16 * k:
        raise SystemExit(f"partition.py: error: --sbm-nodes must be a multiple of {k} and at least {16 * k}")
    size = num_nodes // k
    p = np.full((k, k), 6 / (num_nodes - size))
    np.fill_diagonal(p, 10 / (size - 1))
    g = nw.sbm_graph([size] * k, p, seed=seed)
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(k), size)
    x = rng.standard_normal((num_nodes, k)).astype(np.float32)
    x[np.arange(num_nodes), labels] += 0.5
    perm = rng.permutation(num_nodes)
    B = nw.backend.current()
    g.ndata["feat"], g.ndata["label"] = B.from_numpy(x), B.from_numpy(labels)
    for name, (lo, hi) in {"train_mask": (0, num_nodes // 16), "val_mask": (num_nodes // 16, num_nodes * 5 // 64),
                           "test_mask": (num_nodes * 5 // 64, num_nodes * 9 // 64)}.items():
        mask = np.zeros(num_nodes, bool)
        mask[perm[lo:hi]] = True
        g.ndata[name] = B.from_numpy(mask)
    return g


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--dataset", choices=["cora", "citeseer", "sbm"], default="cora")
    p.add_argument("--num-parts", type=int, required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--part-method", choices=["metis", "random"], default="metis")
    p.add_argument("--sbm-nodes", type=int, default=1 << 20)
    p.add_argument("--seed", type=int, default=0, help="graph (sbm) and METIS seed")
    p.add_argument("--data-dir", default=None, help="dataset directory (default: $NODEWEAVE_DATA_DIR)")
    args = p.parse_args()
    if args.num_parts < 1:
        p.error("--num-parts must be at least 1")
    t0 = time.perf_counter()
    if args.dataset == "sbm":
        g = sbm_graph(args.sbm_nodes, args.seed)
    else:
        from nodeweave import data

        cls = {"cora": data.CoraGraphDataset, "citeseer": data.CiteseerGraphDataset}[args.dataset]
        g = cls(raw_dir=args.data_dir)[0]
    t1 = time.perf_counter()
    partition_graph(g, args.num_parts, args.out_dir, graph_name=args.dataset, part_method=args.part_method,
                    balance_ntypes=g.ndata["train_mask"], seed=args.seed)
    t2 = time.perf_counter()
    print(f"{args.dataset}: {g.num_nodes()} nodes, {g.num_edges()} edges (built in {t1 - t0:.1f} s); "
          f"{args.num_parts} parts in {t2 - t1:.1f} s -> {os.path.join(args.out_dir, args.dataset + '.json')}",
          flush=True)


if __name__ == "__main__":
    sys.exit(main())
