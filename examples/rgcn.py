"""Relational graph convolutional network (Schlichtkrull et al., ESWC 2018) for entity
classification on AIFB.

The AIFB heterograph (with reverse relations) is merged into one graph whose edges carry their
relation id. As in the paper, the entities have no features: the first RelGraphConv reads node ids
as one-hot rows, so each relation r has its own (num_nodes, 16) weight W_r, looked up per edge.
Two layers (16 hidden units, ReLU, self-loop, messages normalized by 1 / the destination's
in-degree within the relation; no basis decomposition by default: ``--num-bases`` turns it on)
predict the research group of the 'Personen' nodes. Adam (lr 0.01, no weight decay: the paper's
AIFB setting), 50 epochs, full-batch, test accuracy after the last epoch. Paper: 95.83%.

Run:  .venv/bin/python examples/rgcn.py --runs 10 [--backend pytorch]
"""

from __future__ import annotations

import numpy as np
from tqdm import tqdm

# _common selects the backend (--backend) first: nodeweave.nn resolves layers to the active one.
from _common import F, History, T, accuracy, base_parser, mask_to_index, nn, no_grad, optim, run_seeds

from nodeweave.data import AIFBDataset
from nodeweave.nn import RelGraphConv


class RGCN(nn.Module):
    def __init__(self, num_nodes: int, hidden: int, n_classes: int, num_rels: int, num_bases: int | None,
                 dropout: float) -> None:
        super().__init__()
        reg = "basis" if num_bases else None
        # in_feat = num_nodes: conv1 takes node ids (featureless one-hot input).
        self.conv1 = RelGraphConv(num_nodes, hidden, num_rels, reg, num_bases, activation=F.relu,
                                  self_loop=True, dropout=dropout)
        self.conv2 = RelGraphConv(hidden, n_classes, num_rels, reg, num_bases, self_loop=True)

    def forward(self, g, ids, etypes, norm):
        h = self.conv1(g, ids, etypes, norm)
        return self.conv2(g, h, etypes, norm)


def relation_norm(dst: np.ndarray, etype: np.ndarray, num_nodes: int) -> np.ndarray:
    """1 / |N_v^r|: per edge, one over the number of edges of its relation entering its destination."""
    key = etype.astype(np.int64) * num_nodes + dst
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    return (1.0 / counts[inverse]).astype(np.float32).reshape(-1, 1)


def main() -> None:
    p = base_parser(__doc__.splitlines()[0], epochs=50, lr=0.01, weight_decay=0.0)
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--num-bases", type=int, default=None, help="basis decomposition with this many bases")
    p.add_argument("--dropout", type=float, default=0.0)
    args = p.parse_args()

    ds = AIFBDataset(raw_dir=args.data_dir)
    # R-GCN's graph: every entity one node, 45 relations plus their reverses (edata['rel_type']),
    # labels and masks on the 'Personen' nodes.
    g = ds.to_homogeneous()
    etypes = g.edata["rel_type"]
    dst = g.edges()[1].numpy()
    norm = T.from_numpy(relation_norm(dst, etypes.numpy(), g.num_nodes()))
    num_rels = int(etypes.max().item()) + 1
    ids = T.arange(g.num_nodes())
    train_idx = mask_to_index(g.ndata["train_mask"])
    test_idx = mask_to_index(g.ndata["test_mask"])
    y_train = g.ndata["label"].index_select(0, train_idx)
    y_test = g.ndata["label"].index_select(0, test_idx)

    def one_run(seed: int):
        model = RGCN(g.num_nodes(), args.hidden, ds.num_classes, num_rels, args.num_bases, args.dropout)
        opt = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
        hist = History()
        for _ in tqdm(range(args.epochs), desc=f"R-GCN AIFB seed {seed}", disable=args.quiet, leave=False):
            model.train()
            logits = model(g, ids, etypes, norm).index_select(0, train_idx)
            loss = F.cross_entropy(logits, y_train)
            opt.zero_grad()
            loss.backward()
            opt.step()
            hist.train_loss.append(float(loss.item()))
            hist.train_acc.append(accuracy(logits, y_train))
        model.eval()
        with no_grad():
            return accuracy(model(g, ids, etypes, norm).index_select(0, test_idx), y_test), hist

    run_seeds(args, one_run)


if __name__ == "__main__":
    main()
