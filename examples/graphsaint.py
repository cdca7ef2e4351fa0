"""GraphSAINT (Zeng et al., ICLR 2020): each step trains on the subgraph induced by a random node set
(node, edge or random-walk sampler), with the paper's normalization making the subgraph's loss and
aggregation unbiased estimates of the full graph's; evaluation runs on the whole graph.

Cora / Citeseer with the public Planetoid split, every node with one self-loop. Model: two
GraphConv layers aggregating the mean of the neighbourhood, written as a weighted sum so that the
normalization can enter: on the full graph message ``u -> v`` weighs ``1 / in-degree(v)``; on a
sampled subgraph it weighs ``aggr_norm[u -> v] / in-degree(v)`` with the full graph's degree
(``aggr_norm`` = ``C_v / C_{u,v}``, ``subgraph.edata['aggr_norm']``). The loss of a batch is
``sum(loss_norm[v] * CE_v) * |V| / |V_train|`` over its training nodes (``loss_norm`` =
``N / (C_v |V|)``, ``subgraph.ndata['loss_norm']``): an unbiased estimate of the mean training
cross entropy. ``--no-norm`` trains without either (plain mean over the subgraph, DGL's
SAINTSampler as is) for comparison.

Defaults: sampler ``node`` with budget 1200 draws (about 1,000 distinct nodes of Cora's 2,708), the
normalization from 200 pre-sampled sets, 4 batches per epoch, 100 epochs; 16 hidden units, dropout
0.5, Adam (lr 0.01, weight decay 5e-4); the epoch with the best validation accuracy (full graph) is
evaluated on the test nodes. ``--mode edge`` (budget = edge draws) and ``--mode walk``
(``--budget`` roots, ``--walk-length`` steps) switch samplers.

Run:  .venv/bin/python examples/graphsaint.py --dataset cora --runs 10 [--backend pytorch]
"""

from __future__ import annotations

# _common selects the backend (--backend) first: nodeweave.nn resolves layers to the active one.
from _common import (BACKEND, F, History, T, accuracy, base_parser, load_planetoid, mask_to_index, nn, no_grad,
                     optim, run_seeds)
import numpy as np
from tqdm import tqdm

import nodeweave as nw
from nodeweave.dataloading import DataLoader, SAINTSampler
from nodeweave.nn import GraphConv


class Net(nn.Module):
    """Two mean-aggregating graph convolutions whose messages carry per-edge weights."""

    def __init__(self, in_feats: int, hidden: int, n_classes: int, dropout: float) -> None:
        super().__init__()
        self.conv1 = GraphConv(in_feats, hidden, norm="none")
        self.conv2 = GraphConv(hidden, n_classes, norm="none")
        self.dropout = nn.Dropout(dropout)

    def forward(self, g, x, w):
        h = F.relu(self.conv1(g, self.dropout(x), edge_weight=w))
        return self.conv2(g, self.dropout(h), edge_weight=w)


def to_tensor(arr: np.ndarray):
    return T.from_numpy(np.ascontiguousarray(arr)) if BACKEND == "pytorch" else nw.core.from_numpy(
        np.ascontiguousarray(arr))


