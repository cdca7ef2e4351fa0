"""Graph convolutional network (Kipf & Welling, ICLR 2017) on Cora or Citeseer.

Two GraphConv layers with symmetric normalization D^-1/2 (A + I) D^-1/2, 16 hidden units, ReLU,
dropout 0.5, Adam (lr 0.01, weight decay 5e-4), 200 epochs, the public Planetoid split; the epoch with
the best validation accuracy is evaluated on the test nodes. Paper: 81.5% (Cora), 70.3% (Citeseer).

Run:  .venv/bin/python examples/gcn.py --dataset cora --runs 10 [--backend pytorch]
"""

from __future__ import annotations

# _common selects the backend (--backend) first: nodeweave.nn resolves layers to the active one.
from _common import F, base_parser, load_planetoid, nn, run_node_classification, run_seeds

from nodeweave.nn import GraphConv


class GCN(nn.Module):
    def __init__(self, in_feats: int, hidden: int, n_classes: int, dropout: float) -> None:
        super().__init__()
        self.conv1 = GraphConv(in_feats, hidden, activation=F.relu)
        self.conv2 = GraphConv(hidden, n_classes)
        self.dropout = nn.Dropout(dropout)

    def forward(self, g, x):
        h = self.conv1(g, self.dropout(x))
        return self.conv2(g, self.dropout(h))


def main() -> None:
    p = base_parser(__doc__.splitlines()[0], epochs=200, lr=0.01, weight_decay=5e-4)
    p.add_argument("--dataset", choices=["cora", "citeseer"], default="cora")
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--dropout", type=float, default=0.5)
    args = p.parse_args()

    task = load_planetoid(args.dataset, args.data_dir, self_loops=True)

    def one_run(seed: int):
        model = GCN(task.x.shape[1], args.hidden, task.n_classes, args.dropout)
        return run_node_classification(model, lambda: model(task.g, task.x), task, args,
                                       desc=f"GCN {args.dataset} seed {seed}")

    run_seeds(args, one_run)


if __name__ == "__main__":
    main()
