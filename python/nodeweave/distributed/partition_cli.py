"""``nodeweave-partition``: partitions a graph for multi-process training from the command line
(also ``python -m nodeweave.distributed.partition_cli``).

    nodeweave-partition --dataset cora --num-parts 4 --out-dir parts/
    nodeweave-partition --dataset rmat20 --feat-dim 128 --num-parts 8 --out-dir parts/ --objtype vol
    nodeweave-partition --graph mygraph.nwg --num-parts 2 --out-dir parts/ --balance-ntypes train_mask

The graph is a dataset of the data directory (cora, citeseer, pubmed, ppi, dblp, aifb), the
sampling benchmarks' synthetic R-MAT graph ``rmat<S>`` (2^S nodes, 16 * 2^S edges, (a, b, c, d) =
(0.57, 0.19, 0.19, 0.05), seed 0, plus a self-loop per node), or a file written by
``nodeweave.save_graphs``. It prints the time and peak memory of partitioning and one line per part.
Any bad input ends with one ``nodeweave-partition: error: ...`` line and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any, Sequence

import numpy as np

__all__ = ["main", "build_parser", "load_input_graph"]

PROG = "nodeweave-partition"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0].replace("``", ""),
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="The partition format and the loader are described in docs/distributed.md.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", help="cora, citeseer, pubmed, ppi, dblp, aifb (data directory) or rmat<S>")
    src.add_argument("--graph", help="a graph file written by nodeweave.save_graphs")
    p.add_argument("--graph-index", type=int, default=0, help="which graph of --graph's file (default 0)")
    p.add_argument("--feat-dim", type=int, default=0,
                   help="rmat<S> only: add this many standard-normal float32 node features (default 0)")
    p.add_argument("--num-parts", type=int, required=True, help="number of parts")
    p.add_argument("--out-dir", required=True, help="directory to write the manifest and part folders to")
    p.add_argument("--graph-name", help="manifest name (default: the dataset or file name)")
    p.add_argument("--num-hops", type=int, default=1, help="HALO depth (default 1)")
    p.add_argument("--part-method", choices=["metis", "random"], default="metis")
    p.add_argument("--objtype", choices=["cut", "vol"], default="cut", help="METIS' objective (default cut)")
    p.add_argument("--balance-ntypes", metavar="FIELD",
                   help="balance the parts' counts of each value of this node feature (e.g. train_mask)")
    p.add_argument("--balance-edges", action="store_true", help="also balance the in-degree sums")
    p.add_argument("--seed", type=int, default=0, help="METIS' (or the random assignment's) seed")
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    return p


def load_input_graph(args: argparse.Namespace) -> tuple[Any, str]:
    """The graph the options name and a default graph name for it."""
    import nodeweave as nw
    from nodeweave import errors as nwerr

    if args.graph is not None:
        graphs, _ = nw.load_graphs(args.graph)
        if not 0 <= args.graph_index < len(graphs):
            raise nwerr.ValueError(f"--graph-index {args.graph_index} is out of range: {args.graph} holds "
                                   f"{len(graphs)} graphs")
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.splitext(os.path.basename(args.graph))[0]) or "graph"
        return graphs[args.graph_index], name
    if args.feat_dim and not re.fullmatch(r"rmat\d+", args.dataset):
        raise nwerr.ValueError("--feat-dim applies to rmat<S> only")
    if args.feat_dim < 0:
        raise nwerr.ValueError(f"--feat-dim must be >= 0, got {args.feat_dim}")
    m = re.fullmatch(r"rmat(\d+)", args.dataset)
    if m:
        scale = int(m.group(1))
        if not 1 <= scale <= 30:
            raise nwerr.ValueError(f"--dataset rmat<S> needs 1 <= S <= 30, got S = {scale}")
        n = 1 << scale
        g = nw.add_self_loop(nw.rmat_graph(num_edges=16 * n, scale=scale, a=0.57, b=0.19, c=0.19, d=0.05, seed=0))
        if args.feat_dim:
            x = np.random.default_rng(0).standard_normal((n, args.feat_dim), dtype=np.float32)
            g.ndata["feat"] = nw.backend.current().from_numpy(x)
        return g, args.dataset
    try:
        data = nw.data.load_data(argparse.Namespace(dataset=args.dataset))
    except nwerr.ValueError as e:
        raise nwerr.ValueError(f"--dataset: {e}, or rmat<S> (synthetic)") from None
    return data[0], args.dataset.lower()


def _balance(g: Any, field: str | None) -> Any:
    from nodeweave import errors as nwerr

    if field is None:
        return None
    if len(g.ntypes) == 1:
        if field not in g.ndata:
            raise nwerr.ValueError(f"--balance-ntypes: the graph has no node feature {field!r} (it has {sorted(g.ndata)})")
        return g.ndata[field]
    found = {nt: g.nodes[nt].data[field] for nt in g.ntypes if field in g.nodes[nt].data}
    if not found:
        raise nwerr.ValueError(f"--balance-ntypes: no node type has a feature {field!r}")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status (2 on any bad input)."""
    from nodeweave._cli import run_command

    args = build_parser().parse_args(argv)
    return run_command(PROG, lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    """Partitions the graph the arguments name; prints what each part owns."""
    from nodeweave.distributed import load_partition_book, partition_graph

    g, default_name = load_input_graph(args)
    name = args.graph_name or default_name
    partition_graph(g, args.num_parts, args.out_dir, graph_name=name, num_hops=args.num_hops,
                    part_method=args.part_method, objtype=args.objtype,
                    balance_ntypes=_balance(g, args.balance_ntypes), balance_edges=args.balance_edges,
                    seed=args.seed, verbose=not args.quiet)
    if not args.quiet:
        manifest = os.path.join(args.out_dir, f"{name}.json")
        book = load_partition_book(manifest, 0)[0]
        for meta in book.metadata():
            print(f"part {meta['machine_id']}: owns {meta['num_nodes']} nodes and {meta['num_edges']} edges")
    return 0


if __name__ == "__main__":
    sys.exit(main())
