"""nodeweave side of bench/kge/run.py; runs in the project's .venv. The same workload as
pykeen_worker.py (see its docstring): nodeweave's C++ trainer for the same number of epochs
(``max_step`` = epochs x ceil(triples / batch)), chunked negatives (``neg_chunk_size`` = the
negatives), then filtered ranking. Prints one JSON line."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from workload import read_kg  # noqa: E402

MODELS = {"TransE": "TransE_l2", "DistMult": "DistMult", "ComplEx": "ComplEx", "RotatE": "RotatE"}


def main() -> None:
    p = argparse.ArgumentParser()
    for name, default in (("dataset", "FB15k-237"), ("model", None)):
        p.add_argument(f"--{name}", default=default, required=default is None)
    for name, default in (("dim", 200), ("batch", 1024), ("neg", 64), ("epochs", 1), ("threads", 1),
                          ("valid", 2000), ("test", 1000), ("seed", 0)):
        p.add_argument(f"--{name}", type=int, default=default)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--gamma", type=float, default=12.0)
    a = p.parse_args()
    import nodeweave.core as nc
    import nodeweave.kge as kge
    from nodeweave.kge.triples import KGData

    nc.set_num_threads(a.threads)  # the ranker's threads; the trainer's are num_threads below

    kg = read_kg(a.dataset)
    ent = {n: i for i, n in enumerate(dict.fromkeys(np.concatenate([kg[s][:, c] for s in kg for c in (0, 2)])))}
    rel = {n: i for i, n in enumerate(dict.fromkeys(np.concatenate([kg[s][:, 1] for s in kg])))}
    ids = {s: np.array([[ent[h], rel[r], ent[t]] for h, r, t in kg[s]], np.int64) for s in kg}
    data = KGData(ids["train"], ids["valid"], ids["test"], list(ent), list(rel), a.dataset)
    steps = a.epochs * math.ceil(len(data.train) / a.batch)
    t0 = time.perf_counter()
    model = kge.train(data=data, dataset=a.dataset, model=MODELS[a.model], hidden_dim=a.dim, batch_size=a.batch,
                      neg_sample_size=a.neg, lr=a.lr, gamma=a.gamma, max_step=steps, num_threads=a.threads,
                      seed=a.seed, progress=False, log=lambda s: None)
    train_s = time.perf_counter() - t0
    known = data.known()
    mrr = model.evaluate(data.valid[: a.valid], known)["MRR"]
    t0 = time.perf_counter()
    model.ranks(data.test[: a.test], known)
    eval_s = time.perf_counter() - t0
    print(json.dumps({"system": "nodeweave", "model": a.model, "threads": a.threads, "train_s": train_s,
                      "train_triples_per_s": steps * a.batch / train_s, "valid_mrr": mrr,
                      "eval_triples_per_s": min(a.test, len(data.test)) / eval_s}))


if __name__ == "__main__":
    main()
