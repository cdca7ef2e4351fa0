"""Graph attention network (Veličković et al., ICLR 2018) on Cora or Citeseer.

Layer 1: 8 heads of 8 units, concatenated, ELU; layer 2: one head (the paper averages 8 on Pubmed
only). Dropout 0.6 on inputs and attention coefficients, LeakyReLU slope 0.2, Adam (lr 0.005,
weight decay 5e-4), 200 epochs, model selection on validation accuracy. Paper: 83.0% (Cora),
72.5% (Citeseer).

Run:  .venv/bin/python examples/gat.py --dataset cora --runs 10 [--backend pytorch]
"""

from __future__ import annotations

# _common selects the backend (--backend) first: nodeweave.nn resolves layers to the active one.
from _common import F, base_parser, load_planetoid, nn, run_node_classification, run_seeds

from nodeweave.nn import GATConv


class GAT(nn.Module):
    def __init__(self, in_feats: int, hidden: int, heads: int, n_classes: int, out_heads: int,
                 dropout: float) -> None:
        super().__init__()
        self.conv1 = GATConv(in_feats, hidden, heads, feat_drop=dropout, attn_drop=dropout,
                             activation=F.elu)
        self.conv2 = GATConv(hidden * heads, n_classes, out_heads, feat_drop=dropout, attn_drop=dropout)

    def forward(self, g, x):
        h = self.conv1(g, x).flatten(1)
        return self.conv2(g, h).mean(1)


def main() -> None:
    p = base_parser(__doc__.splitlines()[0], epochs=200, lr=0.005, weight_decay=5e-4)
    p.add_argument("--dataset", choices=["cora", "citeseer"], default="cora")
    p.add_argument("--hidden", type=int, default=8, help="units per head in layer 1")
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--out-heads", type=int, default=1)
    p.add_argument("--dropout", type=float, default=0.6)
    args = p.parse_args()

    task = load_planetoid(args.dataset, args.data_dir, self_loops=True)

    def one_run(seed: int):
        model = GAT(task.x.shape[1], args.hidden, args.heads, task.n_classes, args.out_heads, args.dropout)
        return run_node_classification(model, lambda: model(task.g, task.x), task, args,
                                       desc=f"GAT {args.dataset} seed {seed}")

    run_seeds(args, one_run)


if __name__ == "__main__":
    main()
