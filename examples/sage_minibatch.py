"""GraphSAGE (Hamilton et al., NeurIPS 2017) trained on sampled mini-batches: neighbour sampling into
blocks, the prefetching DataLoader, evaluation with every neighbour.

Datasets:
- ``cora`` / ``citeseer``: the public Planetoid split and the hyper-parameters of ``sage.py`` (two
  SAGEConv layers with the 'gcn' aggregator, 16 hidden units, dropout 0.5, Adam lr 0.01, weight
  decay 5e-4, 200 epochs, model selection on validation accuracy); fanouts [10, 10], batch 32.
- ``sbm``: a stochastic-block-model graph, 2^20 nodes in 16 planted communities of 65,536 nodes,
  edge probabilities chosen for an expected degree of 10 inside the community and 6 outside it
  (p_in = 10 / 65,535, p_out = 6 / (2^20 - 65,536)); the label is the community; the features are
  the one-hot community times 0.5 plus Gaussian noise of standard deviation 1 in 16 dimensions,
  so a node's own features are weak evidence and its neighbourhood decides. 65,536 training,
  16,384 validation and 65,536 test nodes; mean aggregator, 64 hidden units, fanouts [10, 5],
  batch 1024, 5 epochs.

``--jit`` (native backend) runs each training step as a traced program (nodeweave.core.jit): the
step is traced on the first two batches and every later block, of other sizes, replays one
program whose sizes follow it (docs/jit.md, "Graphs as inputs, and sizes that vary").

Run:  .venv/bin/python examples/sage_minibatch.py --dataset cora --runs 10 [--backend pytorch] [--jit]
"""

from __future__ import annotations

import time

# _common selects the backend (--backend) first: nodeweave.nn resolves layers to the active one.
from _common import (BACKEND, F, History, T, accuracy, base_parser, load_planetoid, nn, no_grad, optim,
                     run_seeds, setup)
import numpy as np
from tqdm import tqdm

import nodeweave as nw
from nodeweave.dataloading import DataLoader, MultiLayerFullNeighborSampler, NeighborSampler
from nodeweave.nn import SAGEConv


class SAGE(nn.Module):
    def __init__(self, in_feats: int, hidden: int, n_classes: int, aggregator: str, dropout: float) -> None:
        super().__init__()
        self.layers = nn.ModuleList([SAGEConv(in_feats, hidden, aggregator),
                                     SAGEConv(hidden, n_classes, aggregator)])
        self.dropout = nn.Dropout(dropout)

    def forward(self, blocks, x):
        """``blocks``: one block (or graph) per layer, input layer first."""
        if len(blocks) != len(self.layers):
            raise ValueError(f"got {len(blocks)} blocks (fanouts) for a model of {len(self.layers)} layers")
        h = x
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, self.dropout(h))
            if i != len(self.layers) - 1:
                h = F.relu(h)
        return h


def sbm_task(seed: int = 0):
    """The SBM graph of the module docstring (built once per process, ~20 s)."""
    k, size = 16, 65536
    n = k * size
    p_in, p_out = 10 / (size - 1), 6 / (n - size)
    p = np.full((k, k), p_out)
    np.fill_diagonal(p, p_in)
    g = nw.sbm_graph([size] * k, p, seed=seed)
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(k), size)
    x = rng.standard_normal((n, k)).astype(np.float32)
    x[np.arange(n), labels] += 0.5
    g.ndata["feat"] = T.from_numpy(x) if BACKEND == "pytorch" else nw.core.from_numpy(x)
    g.ndata["label"] = T.from_numpy(labels) if BACKEND == "pytorch" else nw.core.from_numpy(labels)
    perm = rng.permutation(n)
    return g, k, perm[:65536], perm[65536:81920], perm[81920:147456]


def evaluate(model, g, nodes, batch_size: int, num_layers: int) -> tuple[float, float]:
    """Loss and accuracy on ``nodes`` with every neighbour (full-neighbour blocks)."""
    loader = DataLoader(g, nodes, MultiLayerFullNeighborSampler(num_layers, prefetch_node_feats=["feat"],
                                                                prefetch_labels=["label"]),
                        batch_size=batch_size, seed=0)
    model.eval()
    correct, loss_sum, count = 0.0, 0.0, 0
    with no_grad():
        for _, output_nodes, blocks in loader:
            logits = model(blocks, blocks[0].srcdata["feat"])
            y = blocks[-1].dstdata["label"]
            m = int(y.shape[0])
            loss_sum += float(F.cross_entropy(logits, y).item()) * m
            correct += accuracy(logits, y) * m
            count += m
    return loss_sum / count, correct / count


def fill_defaults(args, sbm: bool) -> tuple[int, str, list, int]:
    """``(hidden, aggregator, fanouts, batch_size)`` from the options, with the module docstring's
    defaults for Planetoid or the SBM graph where they are not given (and 5 epochs on SBM)."""
    if sbm and args.epochs == 200:
        args.epochs = 5
    return (args.hidden or (64 if sbm else 16), args.aggregator or ("mean" if sbm else "gcn"),
            args.fanouts or ([10, 5] if sbm else [10, 10]), args.batch_size or (1024 if sbm else 32))


