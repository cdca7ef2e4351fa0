"""Link prediction with GraphSAGE on sampled edge batches: negative sampling, and exclusion of each
batch's edges and their reverses from the neighbourhoods the model sees.

Setup: the graph's undirected edges are split (seeded) into 85% training, 5% validation and 10%
test edges; the model sees only the training edges (both directions; edge i's reverse is i + m, the
``reverse_eids`` that ``exclude='reverse_id'`` reads). Two SAGEConv layers ('mean', hidden 128 ->
128), node input: the bag-of-words features on Cora, a learned 64-dimensional embedding on DBLP (it
has no features). Score of a pair: the dot product of its two representations; loss: binary cross
entropy of each positive edge against one uniformly sampled negative destination. Neighbour fanouts
[15, 10], batch 512 edges, Adam lr 0.005, weight decay 0; model selection on validation AUC.

Metrics on the test edges, with representations computed from every training neighbour:
- AUC: test edges against as many non-edges drawn uniformly (global_uniform_negative_sampling);
- MRR: each test edge (u, v) ranked against 100 corrupted pairs (u, v') with random v' (ties
  counted against it), the mean of 1 / rank.

Run:  .venv/bin/python examples/link_pred.py --dataset cora --runs 5 [--backend pytorch]
"""

from __future__ import annotations

import time

# _common selects the backend (--backend) first: nodeweave.nn resolves layers to the active one.
from _common import BACKEND, F, T, base_parser, nn, no_grad, optim, setup, set_seed
import numpy as np
import scipy.stats
from tqdm import tqdm

import nodeweave as nw
from nodeweave.dataloading import (DataLoader, MultiLayerFullNeighborSampler, NeighborSampler,
                                   as_edge_prediction_sampler, negative_sampler)
from nodeweave.nn import SAGEConv


def to_tensor(a: np.ndarray):
    return T.from_numpy(np.ascontiguousarray(a))


def to_np(t) -> np.ndarray:
    return nw.backend.of(t).to_numpy(t)


class Encoder(nn.Module):
    def __init__(self, in_feats: int | None, num_nodes: int, hidden: int) -> None:
        super().__init__()
        self.emb = nn.Embedding(num_nodes, 64) if in_feats is None else None
        d = 64 if in_feats is None else in_feats
        self.layers = nn.ModuleList([SAGEConv(d, hidden, "mean"), SAGEConv(hidden, hidden, "mean")])

    def forward(self, blocks, input_nodes, feats):
        h = self.emb(input_nodes) if self.emb is not None else feats
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if i == 0:
                h = F.relu(h)
        return h


def split_edges(g, seed: int):
    """Undirected edges (u < v, self-loops dropped) split 85/5/10."""
    src, dst = (to_np(t) for t in g.edges())
    keep = src != dst
    u, v = np.minimum(src, dst)[keep], np.maximum(src, dst)[keep]
    pairs = np.unique(np.stack([u, v], 1), axis=0)
    perm = np.random.default_rng(seed).permutation(len(pairs))
    n_test, n_val = len(pairs) // 10, len(pairs) // 20
    test, val, train = pairs[perm[:n_test]], pairs[perm[n_test:n_test + n_val]], pairs[perm[n_test + n_val:]]
    return train, val, test


def embed_all(model, g, feats, num_layers: int, batch_size: int = 4096):
    """Representations of every node from every training neighbour, batch by batch."""
    n = g.num_nodes()
    loader = DataLoader(g, np.arange(n), MultiLayerFullNeighborSampler(num_layers), batch_size=batch_size, seed=0)
    parts = []
    model.eval()
    with no_grad():
        for input_nodes, output_nodes, blocks in loader:
            x = feats[input_nodes] if feats is not None else None
            h = model(blocks, input_nodes, x)
            parts.append((to_np(output_nodes), to_np(h)))
    out = np.zeros((n, parts[0][1].shape[1]), np.float32)
    for ids, h in parts:
        out[ids] = h
    return out


