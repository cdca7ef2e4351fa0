"""Distributed GraphSAGE: data-parallel mini-batch training over the parts of a partitioned graph,
one MPI rank per part (``examples/dist/partition.py`` writes the parts).

Each rank takes its share of the training nodes (``node_split``), samples its batches over the
whole graph (its own part locally, the rest from the owners, ``DistNeighborSampler``), fetches the
input features from their owners, and after ``backward()`` averages the gradients over the ranks
(``all_reduce_gradients``), so every replica takes the same step. ``--batch-size`` is the global
batch: each of the ``k`` ranks trains on ``batch_size / k`` seeds per step, and the steps equal those
of one process training on the union of the ranks' batches.

Model and defaults as ``examples/sage_minibatch.py``: Cora/Citeseer two SAGEConv 'gcn' layers, 16
hidden units, dropout 0.5, Adam lr 0.01, weight decay 5e-4, fanouts [10, 10], global batch 32, 200
epochs; SBM mean aggregator, 64 hidden, fanouts [10, 5], batch 1024, 5 epochs. Model selection on
validation accuracy; the test accuracy of the selected epoch is printed last.

Faults: ``--checkpoint PATH --checkpoint-every N`` makes rank 0 write the job's state (model,
optimizer, best model, epoch and batch) atomically every N steps and at every epoch's end;
``--resume`` continues from it. Dropout is reseeded from (seed, epoch, batch, rank) at every step
and batches are keyed by (seed, epoch, batch), so a resumed run takes exactly the steps the
uninterrupted run takes. If a rank dies, ``mpirun`` ends the others and names it.

Run:  mpirun -np 4 .venv/bin/python examples/dist/train_sage.py --part-config parts/cora4/cora.json
      (add --oversubscribe when the machine has fewer cores than ranks; srun works the same way)
"""

from __future__ import annotations

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# _common selects the backend (--backend) before nodeweave.nn resolves the layers.
from _common import BACKEND, F, T, base_parser, no_grad, optim, set_seed, setup  # noqa: E402
from sage_minibatch import SAGE, fill_defaults  # noqa: E402
import numpy as np  # noqa: E402

import nodeweave as nw  # noqa: E402
import nodeweave.distributed as dist  # noqa: E402
from nodeweave import _C  # noqa: E402
from nodeweave.distributed import (DistGraph, DistNeighborSampler, DistNodeDataLoader,  # noqa: E402
                                   all_reduce_gradients, node_split)


def eval_loader(g, nids, num_layers: int) -> DistNodeDataLoader:
    """Batches of ``nids`` (every rank its share) with every neighbour."""
    return DistNodeDataLoader(g, nids, DistNeighborSampler([-1] * num_layers), batch_size=4096,
                              prefetch_node_feats=["feat"], prefetch_labels=["label"], seed=0)


def evaluate(model, loader: DistNodeDataLoader) -> float:
    """Accuracy on the loader's nodes, over the whole job."""
    model.eval()
    correct = np.zeros(2)
    with no_grad():
        for _, _, blocks in loader.batches(0):
            logits = model(blocks, blocks[0].srcdata["feat"])
            y = blocks[-1].dstdata["label"]
            correct += [float((logits.argmax(1) == y).sum().item()), int(y.shape[0])]
    total = dist.all_reduce(correct)
    return float(total[0] / max(total[1], 1))


