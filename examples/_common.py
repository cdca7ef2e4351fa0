"""What the example scripts share: command-line options, seeding, the full-graph training loop for
node classification, the mean ± std report and the training-curve plot.

Each example defines its model and calls :func:`run_node_classification` (or its own loop for graph
classification), then :func:`report`, which prints ``Test accuracy: 0.xxxx`` (``mean ± std`` over
several seeds) as the last line.

Backends: every example takes ``--backend native|pytorch`` (default: ``$NODEWEAVE_BACKEND``, else
native). The examples import their layers at the top (``from nodeweave.nn import GraphConv``) and
nodeweave resolves a layer to the backend active at that moment, so this module reads ``--backend``
from ``sys.argv`` as soon as it is imported — import it before ``nodeweave.nn`` — selects the
backend, and exports that backend's tensor library as one namespace the models are written against:
``T`` (``nodeweave.core`` or ``torch``), ``nn``, ``F``, ``optim`` and ``no_grad``. Both follow
PyTorch's names, so each model is written once.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from tqdm import tqdm

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.backend import BACKENDS


def _select_backend() -> str:
    """Activates the backend named by ``--backend`` on the command line, else by
    ``$NODEWEAVE_BACKEND``, else native, and returns its name.

    A ``--backend`` value that is not a backend name is ignored here: :func:`base_parser`, which
    lists the choices, rejects it with the usual usage message when the example parses its options."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--backend", default=None)
    name = pre.parse_known_args()[0].backend
    if name not in BACKENDS:
        name = os.environ.get("NODEWEAVE_BACKEND") or "native"
    return nw.set_backend(name).name  # raises ValueError for an unknown $NODEWEAVE_BACKEND


BACKEND = _select_backend()

if BACKEND == "pytorch":
    import torch as T  # noqa: N812 - "the tensor library" of the chosen backend
    from torch import nn, optim
else:
    T = nc  # noqa: N816
    from nodeweave.core import nn, optim

F = nn.functional
no_grad = T.no_grad


def base_parser(description: str, epochs: int, lr: float, weight_decay: float) -> argparse.ArgumentParser:
    """Options every example takes; defaults are the paper's where the paper states them."""
    p = argparse.ArgumentParser(description=description,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--backend", choices=["native", "pytorch"], default=BACKEND,
                   help="tensor backend (default: $NODEWEAVE_BACKEND, else native)")
    p.add_argument("--epochs", type=int, default=epochs)
    p.add_argument("--lr", type=float, default=lr)
    p.add_argument("--weight-decay", type=float, default=weight_decay)
    p.add_argument("--seed", type=int, default=0, help="first seed")
    p.add_argument("--runs", type=int, default=1, help="train this many times, seeds seed .. seed+runs-1")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    p.add_argument("--data-dir", default=None, help="dataset directory (default: $NODEWEAVE_DATA_DIR)")
    p.add_argument("--plot", default=None, metavar="PNG", help="write the training curves to this file")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def setup(args: argparse.Namespace) -> None:
    """Checks the backend and sets the thread count. nodeweave's graph kernels run on the native
    engine's OpenMP pool whichever the backend, so with PyTorch both pools get ``--threads``."""
    if args.backend != BACKEND:  # only if the option was spelt so that the early parse missed it
        sys.exit(f"error: the backend was selected as {BACKEND!r} at import but --backend says "
                 f"{args.backend!r}; spell the option out as --backend {args.backend}")
    if args.threads:
        nc.set_num_threads(args.threads)
        if BACKEND == "pytorch":
            T.set_num_threads(args.threads)


def set_seed(seed: int) -> None:
    """Seeds every generator a run draws from (weights, dropout, splits)."""
    random.seed(seed)
    np.random.seed(seed)
    nc.manual_seed(seed)
    if BACKEND == "pytorch":
        T.manual_seed(seed)


def mask_to_index(mask: T.Tensor) -> T.Tensor:
    """The positions where a boolean mask is true, as an int64 tensor."""
    return T.nonzero(mask, as_tuple=True)[0]


def accuracy(logits: T.Tensor, labels: T.Tensor) -> float:
    if labels.shape[0] == 0:
        return float("nan")
    return float((logits.argmax(1) == labels).float().mean().item())


@dataclass
class History:
    """Per-epoch curves of one run."""

    train_loss: list = field(default_factory=list)
    val_loss: list = field(default_factory=list)
    train_acc: list = field(default_factory=list)
    val_acc: list = field(default_factory=list)


@dataclass
class NodeTask:
    """A graph with node features, labels and the train/validation/test masks."""

    g: nw.HeteroGraph
    x: T.Tensor
    labels: T.Tensor
    masks: tuple
    n_classes: int


