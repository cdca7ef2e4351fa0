"""Training a knowledge-graph embedding: :func:`train` (what ``nodeweave-kge train`` runs).

The steps run in C++ (``sparse/kge/trainer.h``); this module initialises the tables, cuts the run
into segments between progress updates, validation and checkpoints, writes the outputs and resumes.
Every ``checkpoint_interval`` steps (and at the end) the whole state goes to
``save_path/checkpoint.npz`` atomically, so ``resume=True`` after a crash or ``kill -9`` continues
from the last checkpoint; with ``num_threads=1`` the resumed run ends bit-identical to one that was
never interrupted.

>>> from nodeweave.kge import train
>>> model = train(dataset="nations", model="DistMult", hidden_dim=16, max_step=50, batch_size=64,
...               neg_sample_size=16, lr=0.1, progress=False)
>>> model.entity.shape, model.relation.shape
((14, 16), (55, 16))
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from nodeweave import _C
from nodeweave import errors as nwerr
from nodeweave.kge.checkpoint import load_checkpoint, save_checkpoint, atomic_write
from nodeweave.kge.model import KGEModel
from nodeweave.kge.triples import KGData, load_dataset, load_files

__all__ = ["TrainOptions", "train", "load_data"]

K = _C.kge


@dataclass
class TrainOptions:
    """Training settings; the defaults are DGL-KE's where it has one."""

    model: str = "TransE_l2"
    dataset: str | None = None
    data_path: str | None = None
    data_files: tuple[str, ...] = ()
    format: str = "raw_hrt"
    delimiter: str = "\t"
    batch_size: int = 1024
    neg_sample_size: int = 256
    neg_chunk_size: int = 0  # 0: neg_sample_size
    neg_deg_sample: bool = False
    hidden_dim: int = 400
    gamma: float = 12.0
    lr: float = 0.01
    optimizer: str = "adagrad"
    adversarial_temperature: float = 1.0
    no_adversarial: bool = False
    regularization_coef: float = 0.0
    regularization_norm: int = 3
    loss: str = "logsigmoid"
    margin: float = 1.0
    max_step: int = 80000
    num_threads: int = 1
    save_path: str | None = None
    valid: bool = False
    test: bool = False
    eval_interval: int = 10000
    neg_sample_size_eval: int | None = None
    checkpoint_interval: int = 1000
    seed: int = 0
    resume: bool = False

    def check(self) -> None:
        positive = ("batch_size", "hidden_dim", "max_step", "eval_interval", "checkpoint_interval")
        for name in positive:
            if getattr(self, name) <= 0:
                raise nwerr.ValueError(f"{name} must be positive, got {getattr(self, name)}")
        for name in ("neg_sample_size", "neg_chunk_size", "regularization_coef", "adversarial_temperature",
                     "num_threads"):
            if getattr(self, name) < 0:
                raise nwerr.ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.lr <= 0:
            raise nwerr.ValueError(f"lr must be positive, got {self.lr}")
        if (self.dataset is None) == (self.data_path is None):
            raise nwerr.ValueError("give either dataset or data_path (with data_files)")
        if self.data_path is not None and not self.data_files:
            raise nwerr.ValueError("data_path needs data_files (train [valid [test]])")
        if self.resume and not self.save_path:
            raise nwerr.ValueError("resume needs save_path (the directory holding the checkpoint)")
        if self.neg_sample_size_eval is not None and self.neg_sample_size_eval <= 0:
            raise nwerr.ValueError(f"neg_sample_size_eval must be positive, got {self.neg_sample_size_eval}")
        K.widths(self.model, self.hidden_dim)  # the model's name

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["data_files"] = list(self.data_files)
        return d


# Settings that must match for a checkpoint to be resumed (the others may change between runs).
_RESUME_KEYS = ("model", "hidden_dim", "gamma", "optimizer", "dataset", "data_path", "data_files", "format",
                "batch_size", "neg_sample_size", "neg_chunk_size", "neg_deg_sample", "seed")


def load_data(opts: TrainOptions) -> KGData:
    if opts.dataset is not None:
        return load_dataset(opts.dataset)
    return load_files(opts.data_path, list(opts.data_files), opts.format, opts.delimiter)


def _initial_tables(opts: TrainOptions, data: KGData) -> tuple[np.ndarray, np.ndarray]:
    """Uniform in +-(gamma + 2) / hidden_dim, as DGL-KE initialises; RotatE's relation phases
    uniform in [-pi, pi)."""
    ew, rw = K.widths(opts.model, opts.hidden_dim)
    bound = (opts.gamma + 2.0) / opts.hidden_dim
    rng = np.random.default_rng(opts.seed)
    entity = rng.uniform(-bound, bound, (data.num_entities, ew)).astype(np.float32)
    if opts.model.lower() == "rotate":
        relation = rng.uniform(-math.pi, math.pi, (data.num_relations, rw)).astype(np.float32)
    else:
        relation = rng.uniform(-bound, bound, (data.num_relations, rw)).astype(np.float32)
    return entity, relation