def auc_and_mrr(h: np.ndarray, pos: np.ndarray, neg: np.ndarray, seed: int) -> tuple[float, float]:
    score = lambda p: (h[p[:, 0]] * h[p[:, 1]]).sum(1)  # noqa: E731
    sp, sn = score(pos), score(neg)
    ranks = scipy.stats.rankdata(np.concatenate([sp, sn]))
    auc = (ranks[:len(sp)].sum() - len(sp) * (len(sp) + 1) / 2) / (len(sp) * len(sn))
    rng = np.random.default_rng(seed)
    corrupt = rng.integers(0, len(h), (len(pos), 100))
    sc = (h[pos[:, 0]][:, None, :] * h[corrupt]).sum(2)
    rank = 1 + (sc >= sp[:, None]).sum(1)
    return float(auc), float((1.0 / rank).mean())


def main() -> None:
    p = base_parser(__doc__.splitlines()[0], epochs=20, lr=0.005, weight_decay=0.0)
    p.add_argument("--dataset", choices=["cora", "dblp"], default="cora")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--fanouts", type=int, nargs="+", default=[15, 10])
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--num-workers", type=int, default=1)
    args = p.parse_args()
    setup(args)
    from nodeweave import data

    if args.dataset == "cora":
        full = data.CoraGraphDataset(raw_dir=args.data_dir)[0]
        feats_np = to_np(full.ndata["feat"]).astype(np.float32)
    else:
        full = data.DBLPDataset(raw_dir=args.data_dir)[0]
        feats_np = None
    n = full.num_nodes()

    aucs, mrrs = [], []
    t0 = time.perf_counter()
    for seed in range(args.seed, args.seed + args.runs):
        set_seed(seed)
        train, val, test = split_edges(full, seed)
        m = len(train)
        g = nw.graph((np.concatenate([train[:, 0], train[:, 1]]), np.concatenate([train[:, 1], train[:, 0]])),
                     num_nodes=n)
        reverse_eids = np.concatenate([np.arange(m, 2 * m), np.arange(m)])
        feats = to_tensor(feats_np) if feats_np is not None else None
        model = Encoder(None if feats is None else feats_np.shape[1], n, args.hidden)
        opt = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
        sampler = as_edge_prediction_sampler(NeighborSampler(args.fanouts), exclude="reverse_id",
                                             reverse_eids=reverse_eids, negative_sampler=negative_sampler.Uniform(1))
        loader = DataLoader(g, np.arange(m), sampler, batch_size=args.batch_size, shuffle=True, seed=seed,
                            num_workers=args.num_workers)
        val_neg = nw.sampling.global_uniform_negative_sampling(full, len(val), random_seed=seed + 1)
        val_neg = np.stack([to_np(t) for t in val_neg], 1)
        best, best_state = -1.0, None
        for _ in tqdm(range(args.epochs), desc=f"link_pred {args.dataset} seed {seed}", disable=args.quiet, leave=False):
            model.train()
            for input_nodes, pair, neg, blocks in loader:
                x = feats[input_nodes] if feats is not None else None
                h = model(blocks, input_nodes, x)
                ps, pd = pair.edges()
                ns, nd = neg.edges()
                pos_score = (h[ps] * h[pd]).sum(1)
                neg_score = (h[ns] * h[nd]).sum(1)
                score = T.cat([pos_score, neg_score])
                label = T.cat([T.ones(pos_score.shape[0]), T.zeros(neg_score.shape[0])])
                loss = F.binary_cross_entropy_with_logits(score, label)
                opt.zero_grad()
                loss.backward()
                opt.step()
            auc, _ = auc_and_mrr(embed_all(model, g, feats, len(args.fanouts)), val, val_neg, seed)
            if auc > best:
                best = auc
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        model.load_state_dict(best_state)
        h = embed_all(model, g, feats, len(args.fanouts))
        test_neg = nw.sampling.global_uniform_negative_sampling(full, len(test), random_seed=seed + 2)
        auc, mrr = auc_and_mrr(h, test, np.stack([to_np(t) for t in test_neg], 1), seed)
        aucs.append(auc)
        mrrs.append(mrr)
        print(f"seed {seed}: test AUC {auc:.4f}, MRR {mrr:.4f}", flush=True)
    print(f"{len(aucs)} run(s) in {time.perf_counter() - t0:.1f} s ({BACKEND} backend)", flush=True)
    a, r = np.asarray(aucs), np.asarray(mrrs)
    print(f"Test AUC: {a.mean():.4f} ± {a.std():.4f}  MRR: {r.mean():.4f} ± {r.std():.4f}")


if __name__ == "__main__":
    main()