def main() -> None:
    p = base_parser(__doc__.splitlines()[0], epochs=100, lr=0.01, weight_decay=5e-4)
    p.add_argument("--dataset", choices=["cora", "citeseer"], default="cora")
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--mode", choices=["node", "edge", "walk"], default="node")
    p.add_argument("--budget", type=int, default=None,
                   help="node / edge draws, or walk roots (default: 1200 / 600 / 300)")
    p.add_argument("--walk-length", type=int, default=2)
    p.add_argument("--batches-per-epoch", type=int, default=4)
    p.add_argument("--norm-samples", type=int, default=200, help="pre-sampled sets for the normalization")
    p.add_argument("--no-norm", action="store_true", help="train without the GraphSAINT normalization")
    p.add_argument("--num-workers", type=int, default=1, help="loader worker threads (0: no prefetching)")
    args = p.parse_args()

    task = load_planetoid(args.dataset, args.data_dir, self_loops=True)
    g = task.g
    n = g.num_nodes()
    src, dst = (nw.backend.of(t).to_numpy(t) for t in g.edges())
    inv_deg = (1.0 / np.maximum(np.bincount(dst, minlength=n), 1)).astype(np.float32)
    full_w = to_tensor(inv_deg[dst])  # the full graph's mean aggregation
    train_mask = nw.backend.of(task.masks[0]).to_numpy(task.masks[0]).astype(bool)
    train_scale = n / train_mask.sum()  # loss_norm estimates a mean over all nodes; we want training nodes
    budget = args.budget or {"node": 1200, "edge": 600, "walk": 300}[args.mode]
    sampler = SAINTSampler(args.mode, (budget, args.walk_length) if args.mode == "walk" else budget,
                           prefetch_ndata=["feat", "label", "train_mask"], prefetch_edata=[],
                           num_norm_samples=0 if args.no_norm else args.norm_samples)
    if not args.no_norm:
        norm = sampler.normalization(g)
        print(f"normalization from {args.norm_samples} sets: {np.mean(norm['node_count'] > 0):.1%} of nodes and "
              f"{np.mean(norm['edge_count'] > 0):.1%} of edges seen", flush=True)
    val_idx, test_idx = mask_to_index(task.masks[1]), mask_to_index(task.masks[2])
    y_val, y_test = task.labels.index_select(0, val_idx), task.labels.index_select(0, test_idx)

    def batch_weights(sg):
        """Per-edge message weights and per-node loss weights of a sampled subgraph."""
        s, d = (nw.backend.of(t).to_numpy(t) for t in sg.edges())
        nid = nw.backend.of(sg.ndata[nw.NID]).to_numpy(sg.ndata[nw.NID])
        if args.no_norm:  # the subgraph's own mean
            w = 1.0 / np.maximum(np.bincount(d, minlength=sg.num_nodes()), 1)[d]
            return to_tensor(w.astype(np.float32)), None
        aggr = sg.edata["aggr_norm"]
        w = nw.backend.of(aggr).to_numpy(aggr) * inv_deg[nid[d]]
        return to_tensor(w.astype(np.float32)), sg.ndata["loss_norm"]

    def one_run(seed: int):
        model = Net(task.x.shape[1], args.hidden, task.n_classes, args.dropout)
        opt = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
        loader = DataLoader(g, np.arange(args.batches_per_epoch), sampler, seed=seed, num_workers=args.num_workers)
        hist = History()
        best, best_state = (-1.0, float("inf")), None
        bar = tqdm(range(args.epochs), desc=f"GraphSAINT-{args.mode} {args.dataset} seed {seed}",
                   disable=args.quiet, leave=False)
        for _ in bar:
            model.train()
            losses, accs = [], []
            for sg in loader:
                train = mask_to_index(sg.ndata["train_mask"])
                if int(train.shape[0]) == 0:
                    continue
                w, loss_norm = batch_weights(sg)
                logits = model(sg, sg.ndata["feat"], w).index_select(0, train)
                y = sg.ndata["label"].index_select(0, train)
                if loss_norm is None:
                    loss = F.cross_entropy(logits, y)
                else:
                    per_node = F.cross_entropy(logits, y, reduction="none")
                    loss = (per_node * loss_norm.index_select(0, train)).sum() * float(train_scale)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(float(loss.item()))
                accs.append(accuracy(logits, y))
            model.eval()
            with no_grad():
                logits = model(g, task.x, full_w)
                val_logits = logits.index_select(0, val_idx)
                val_loss = float(F.cross_entropy(val_logits, y_val).item())
                val_acc = accuracy(val_logits, y_val)
            hist.train_loss.append(float(np.mean(losses)))
            hist.train_acc.append(float(np.mean(accs)))
            hist.val_loss.append(val_loss)
            hist.val_acc.append(val_acc)
            if (val_acc, -val_loss) > (best[0], -best[1]):
                best = (val_acc, val_loss)
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            bar.set_postfix(loss=f"{hist.train_loss[-1]:.3f}", val_acc=f"{val_acc:.3f}")
        model.load_state_dict(best_state)
        model.eval()
        with no_grad():
            test_acc = accuracy(model(g, task.x, full_w).index_select(0, test_idx), y_test)
        return test_acc, hist

    run_seeds(args, one_run)


if __name__ == "__main__":
    main()