def train(options: TrainOptions | None = None, *, data: KGData | None = None, progress: bool = True,
          log: Callable[[str], None] | None = None, **kwargs: Any) -> KGEModel:
    """Trains a model; settings as :class:`TrainOptions` fields (or an instance). Returns the
    :class:`~nodeweave.kge.KGEModel`. With ``save_path``, writes the model, checkpoints and (with
    ``test``) ``metrics.json`` there."""
    opts = dataclasses.replace(options, **kwargs) if options is not None else TrainOptions(**kwargs)
    if isinstance(opts.data_files, list):
        opts.data_files = tuple(opts.data_files)
    opts.check()
    say = log or (lambda s: print(s, file=sys.stderr))
    data = data if data is not None else load_data(opts)
    if len(data.train) == 0:
        raise nwerr.ValueError("the training split holds no triples")
    config = opts.as_dict()
    config.update(num_entities=data.num_entities, num_relations=data.num_relations)
    state: dict[str, Any] = {}
    step, losses = 0, np.zeros(0)
    if opts.resume:
        old, arrays, step, losses = load_checkpoint(opts.save_path)
        diff = [k for k in _RESUME_KEYS + ("num_entities", "num_relations") if old.get(k) != config.get(k)]
        if diff:
            raise nwerr.ValueError("--resume: the checkpoint in {} was made with other settings: {}".format(
                opts.save_path, "; ".join(f"{k} {old.get(k)!r} there, {config.get(k)!r} now" for k in diff)))
        state = {k: arrays[k] for k in ("entity", "relation", "entity_opt", "relation_opt")}
        say(f"resuming from step {step} ({opts.save_path})")
    else:
        state["entity"], state["relation"] = _initial_tables(opts, data)
    adv = 0.0 if opts.no_adversarial else opts.adversarial_temperature
    trainer = K.Trainer(opts.model, opts.hidden_dim, opts.gamma, opts.loss, opts.margin, adv, opts.optimizer,
                        opts.lr, opts.batch_size, opts.neg_sample_size, opts.neg_chunk_size, opts.neg_deg_sample,
                        opts.regularization_coef, opts.regularization_norm, opts.seed, opts.num_threads,
                        data.train[:, 0], data.train[:, 1], data.train[:, 2], data.num_entities,
                        data.num_relations, step=step, **state)
    model = KGEModel(opts.model, opts.hidden_dim, opts.gamma, trainer.entity, trainer.relation, data.entities,
                     data.relations, config)
    known = data.known()
    history = {"step": [], "valid_mrr": []}

    def checkpoint() -> None:
        if opts.save_path:
            arrays = {k: np.asarray(getattr(trainer, k)) for k in ("entity", "relation", "entity_opt", "relation_opt")}
            save_checkpoint(opts.save_path, config, arrays, trainer.step, losses)

    bar = _progress(opts.max_step, step, progress)
    try:
        while trainer.step < opts.max_step:
            s = trainer.step
            nxt = min(opts.max_step, (s // opts.checkpoint_interval + 1) * opts.checkpoint_interval,
                      (s // opts.eval_interval + 1) * opts.eval_interval, s + _segment(opts))
            t0 = time.perf_counter()
            seg = trainer.run(nxt - s)
            losses = np.concatenate([losses, seg])
            if bar is not None:
                rate = len(seg) * opts.batch_size / max(time.perf_counter() - t0, 1e-9)
                bar.set_postfix(loss=f"{seg.mean():.4f}", triples_per_s=f"{rate:,.0f}")
                bar.update(len(seg))
            if trainer.step % opts.checkpoint_interval == 0:
                checkpoint()
            if opts.valid and len(data.valid) and trainer.step % opts.eval_interval == 0:
                model.entity, model.relation = trainer.entity, trainer.relation
                m = model.evaluate(data.valid, known, neg_sample_size=opts.neg_sample_size_eval, seed=opts.seed)
                history["step"].append(trainer.step)
                history["valid_mrr"].append(m["MRR"])
                say(f"step {trainer.step}: valid " + _metrics_line(m))
    finally:
        if bar is not None:
            bar.close()
    checkpoint()
    model.entity, model.relation = np.array(trainer.entity), np.array(trainer.relation)
    model.losses, model.history = losses, history
    if opts.save_path:
        model.save(opts.save_path)
    if opts.test and len(data.test):
        m = model.evaluate(data.test, known, neg_sample_size=opts.neg_sample_size_eval, seed=opts.seed)
        model.test_metrics = m
        say("test " + _metrics_line(m))
        if opts.save_path:
            atomic_write(os.path.join(opts.save_path, "metrics.json"),
                         json.dumps({"test": m, "step": trainer.step}, indent=2).encode() + b"\n")
    return model


def _segment(opts: TrainOptions) -> int:
    """Steps between progress updates (and Ctrl-C checks): about a second of work."""
    return max(1, min(200, 2_000_000 // max(opts.batch_size * max(opts.neg_sample_size, 1), 1)))


def _progress(total: int, initial: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="step", dynamic_ncols=True)


def _metrics_line(m: dict[str, float]) -> str:
    return " ".join(f"{k} {v:.4f}" if k != "MR" else f"MR {v:.1f}" for k, v in m.items())