def state_of(module) -> dict:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def main() -> int:
    p = base_parser(__doc__.splitlines()[0], epochs=200, lr=0.01, weight_decay=5e-4)
    p.add_argument("--part-config", required=True, help="the manifest partition.py wrote (one part per rank)")
    p.add_argument("--hidden", type=int, default=None, help="default: 16 (Planetoid), 64 (sbm)")
    p.add_argument("--aggregator", choices=["mean", "gcn", "pool"], default=None,
                   help="default: gcn (Planetoid), mean (sbm)")
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--fanouts", type=int, nargs="+", default=None, help="input layer first; default 10 10 / 10 5")
    p.add_argument("--batch-size", type=int, default=None, help="global batch (default 32 / 1024)")
    p.add_argument("--checkpoint", default=None, help="checkpoint file (rank 0 writes it)")
    p.add_argument("--checkpoint-every", type=int, default=0, help="also checkpoint every N steps (0: epoch ends)")
    p.add_argument("--resume", action="store_true", help="continue from --checkpoint if it exists")
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: all epochs)")
    p.add_argument("--log-json", default=None, help="each rank writes its losses and seeds to PATH.<rank>")
    args = p.parse_args()
    if args.resume and not args.checkpoint:
        p.error("--resume needs --checkpoint")
    setup(args)
    rank, size = dist.init()
    g = DistGraph(args.part_config)
    hidden, aggregator, fanouts, batch = fill_defaults(args, g.graph_name == "sbm")
    if batch % size:
        p.error(f"--batch-size {batch} must be a multiple of the rank count {size}")
    in_feats = g.ndata["feat"].shape[1]
    top = np.zeros(size, np.int64)  # each rank's largest label; classes = the largest + 1
    top[rank] = nw.backend.current().to_numpy(g.ndata["label"].local).max(initial=-1)
    n_classes = int(dist.all_reduce(top).max()) + 1

    set_seed(args.seed)  # the same initial weights on every rank
    model = SAGE(in_feats, hidden, n_classes, aggregator, args.dropout)
    opt = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    train_nids = node_split(g.ndata["train_mask"], graph=g)
    val_loader = eval_loader(g, node_split(g.ndata["val_mask"], graph=g), len(fanouts))
    test_loader = eval_loader(g, node_split(g.ndata["test_mask"], graph=g), len(fanouts))
    loader = DistNodeDataLoader(g, train_nids, DistNeighborSampler(fanouts), batch_size=batch // size,
                                shuffle=True, seed=args.seed, prefetch_node_feats=["feat"], prefetch_labels=["label"])

    meta = {"world_size": size, "batch_size": batch, "seed": args.seed, "fanouts": list(fanouts),
            "backend": BACKEND, "graph": os.path.abspath(args.part_config)}
    epoch, start, step = 0, 0, 0
    best_acc, best_state = -1.0, state_of(model)
    state = dist.load_checkpoint(args.checkpoint) if args.resume else None
    if state is not None:
        saved = json.loads(state["meta"])
        diff = {k: (saved.get(k), v) for k, v in meta.items() if saved.get(k) != v}
        if diff:
            p.error(f"--resume: {args.checkpoint} was written by a different job: " +
                    ", ".join(f"{k} {a!r} there, {b!r} now" for k, (a, b) in diff.items()))
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        best_state, best_acc = state["best_model"], float(state["best_acc"])
        epoch, start, step = int(state["epoch"]), int(state["batch"]), int(state["step"])
        if rank == 0:
            print(f"resumed from {args.checkpoint}: epoch {epoch}, batch {start}, step {step}", flush=True)

    def checkpoint(next_epoch: int, next_batch: int) -> None:
        if args.checkpoint:
            dist.save_checkpoint(args.checkpoint, {
                "meta": json.dumps(meta), "model": state_of(model), "optimizer": opt.state_dict(),
                "best_model": best_state, "best_acc": best_acc, "epoch": next_epoch, "batch": next_batch,
                "step": step})

    log = []
    done = False
    while epoch < args.epochs and not done:
        model.train()
        dist.reset_comm_stats()
        t0 = time.perf_counter()
        losses = []
        for i, (_, out_nodes, blocks) in enumerate(loader.batches(epoch, start), start=start):
            # Dropout from (seed, epoch, batch, rank): a resumed run draws what the first run drew.
            set_seed(_C.sampling.derive_key(loader.batch_key(epoch, i), rank) & 0x7FFFFFFF)
            logits = model(blocks, blocks[0].srcdata["feat"])
            loss = F.cross_entropy(logits, blocks[-1].dstdata["label"])
            opt.zero_grad()
            loss.backward()
            all_reduce_gradients(model.parameters())
            opt.step()
            step += 1
            losses.append(float(loss.item()))
            if args.log_json:
                log.append({"epoch": epoch, "batch": i, "loss": losses[-1],
                            "seeds": nw.backend.current().to_numpy(out_nodes).tolist()})
            if args.max_steps and step >= args.max_steps:
                done = True
                break
            if args.checkpoint_every and step % args.checkpoint_every == 0 and i + 1 < len(loader):
                checkpoint(epoch, i + 1)
        train_time = time.perf_counter() - t0
        stats = dist.comm_stats()
        sent = dist.all_reduce(np.array([stats.get("all_to_all_bytes/sampling", 0),
                                         stats.get("all_to_all_bytes/features", 0), stats["all_reduce_bytes"]],
                                        np.int64))
        val_acc = evaluate(model, val_loader)
        if val_acc > best_acc:
            best_acc, best_state = val_acc, state_of(model)
        mean_loss = dist.all_reduce(np.array([np.mean(losses) if losses else 0.0]))[0] / size
        if rank == 0 and not args.quiet:
            print(f"epoch {epoch:3d}  loss {mean_loss:.4f}  val acc {val_acc:.4f}  "
                  f"train {train_time * 1000:.0f} ms  sent: sampling {sent[0] / 1e6:.2f} MB, "
                  f"features {sent[1] / 1e6:.2f} MB, gradients {sent[2] / 1e6:.2f} MB", flush=True)
        epoch, start = epoch + 1, 0
        if not done:
            checkpoint(epoch, 0)
    model.load_state_dict(best_state)
    test_acc = evaluate(model, test_loader)
    if args.log_json:
        with open(f"{args.log_json}.{rank}", "w") as f:
            json.dump({"steps": log, "test_acc": test_acc, "best_val_acc": best_acc}, f)
    if rank == 0:
        print(f"Test accuracy: {test_acc:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