def main() -> None:
    p = base_parser(__doc__.splitlines()[0], epochs=200, lr=0.01, weight_decay=5e-4)
    p.add_argument("--dataset", choices=["cora", "citeseer", "sbm"], default="cora")
    p.add_argument("--hidden", type=int, default=None, help="default: 16 (Planetoid), 64 (sbm)")
    p.add_argument("--aggregator", choices=["mean", "gcn", "pool", "lstm"], default=None,
                   help="default: gcn (Planetoid, as sage.py), mean (sbm)")
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--fanouts", type=int, nargs="+", default=None,
                   help="per layer, input layer first; default 10 10 (Planetoid), 10 5 (sbm)")
    p.add_argument("--batch-size", type=int, default=None, help="default: 32 (Planetoid), 1024 (sbm)")
    p.add_argument("--num-workers", type=int, default=1, help="loader worker threads (0: no prefetching)")
    p.add_argument("--jit", action="store_true",
                   help="trace the training step (native backend): one program serves every block")
    args = p.parse_args()
    if args.jit and BACKEND != "native":
        p.error("--jit traces with nodeweave.core.jit, which runs on the native backend "
                "(on PyTorch, compile the model with torch.compile)")
    sbm = args.dataset == "sbm"
    hidden, aggregator, fanouts, batch_size = fill_defaults(args, sbm)
    setup(args)

    if sbm:
        t0 = time.perf_counter()
        g, n_classes, train_idx, val_idx, test_idx = sbm_task()
        print(f"SBM graph: {g.num_nodes()} nodes, {g.num_edges()} edges ({time.perf_counter() - t0:.1f} s)",
              flush=True)
    else:
        task = load_planetoid(args.dataset, args.data_dir, self_loops=False)
        g, n_classes = task.g, task.n_classes
        train_idx, val_idx, test_idx = (np.flatnonzero(nw.backend.of(m).to_numpy(m)) for m in task.masks)
    in_feats = int(g.ndata["feat"].shape[1])
    eval_batch = 4096

    def one_run(seed: int):
        model = SAGE(in_feats, hidden, n_classes, aggregator, args.dropout)
        opt = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
        sampler = NeighborSampler(fanouts, prefetch_node_feats=["feat"], prefetch_labels=["label"])
        loader = DataLoader(g, train_idx, sampler, batch_size=batch_size, shuffle=True, seed=seed,
                            num_workers=args.num_workers)
        hist = History()
        params = list(model.parameters())

        def train_step(blocks, x, y):
            logits = model(blocks, x)
            loss = F.cross_entropy(logits, y)
            if args.jit:  # the gradients come out of the program; the optimizer stays eager
                return loss, logits, T.autograd.grad(loss, params)
            opt.zero_grad()
            loss.backward()
            return loss, logits, None

        step = T.jit.trace(train_step) if args.jit else train_step
        best, best_state = (-1.0, float("inf")), None
        epoch_times = []
        bar = tqdm(range(args.epochs), desc=f"SAGE minibatch {args.dataset} seed {seed}", disable=args.quiet,
                   leave=False)
        for _ in bar:
            model.train()
            t0 = time.perf_counter()
            losses, accs = [], []
            steps = tqdm(loader, leave=False, disable=args.quiet or not sbm, desc="batches")
            for _, _, blocks in steps:
                y = blocks[-1].dstdata["label"]
                loss, logits, grads = step(blocks, blocks[0].srcdata["feat"], y)
                if grads is not None:
                    for q, g_ in zip(params, grads):
                        q.grad = g_
                opt.step()
                losses.append(float(loss.item()))
                accs.append(accuracy(logits, y))
            epoch_times.append(time.perf_counter() - t0)
            val_loss, val_acc = evaluate(model, g, val_idx, eval_batch, len(fanouts))
            hist.train_loss.append(float(np.mean(losses)))
            hist.train_acc.append(float(np.mean(accs)))
            hist.val_loss.append(val_loss)
            hist.val_acc.append(val_acc)
            if (val_acc, -val_loss) > (best[0], -best[1]):
                best = (val_acc, val_loss)
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            bar.set_postfix(loss=f"{hist.train_loss[-1]:.3f}", val_acc=f"{val_acc:.3f}")
        model.load_state_dict(best_state)
        _, test_acc = evaluate(model, g, test_idx, eval_batch, len(fanouts))
        print(f"  median epoch {np.median(epoch_times) * 1000:.1f} ms ({len(loader)} batches)", flush=True)
        if args.jit:
            print(f"  jit: {step.num_traces} traces, {step.num_dynamic_runs} steps replayed on other sizes "
                  f"({step.dynamic_status})", flush=True)
        return test_acc, hist

    run_seeds(args, one_run)


if __name__ == "__main__":
    main()
