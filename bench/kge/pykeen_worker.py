"""PyKEEN side of bench/kge/run.py; runs in bench/.venv-pykeen (PyKEEN from PyPI, its own torch).

Trains one model with PyKEEN's sLCWA loop (uniform negatives, ``num_negs_per_pos`` = the
benchmark's negatives, self-adversarial NSSA loss with the same margin and temperature, Adagrad with
the same learning rate, batch and dimension), then ranks validation and test triples with its
filtered rank-based evaluator. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from workload import read_kg  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", default="FB15k-237")
    p.add_argument("--model", required=True)
    p.add_argument("--dim", type=int, default=200)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--neg", type=int, default=64)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--gamma", type=float, default=12.0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--valid", type=int, default=2000, help="validation triples ranked for the MRR")
    p.add_argument("--test", type=int, default=1000, help="test triples ranked for the speed")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    from pykeen import models
    from pykeen.evaluation import RankBasedEvaluator
    from pykeen.losses import NSSALoss
    from pykeen.training import SLCWATrainingLoop
    from pykeen.triples import TriplesFactory

    kg = read_kg(a.dataset)
    train = TriplesFactory.from_labeled_triples(kg["train"].astype(str))
    valid = TriplesFactory.from_labeled_triples(kg["valid"].astype(str), entity_to_id=train.entity_to_id,
                                                relation_to_id=train.relation_to_id)
    test = TriplesFactory.from_labeled_triples(kg["test"].astype(str), entity_to_id=train.entity_to_id,
                                               relation_to_id=train.relation_to_id)
    distance = a.model in ("TransE", "RotatE")
    loss = NSSALoss(margin=a.gamma if distance else 0.0, adversarial_temperature=1.0)
    cls = {"TransE": models.TransE, "DistMult": models.DistMult, "ComplEx": models.ComplEx, "RotatE": models.RotatE}[a.model]
    # PyKEEN's TransE keeps entities on the unit sphere by default; nodeweave's (as DGL-KE's and the
    # paper's score) does not: without the constraint both train the same model
    kwargs = dict(scoring_fct_norm=2, entity_constrainer=None) if a.model == "TransE" else {}
    model = cls(triples_factory=train, embedding_dim=a.dim, loss=loss, random_seed=a.seed, **kwargs)
    optimizer = torch.optim.Adagrad(model.parameters(), lr=a.lr)
    loop = SLCWATrainingLoop(model=model, triples_factory=train, optimizer=optimizer, negative_sampler="basic",
                             negative_sampler_kwargs=dict(num_negs_per_pos=a.neg))
    t0 = time.perf_counter()
    loop.train(triples_factory=train, num_epochs=a.epochs, batch_size=a.batch, use_tqdm=False)
    train_s = time.perf_counter() - t0
    evaluator = RankBasedEvaluator(filtered=True)
    known = [train.mapped_triples, valid.mapped_triples, test.mapped_triples]
    res = evaluator.evaluate(model, valid.mapped_triples[: a.valid], additional_filter_triples=known,
                             use_tqdm=False)
    mrr = float(res.get_metric("both.realistic.inverse_harmonic_mean_rank"))
    t0 = time.perf_counter()
    evaluator.evaluate(model, test.mapped_triples[: a.test], additional_filter_triples=known, use_tqdm=False)
    eval_s = time.perf_counter() - t0
    n = train.num_triples * a.epochs
    print(json.dumps({"system": "pykeen", "model": a.model, "threads": a.threads, "train_s": train_s,
                      "train_triples_per_s": n / train_s, "valid_mrr": mrr,
                      "eval_triples_per_s": min(a.test, test.num_triples) / eval_s}))


if __name__ == "__main__":
    main()
