"""Simplifying graph convolutional networks (Wu et al., ICML 2019) on Cora or Citeseer.

One linear layer on the K=2-step propagated features S^K X, S = D^-1/2 (A + I) D^-1/2, computed once
and cached. Adam (lr 0.2, weight decay 5e-5), 100 epochs, model selection on validation accuracy.
Paper: 81.0% (Cora), 71.9% (Citeseer).

Run:  .venv/bin/python examples/sgc.py --dataset cora --runs 10 [--backend pytorch]
"""

from __future__ import annotations

# _common selects the backend (--backend) first: nodeweave.nn resolves layers to the active one.
from _common import base_parser, load_planetoid, run_node_classification, run_seeds

from nodeweave.nn import SGConv


def main() -> None:
    p = base_parser(__doc__.splitlines()[0], epochs=100, lr=0.2, weight_decay=5e-5)
    p.add_argument("--dataset", choices=["cora", "citeseer"], default="cora")
    p.add_argument("--k", type=int, default=2, help="propagation steps")
    args = p.parse_args()

    task = load_planetoid(args.dataset, args.data_dir, self_loops=True)

    def one_run(seed: int):
        model = SGConv(task.x.shape[1], task.n_classes, k=args.k, cached=True)
        return run_node_classification(model, lambda: model(task.g, task.x), task, args,
                                       desc=f"SGC {args.dataset} seed {seed}")

    run_seeds(args, one_run)


if __name__ == "__main__":
    main()
