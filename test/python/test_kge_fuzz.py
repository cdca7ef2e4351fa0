"""Fuzzing the KGE entry points (scripts/test.sh also runs this file against the AddressSanitizer +
UBSan build of ``_C``): random and malformed tables, ids, negatives and settings for the kernels and
the trainer, and random bytes as triple files. Every call returns well-formed output or raises one of
the library's errors; nothing crashes or reads out of bounds. No torch here."""

from __future__ import annotations

import numpy as np
import pytest

from nodeweave import _C
from nodeweave.data.errors import DataFormatError
from nodeweave.kge.triples import load_files

K = _C.kge
EXPECTED = (TypeError, ValueError, IndexError, KeyError, OverflowError)
MODELS = list(K.model_names())


def ids(rng, n):
    choice = int(rng.integers(0, 9))
    return [
        lambda: rng.integers(0, max(n, 1), 6),
        lambda: rng.integers(-3, n + 3, 6),
        lambda: rng.random(6),
        lambda: np.array([], dtype=np.int64),
        lambda: np.array([[0, 1], [1, 0]]),
        lambda: np.array([2**62, -2**62, 0, 0, 0, 0]),
        lambda: np.zeros(6, dtype=np.uint64),
        lambda: np.zeros(5, dtype=np.int32),
        lambda: "ids",
    ][choice]()


def table(rng, rows, width):
    choice = int(rng.integers(0, 7))
    return [
        lambda: rng.normal(size=(rows, width)).astype(np.float32),
        lambda: rng.normal(size=(rows, width)),
        lambda: np.full((rows, width), np.nan, np.float32),
        lambda: rng.normal(size=(rows, width + 1)).astype(np.float32),
        lambda: rng.normal(size=(rows * width,)).astype(np.float32),
        lambda: np.asfortranarray(rng.normal(size=(rows, width)).astype(np.float32)),
        lambda: np.zeros((0, width), np.float32),
    ][choice]()


@pytest.mark.parametrize("seed", range(60))
def test_kernels_survive_random_arguments(seed):
    rng = np.random.default_rng(seed)
    model = MODELS[seed % len(MODELS)]
    dim = int(rng.integers(1, 5))
    ew, rw = K.widths(model, dim)
    ne, nr = int(rng.integers(1, 8)), int(rng.integers(1, 4))
    e, r = table(rng, ne, ew), table(rng, nr, rw)
    h, rel, t = ids(rng, ne), ids(rng, nr), ids(rng, ne)
    calls = [
        lambda: K.score(model, dim, 1.0, e, r, h, rel, t),
        lambda: K.score_negatives(model, dim, 1.0, e, r, h, rel, t, np.atleast_2d(ids(rng, ne)),
                                  int(rng.integers(-1, 4)), ["head", "tail", "x"][int(rng.integers(0, 3))]),
        lambda: K.backward(model, dim, 1.0, e, r, h, rel, t, rng.normal(size=6)),
        lambda: K.filtered_ranks(model, dim, 1.0, e, r, h, rel, t, ids(rng, ne), ids(rng, nr), ids(rng, ne)),
    ]
    for call in calls:
        try:
            out = call()
        except EXPECTED:
            continue
        for a in out if isinstance(out, tuple) else (out,):
            assert isinstance(a, np.ndarray)


@pytest.mark.parametrize("seed", range(40))
def test_trainer_survives_random_settings(seed):
    rng = np.random.default_rng(100 + seed)
    model = MODELS[seed % len(MODELS)]
    dim = int(rng.integers(1, 4))
    ew, rw = K.widths(model, dim)
    ne, nr = int(rng.integers(1, 9)), int(rng.integers(1, 4))
    n = int(rng.integers(0, 12))
    tri = [rng.integers(0, ne, n), rng.integers(0, nr, n), rng.integers(0, ne, n)]
    if rng.random() < 0.3:
        tri[int(rng.integers(0, 3))] = ids(rng, ne)
    settings = dict(batch=int(rng.integers(-1, 9)), k=int(rng.integers(-1, 6)), chunk=int(rng.integers(-1, 5)),
                    reg_norm=int(rng.integers(0, 4)), threads=int(rng.integers(0, 3)))
    try:
        tr = K.Trainer(model, dim, 2.0, ["logsigmoid", "hinge", "nope"][int(rng.integers(0, 3))], 1.0,
                       float(rng.choice([0.0, 1.0, -1.0])), ["adagrad", "adam"][int(rng.integers(0, 2))],
                       float(rng.choice([0.1, 0.0])), settings["batch"], settings["k"], settings["chunk"],
                       bool(rng.integers(0, 2)), float(rng.choice([0.0, 1e-3])), settings["reg_norm"], seed,
                       settings["threads"], *tri, ne, nr, table(rng, ne, ew), table(rng, nr, rw))
    except EXPECTED:
        return
    losses = tr.run(int(rng.integers(0, 4)))
    assert losses.dtype == np.float64
    h, r, t, negs, side = tr.batch(int(rng.integers(0, 10)))
    assert len(h) == len(r) == len(t) and side in ("head", "tail")
    assert negs.size == 0 or (negs.min() >= 0 and negs.max() < ne)


@pytest.mark.parametrize("seed", range(30))
def test_triple_files_of_random_bytes(tmp_path, seed):
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(int(rng.integers(0, 6))):
        fields = [bytes(rng.integers(32, 127, int(rng.integers(0, 4)), dtype=np.uint8)) for _ in range(int(rng.integers(1, 5)))]
        lines.append(b"\t".join(fields))
    raw = b"\n".join(lines) + (b"\xff\xfe" if seed % 5 == 0 else b"")
    (tmp_path / "t.tsv").write_bytes(raw)
    for fmt in ("raw_hrt", "id_hrt"):
        try:
            kg = load_files(tmp_path, ["t.tsv"], fmt=fmt)
        except (DataFormatError, *EXPECTED) as e:
            assert str(e)
            continue
        assert kg.train.shape[1] == 3 and kg.train.min() >= 0
