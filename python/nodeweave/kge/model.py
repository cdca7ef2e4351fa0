"""A trained knowledge-graph embedding: the two tables, the model's settings and the id maps, with
scoring, filtered evaluation, link prediction, similarity search and the on-disk layout.

A saved model is a directory: ``config.json`` (model, hidden_dim, gamma and the training
settings), ``entity.npy`` / ``relation.npy`` (float32 tables, one row per id, in the row layout
of ``sparse/kge/score_functions.h``) and ``entities.tsv`` / ``relations.tsv`` (``id<TAB>name``).

>>> import numpy as np
>>> from nodeweave.kge import KGEModel
>>> m = KGEModel("DistMult", 2, 0.0, np.array([[1, 0], [0, 1], [1, 1]], np.float32),
...              np.array([[1, 2]], np.float32), ["a", "b", "c"], ["r"])
>>> m.score(["a"], ["r"], ["c"]).tolist()
[1.0]
>>> m.predict_tail("b", "r", k=2)  # (name, score), best first; ties in id order
[('b', 2.0), ('c', 2.0)]
"""

from __future__ import annotations

import json
import os
from typing import Any, Sequence

import numpy as np

from nodeweave import _C
from nodeweave import errors as nwerr

__all__ = ["KGEModel", "METRICS", "ranking_metrics"]

K = _C.kge
METRICS = ("MRR", "MR", "Hits@1", "Hits@3", "Hits@10")
SIMILARITY = ("cosine", "l2", "l1", "dot")


def ranking_metrics(ranks: np.ndarray) -> dict[str, float]:
    """MRR, MR and Hits@{1,3,10} of filtered ranks (ties already counted half)."""
    ranks = np.asarray(ranks, np.float64)
    if ranks.size == 0:
        raise nwerr.ValueError("no ranks: the evaluation split holds no triples")
    return {"MRR": float(np.mean(1.0 / ranks)), "MR": float(np.mean(ranks)),
            **{f"Hits@{k}": float(np.mean(ranks <= k)) for k in (1, 3, 10)}}


