"""GraphSAGE (Hamilton et al., NeurIPS 2017) trained full-graph on Cora or Citeseer.

Two SAGEConv layers (aggregator 'gcn' by default: the mean over the neighbourhood including the node
itself), 16 hidden units, ReLU, dropout 0.5, Adam (lr 0.01, weight decay 5e-4), 200 epochs, model
selection on validation accuracy.

Run:  .venv/bin/python examples/sage.py --dataset cora --runs 10 [--backend pytorch] [--aggregator mean]
"""

from __future__ import annotations

# _common selects the backend (--backend) first: nodeweave.nn resolves layers to the active one.
from _common import F, base_parser, load_planetoid, nn, run_node_classification, run_seeds

from nodeweave.nn import SAGEConv


class GraphSAGE(nn.Module):
    def __init__(self, in_feats: int, hidden: int, n_classes: int, aggregator: str, dropout: float) -> None:
        super().__init__()
        self.conv1 = SAGEConv(in_feats, hidden, aggregator)
        self.conv2 = SAGEConv(hidden, n_classes, aggregator)
        self.dropout = nn.Dropout(dropout)

    def forward(self, g, x):
        h = F.relu(self.conv1(g, self.dropout(x)))
        return self.conv2(g, self.dropout(h))


def main() -> None:
    p = base_parser(__doc__.splitlines()[0], epochs=200, lr=0.01, weight_decay=5e-4)
    p.add_argument("--dataset", choices=["cora", "citeseer"], default="cora")
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--aggregator", choices=["mean", "gcn", "pool", "lstm"], default="gcn")
    p.add_argument("--dropout", type=float, default=0.5)
    args = p.parse_args()

    task = load_planetoid(args.dataset, args.data_dir, self_loops=False)

    def one_run(seed: int):
        model = GraphSAGE(task.x.shape[1], args.hidden, task.n_classes, args.aggregator, args.dropout)
        return run_node_classification(model, lambda: model(task.g, task.x), task, args,
                                       desc=f"SAGE {args.dataset} seed {seed}")

    run_seeds(args, one_run)


if __name__ == "__main__":
    main()