def run_node_classification(model: nn.Module, forward: Callable[[], T.Tensor], task: NodeTask,
                            args: argparse.Namespace, desc: str) -> tuple[float, History]:
    """Full-graph training with Adam and model selection on validation accuracy (ties broken by the
    lower validation loss): returns the test accuracy of the selected epoch and the curves.

    ``forward()`` runs the model on the whole graph and returns logits for every node.
    """
    train_idx, val_idx, test_idx = (mask_to_index(m) for m in task.masks)
    y_train, y_val, y_test = (task.labels.index_select(0, i) for i in (train_idx, val_idx, test_idx))
    opt = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    hist = History()
    best = (-1.0, float("inf"))
    best_state = None
    bar = tqdm(range(args.epochs), desc=desc, disable=args.quiet, leave=False)
    for _ in bar:
        model.train()
        logits = forward()
        loss = F.cross_entropy(logits.index_select(0, train_idx), y_train)
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.eval()
        with no_grad():
            logits = forward()
            val_logits = logits.index_select(0, val_idx)
            val_loss = float(F.cross_entropy(val_logits, y_val).item())
            val_acc = accuracy(val_logits, y_val)
        hist.train_loss.append(float(loss.item()))
        hist.val_loss.append(val_loss)
        hist.train_acc.append(accuracy(logits.index_select(0, train_idx), y_train))
        hist.val_acc.append(val_acc)
        if (val_acc, -val_loss) > (best[0], -best[1]):
            best = (val_acc, val_loss)
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        bar.set_postfix(loss=f"{hist.train_loss[-1]:.3f}", val_acc=f"{val_acc:.3f}")
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    with no_grad():
        test_acc = accuracy(forward().index_select(0, test_idx), y_test)
    return test_acc, hist


def run_seeds(args: argparse.Namespace, one_run: Callable[[int], tuple[float, History]]) -> None:
    """Runs ``one_run(seed)`` for each seed, then prints the per-run and final accuracy lines."""
    setup(args)
    accs, hists = [], []
    t0 = time.perf_counter()
    for seed in range(args.seed, args.seed + args.runs):
        set_seed(seed)
        acc, hist = one_run(seed)
        accs.append(acc)
        hists.append(hist)
        print(f"seed {seed}: test accuracy {acc:.4f}", flush=True)
    print(f"{len(accs)} run(s) in {time.perf_counter() - t0:.1f} s ({BACKEND} backend)", flush=True)
    if args.plot:
        plot_curves(hists, args.plot)
    report(accs)


def report(accs: list) -> None:
    """The last line every example prints."""
    a = np.asarray(accs, np.float64)
    if len(a) == 1:
        print(f"Test accuracy: {a[0]:.4f}")
    else:
        print(f"Test accuracy: {a.mean():.4f} ± {a.std():.4f}")


def plot_curves(hists: list, path: str) -> None:
    """Loss and accuracy per epoch (training and validation) of every run, in one PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    for i, h in enumerate(hists):
        alpha = 1.0 if len(hists) == 1 else 0.5
        ax_loss.plot(h.train_loss, color="tab:blue", alpha=alpha, label="train" if i == 0 else None)
        ax_loss.plot(h.val_loss, color="tab:orange", alpha=alpha, label="validation" if i == 0 else None)
        ax_acc.plot(h.train_acc, color="tab:blue", alpha=alpha, label="train" if i == 0 else None)
        ax_acc.plot(h.val_acc, color="tab:orange", alpha=alpha, label="validation" if i == 0 else None)
    ax_loss.set(xlabel="epoch", ylabel="loss", title="loss")
    ax_acc.set(xlabel="epoch", ylabel="accuracy", title="accuracy")
    for ax in (ax_loss, ax_acc):
        ax.legend()
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"training curves written to {path}", flush=True)


def load_planetoid(name: str, data_dir: str | None, self_loops: bool) -> NodeTask:
    """Cora / Citeseer from nodeweave.data with the public Planetoid split; the loader row-normalizes
    the features as the papers do. ``self_loops`` gives every node exactly one self-loop."""
    from nodeweave import data

    cls = {"cora": data.CoraGraphDataset, "citeseer": data.CiteseerGraphDataset}[name]
    ds = cls(raw_dir=data_dir)
    g = ds[0]
    if self_loops:
        g = nw.add_self_loop(nw.remove_self_loop(g))
    masks = (g.ndata["train_mask"], g.ndata["val_mask"], g.ndata["test_mask"])
    return NodeTask(g, g.ndata["feat"], g.ndata["label"], masks, ds.num_classes)


__all__ = ["BACKEND", "nw", "T", "nn", "F", "optim", "no_grad", "base_parser", "setup", "set_seed",
           "mask_to_index", "accuracy", "History", "NodeTask", "run_node_classification", "run_seeds",
           "report", "plot_curves", "load_planetoid"]