class KGEModel:
    """Embeddings of one model (see :mod:`nodeweave.kge`) with their names."""

    def __init__(self, model: str, hidden_dim: int, gamma: float, entity: np.ndarray, relation: np.ndarray,
                 entities: Sequence[str], relations: Sequence[str], config: dict[str, Any] | None = None) -> None:
        ew, rw = K.widths(model, int(hidden_dim))  # validates the model name and dim
        self.model = K.model_names()[[n.lower() for n in K.model_names()].index(
            "transe_l2" if model.lower() == "transe" else model.lower())]
        self.hidden_dim, self.gamma = int(hidden_dim), float(gamma)
        self.entity = np.ascontiguousarray(entity, dtype=np.float32)
        self.relation = np.ascontiguousarray(relation, dtype=np.float32)
        if self.entity.shape != (len(entities), ew) or self.relation.shape != (len(relations), rw):
            raise nwerr.ValueError(f"tables of shape {self.entity.shape} / {self.relation.shape} do not fit "
                                   f"{len(entities)} entities x {ew} and {len(relations)} relations x {rw} "
                                   f"({self.model}, hidden_dim {hidden_dim})")
        self.entities, self.relations = list(entities), list(relations)
        self._eid = {n: i for i, n in enumerate(self.entities)}
        self._rid = {n: i for i, n in enumerate(self.relations)}
        self.config = dict(config or {})

    # ---- ids -------------------------------------------------------------------------------------
    def _ids(self, keys: Any, kind: str) -> np.ndarray:
        names, table = (self.entities, self._eid) if kind == "entity" else (self.relations, self._rid)
        if isinstance(keys, np.ndarray) and keys.dtype.kind in "iu":
            ids = keys.astype(np.int64)
        else:
            ids = np.array([self._id(k, names, table, kind) for k in np.atleast_1d(keys).tolist()], np.int64)
        bad = (ids < 0) | (ids >= len(names))
        if bad.any():
            raise nwerr.IndexError(f"{kind} id {int(ids[bad][0])} is out of range (0..{len(names) - 1})")
        return ids

    @staticmethod
    def _id(key: Any, names: list[str], table: dict[str, int], kind: str) -> int:
        if isinstance(key, (int, np.integer)):
            return int(key)
        key = str(key)
        if key in table:
            return table[key]
        if key.lstrip("-").isdigit():
            return int(key)
        raise nwerr.KeyError(f"unknown {kind} {key!r}: not a name in the {kind} map, nor an id")

    # ---- scoring ---------------------------------------------------------------------------------
    def score(self, head: Any, rel: Any, tail: Any) -> np.ndarray:
        """Scores of triples given by names or ids (higher: more plausible)."""
        h, r, t = self._ids(head, "entity"), self._ids(rel, "relation"), self._ids(tail, "entity")
        return K.score(self.model, self.hidden_dim, self.gamma, self.entity, self.relation, h, r, t)

    def _scores_against(self, fixed: tuple[int, int], side: str) -> np.ndarray:
        """Scores of every completion of one query: all tails, all heads or all relations."""
        a, b = fixed
        if side == "relation":
            n = len(self.relations)
            return K.score(self.model, self.hidden_dim, self.gamma, self.entity, self.relation,
                           np.full(n, a), np.arange(n), np.full(n, b))
        n = len(self.entities)
        cands = np.arange(n)
        h, r, t = (cands, np.full(n, a), np.full(n, b)) if side == "head" else (np.full(n, a), np.full(n, b), cands)
        return K.score(self.model, self.hidden_dim, self.gamma, self.entity, self.relation, h, r, t)

    def _top(self, scores: np.ndarray, k: int, names: list[str], exclude: set[int]) -> list[tuple[str, float]]:
        if k <= 0:
            raise nwerr.ValueError(f"k must be positive, got {k}")
        order = np.argsort(-scores, kind="stable")
        out = [(names[i], float(scores[i])) for i in order if i not in exclude]
        return out[:k]

    def predict_tail(self, head: Any, rel: Any, k: int = 10, exclude: Sequence[int] = ()) -> list[tuple[str, float]]:
        """The k best tails of ``(head, rel, ?)`` as ``(name, score)``, best first."""
        h, r = int(self._ids(head, "entity")[0]), int(self._ids(rel, "relation")[0])
        return self._top(self._scores_against((h, r), "tail"), k, self.entities, set(exclude))

    def predict_head(self, rel: Any, tail: Any, k: int = 10, exclude: Sequence[int] = ()) -> list[tuple[str, float]]:
        """The k best heads of ``(?, rel, tail)``."""
        r, t = int(self._ids(rel, "relation")[0]), int(self._ids(tail, "entity")[0])
        return self._top(self._scores_against((r, t), "head"), k, self.entities, set(exclude))

    def predict_relation(self, head: Any, tail: Any, k: int = 10) -> list[tuple[str, float]]:
        """The k best relations of ``(head, ?, tail)``."""
        h, t = int(self._ids(head, "entity")[0]), int(self._ids(tail, "entity")[0])
        return self._top(self._scores_against((h, t), "relation"), k, self.relations, set())

    # ---- evaluation ------------------------------------------------------------------------------
    def ranks(self, triples: np.ndarray, known: np.ndarray | None = None, *, neg_sample_size: int | None = None,
              seed: int = 0) -> np.ndarray:
        """Head and tail ranks (concatenated) of ``triples`` among all entities, filtered by ``known``;
        with ``neg_sample_size``, among that many uniformly drawn entities instead (for huge graphs)."""
        triples = np.asarray(triples, np.int64).reshape(-1, 3)
        h, r, t = triples[:, 0], triples[:, 1], triples[:, 2]
        if neg_sample_size is None:
            kh = kr = kt = None
            if known is not None:
                known = np.asarray(known, np.int64).reshape(-1, 3)
                kh, kr, kt = known[:, 0], known[:, 1], known[:, 2]
            head, tail = K.filtered_ranks(self.model, self.hidden_dim, self.gamma, self.entity, self.relation,
                                          h, r, t, kh, kr, kt)
            return np.concatenate([head, tail])
        if neg_sample_size <= 0:
            raise nwerr.ValueError(f"neg_sample_size must be positive, got {neg_sample_size}")
        return self._sampled_ranks(triples, known, int(neg_sample_size), seed)

    def _sampled_ranks(self, triples: np.ndarray, known: np.ndarray | None, n: int, seed: int) -> np.ndarray:
        ne, nr = len(self.entities), len(self.relations)
        cands = np.random.default_rng(seed).integers(0, ne, n)
        h, r, t = triples[:, 0], triples[:, 1], triples[:, 2]
        pos = K.score(self.model, self.hidden_dim, self.gamma, self.entity, self.relation, h, r, t)
        known_keys = None
        if known is not None:
            known = np.asarray(known, np.int64).reshape(-1, 3)
            known_keys = np.unique((known[:, 0] * nr + known[:, 1]) * ne + known[:, 2])
        out = []
        for side in ("head", "tail"):
            s = K.score_negatives(self.model, self.hidden_dim, self.gamma, self.entity, self.relation, h, r, t,
                                  cands[None, :], len(h), side)
            hh = cands[None, :] if side == "head" else h[:, None]
            tt = cands[None, :] if side == "tail" else t[:, None]
            keep = np.ones(s.shape, bool)
            if known_keys is not None:
                keys = (hh * nr + r[:, None]) * ne + tt
                keep &= ~np.isin(keys, known_keys)
            target = (h if side == "head" else t)[:, None]
            keep &= cands[None, :] != target
            ps = pos[:, None]
            out.append(1 + ((s > ps) & keep).sum(1) + 0.5 * ((s == ps) & keep).sum(1))
        return np.concatenate(out).astype(np.float64)

    def evaluate(self, triples: np.ndarray, known: np.ndarray | None = None, *, neg_sample_size: int | None = None,
                 seed: int = 0) -> dict[str, float]:
        """:func:`ranking_metrics` of :meth:`ranks`."""
        return ranking_metrics(self.ranks(triples, known, neg_sample_size=neg_sample_size, seed=seed))

    # ---- similarity ------------------------------------------------------------------------------
    def similar(self, items: Any, kind: str = "entity", metric: str = "cosine", k: int = 10) -> list[list[tuple[str, float]]]:
        """For each item, the k most similar others of its table, best first, as ``(name, similarity)``
        (``cosine`` or ``dot``: higher is closer; ``l2`` / ``l1``: the negated distance)."""
        if kind not in ("entity", "relation"):
            raise nwerr.ValueError(f"kind must be 'entity' or 'relation', got {kind!r}")
        if metric not in SIMILARITY:
            raise nwerr.ValueError(f"metric must be one of {', '.join(SIMILARITY)}, got {metric!r}")
        table = self.entity if kind == "entity" else self.relation
        names = self.entities if kind == "entity" else self.relations
        ids = self._ids(items, kind)
        x = table.astype(np.float64)
        out = []
        for i in ids:
            q = x[i]
            if metric == "dot":
                sim = x @ q
            elif metric == "cosine":
                norms = np.linalg.norm(x, axis=1) * np.linalg.norm(q)
                sim = np.divide(x @ q, norms, out=np.zeros(len(x)), where=norms > 0)
            else:
                sim = -np.linalg.norm(x - q, ord=1 if metric == "l1" else 2, axis=1)
            out.append(self._top(sim, k, names, {int(i)}))
        return out

    # ---- tensors -----------------------------------------------------------------------------------
    def embeddings(self, kind: str = "entity", backend: str | None = None) -> Any:
        """A table as a tensor of ``backend`` (``"native"``, ``"pytorch"``; default: the active one),
        sharing memory with the model's NumPy array."""
        from nodeweave import backend as nwb

        table = {"entity": self.entity, "relation": self.relation}.get(kind)
        if table is None:
            raise nwerr.ValueError(f"kind must be 'entity' or 'relation', got {kind!r}")
        name = backend or nwb.current().name
        if name == "pytorch":
            import torch

            return torch.from_numpy(table)
        if name == "native":
            from nodeweave import core

            return core.from_numpy(table)
        raise nwerr.ValueError(f"backend must be 'native' or 'pytorch', got {name!r}")

    # ---- files -------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        """Writes the directory layout of the module docs; each file atomically."""
        from nodeweave.kge.checkpoint import atomic_write

        os.makedirs(path, exist_ok=True)
        cfg = dict(self.config, model=self.model, hidden_dim=self.hidden_dim, gamma=self.gamma,
                   num_entities=len(self.entities), num_relations=len(self.relations))
        atomic_write(os.path.join(path, "config.json"), json.dumps(cfg, indent=2, sort_keys=True).encode() + b"\n")
        for name, arr in (("entity.npy", self.entity), ("relation.npy", self.relation)):
            atomic_write(os.path.join(path, name), _npy_bytes(arr))
        for name, names in (("entities.tsv", self.entities), ("relations.tsv", self.relations)):
            atomic_write(os.path.join(path, name), "".join(f"{i}\t{n}\n" for i, n in enumerate(names)).encode())

    @classmethod
    def load(cls, path: str | os.PathLike) -> "KGEModel":
        """The model saved in ``path`` by :meth:`save` (or by ``nodeweave-kge train --save-path``)."""
        from nodeweave.data.text_tables import read_text, str_table

        cfg_path = os.path.join(path, "config.json")
        if not os.path.isfile(cfg_path):
            raise nwerr.FileNotFoundError(f"{path} holds no saved model (no config.json)")
        with open(cfg_path) as f:
            cfg = json.load(f)
        names = []
        for fname in ("entities.tsv", "relations.tsv"):
            p = os.path.join(path, fname)
            rows = str_table(read_text(p), p, 2)
            names.append([n for _, n in rows])
        entity = np.load(os.path.join(path, "entity.npy"), allow_pickle=False)
        relation = np.load(os.path.join(path, "relation.npy"), allow_pickle=False)
        return cls(cfg["model"], cfg["hidden_dim"], cfg["gamma"], entity, relation, names[0], names[1], cfg)


def _npy_bytes(arr: np.ndarray) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()
