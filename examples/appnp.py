"""APPNP: predict then propagate (Klicpera et al., ICLR 2019) on Cora or Citeseer.

An MLP (64 hidden units, ReLU, dropout 0.5) predicts, then K=10 steps of personalized PageRank
propagation with teleport alpha=0.1 (edge dropout 0.5 while training) smooth the predictions. Adam
(lr 0.01, weight decay 5e-4), 200 epochs, model selection on validation accuracy.

Run:  .venv/bin/python examples/appnp.py --dataset cora --runs 10 [--backend pytorch]
"""

from __future__ import annotations

# _common selects the backend (--backend) first: nodeweave.nn resolves layers to the active one.
from _common import F, base_parser, load_planetoid, nn, run_node_classification, run_seeds

from nodeweave.nn import APPNPConv


class APPNP(nn.Module):
    def __init__(self, in_feats: int, hidden: int, n_classes: int, dropout: float, k: int, alpha: float,
                 edge_drop: float) -> None:
        super().__init__()
        self.fc1 = nn.Linear(in_feats, hidden)
        self.fc2 = nn.Linear(hidden, n_classes)
        self.dropout = nn.Dropout(dropout)
        self.propagate = APPNPConv(k, alpha, edge_drop)

    def forward(self, g, x):
        h = F.relu(self.fc1(self.dropout(x)))
        h = self.fc2(self.dropout(h))
        return self.propagate(g, h)


def main() -> None:
    p = base_parser(__doc__.splitlines()[0], epochs=200, lr=0.01, weight_decay=5e-4)
    p.add_argument("--dataset", choices=["cora", "citeseer"], default="cora")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--k", type=int, default=10, help="propagation steps")
    p.add_argument("--alpha", type=float, default=0.1, help="teleport probability")
    p.add_argument("--edge-drop", type=float, default=0.5)
    args = p.parse_args()

    task = load_planetoid(args.dataset, args.data_dir, self_loops=True)

    def one_run(seed: int):
        model = APPNP(task.x.shape[1], args.hidden, task.n_classes, args.dropout, args.k, args.alpha,
                      args.edge_drop)
        return run_node_classification(model, lambda: model(task.g, task.x), task, args,
                                       desc=f"APPNP {args.dataset} seed {seed}")

    run_seeds(args, one_run)


if __name__ == "__main__":
    main()
