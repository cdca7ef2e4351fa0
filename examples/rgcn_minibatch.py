"""R-GCN (Schlichtkrull et al., ESWC 2018) entity classification on AIFB, trained on sampled blocks.

The model and graph are ``rgcn.py``'s: one graph of every entity with 45 relations plus their reverses
(``edata['rel_type']``), featureless input (the first RelGraphConv reads node ids as one-hot rows),
two layers of 16 hidden units, self-loops, messages normalized by 1 / the destination's in-degree
within the relation. Here the labelled 'Personen' nodes are trained in batches of 32 on blocks of
[20, 20] sampled neighbours (all relations together), and the normalization is recomputed on each
block, so that a sampled neighbourhood is averaged as the full one is. Evaluation takes every
neighbour (full-neighbour blocks, where the normalization equals the full graph's). Adam (lr 0.01),
50 epochs. Paper (full graph): 95.83%.

Run:  .venv/bin/python examples/rgcn_minibatch.py --runs 10 [--backend pytorch]
"""

from __future__ import annotations

import numpy as np
from tqdm import tqdm

# _common selects the backend (--backend) first: nodeweave.nn resolves layers to the active one.
from _common import F, History, T, accuracy, base_parser, mask_to_index, nn, no_grad, optim, run_seeds
from rgcn import relation_norm

import nodeweave as nw
from nodeweave.data import AIFBDataset
from nodeweave.dataloading import DataLoader, MultiLayerFullNeighborSampler, NeighborSampler
from nodeweave.nn import RelGraphConv


class RGCN(nn.Module):
    def __init__(self, num_nodes: int, hidden: int, n_classes: int, num_rels: int) -> None:
        super().__init__()
        self.conv1 = RelGraphConv(num_nodes, hidden, num_rels, None, None, activation=F.relu, self_loop=True)
        self.conv2 = RelGraphConv(hidden, n_classes, num_rels, None, None, self_loop=True)

    def forward(self, blocks, input_nodes):
        h = input_nodes  # node ids: one-hot rows of conv1's weights
        for conv, block in zip((self.conv1, self.conv2), blocks):
            etype = block.edata["rel_type"]
            dst = nw.backend.of(etype).to_numpy(block.edges()[1])
            norm = T.from_numpy(relation_norm(dst, nw.backend.of(etype).to_numpy(etype), block.num_dst_nodes()))
            h = conv(block, h, etype, norm)
        return h


def main() -> None:
    p = base_parser(__doc__.splitlines()[0], epochs=50, lr=0.01, weight_decay=0.0)
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--fanouts", type=int, nargs="+", default=[20, 20])
    p.add_argument("--batch-size", type=int, default=32)
    args = p.parse_args()

    ds = AIFBDataset(raw_dir=args.data_dir)
    g = ds.to_homogeneous()
    num_rels = int(g.edata["rel_type"].max().item()) + 1
    train_idx = mask_to_index(g.ndata["train_mask"])
    test_idx = mask_to_index(g.ndata["test_mask"])

    def one_run(seed: int):
        model = RGCN(g.num_nodes(), args.hidden, ds.num_classes, num_rels)
        opt = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
        sampler = NeighborSampler(args.fanouts, prefetch_labels=["label"], prefetch_edge_feats=["rel_type"])
        loader = DataLoader(g, train_idx, sampler, batch_size=args.batch_size, shuffle=True, seed=seed)
        hist = History()
        for _ in tqdm(range(args.epochs), desc=f"R-GCN minibatch AIFB seed {seed}", disable=args.quiet, leave=False):
            model.train()
            losses, accs = [], []
            for input_nodes, _, blocks in loader:
                logits = model(blocks, input_nodes)
                y = blocks[-1].dstdata["label"]
                loss = F.cross_entropy(logits, y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(float(loss.item()))
                accs.append(accuracy(logits, y))
            hist.train_loss.append(float(np.mean(losses)))
            hist.train_acc.append(float(np.mean(accs)))
        model.eval()
        full = MultiLayerFullNeighborSampler(len(args.fanouts), prefetch_labels=["label"],
                                             prefetch_edge_feats=["rel_type"])
        with no_grad():
            _, _, blocks = full.sample(g, test_idx, random_seed=0)
            input_nodes = blocks[0].srcdata[nw.NID]
            return accuracy(model(blocks, input_nodes), blocks[-1].dstdata["label"]), hist

    run_seeds(args, one_run)


if __name__ == "__main__":
    main()
