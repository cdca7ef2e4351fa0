"""The KGE Python API and the ``nodeweave-kge`` command line: training end to end, saved outputs,
predict / emb-sim against brute force, sampled evaluation, resume after ``kill -9`` (bit-identical
with one thread), and every bad input ending with a message and exit status 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import nodeweave.kge as kge
from nodeweave import _C
from nodeweave.kge.checkpoint import load_checkpoint

pytestmark = pytest.mark.skipif(not os.environ.get("NODEWEAVE_DATA_DIR"), reason="needs NODEWEAVE_DATA_DIR")
SMALL = dict(dataset="nations", hidden_dim=16, batch_size=64, neg_sample_size=16, lr=0.1, progress=False)


def run_cli(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nodeweave.kge", *args], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, PYTHONWARNINGS="ignore"))


def test_train_api_learns_and_saves(tmp_path):
    model = kge.train(model="DistMult", max_step=200, save_path=str(tmp_path), test=True, log=lambda s: None, **SMALL)
    assert set(os.listdir(tmp_path)) >= {"config.json", "entity.npy", "relation.npy", "entities.tsv",
                                         "relations.tsv", "checkpoint.npz", "metrics.json"}
    data = kge.load_dataset("nations")
    m = model.evaluate(data.test, data.known())
    # Random ranking of 14 entities gives MRR about 0.23.
    assert m["MRR"] > 0.5 and m == json.load(open(tmp_path / "metrics.json"))["test"]
    again = kge.KGEModel.load(tmp_path)
    assert again.model == "DistMult" and again.entities == data.entities
    np.testing.assert_array_equal(again.entity, model.entity)
    assert again.evaluate(data.test, data.known()) == m


def test_predict_and_similarity_match_brute_force():
    model = kge.train(model="ComplEx", max_step=30, **SMALL)
    e, r = model.entity, model.relation
    ids = np.arange(len(model.entities))
    scores = _C.kge.score("ComplEx", 16, model.gamma, e, r, np.full(len(ids), 3), np.full(len(ids), 5), ids)
    want = [model.entities[i] for i in np.argsort(-scores, kind="stable")[:4]]
    assert [n for n, _ in model.predict_tail(model.entities[3], model.relations[5], k=4)] == want
    assert [n for n, _ in model.predict_tail(3, "5", k=4)] == want  # ids work too
    x = e.astype(np.float64)
    cos = x @ x[7] / (np.linalg.norm(x, axis=1) * np.linalg.norm(x[7]))
    cos[7] = -np.inf
    assert [n for n, _ in model.similar([7], metric="cosine", k=3)[0]] == [model.entities[i] for i in np.argsort(-cos)[:3]]
    l1 = -np.abs(x - x[7]).sum(1)
    l1[7] = -np.inf
    assert [n for n, _ in model.similar([7], metric="l1", k=3)[0]] == [model.entities[i] for i in np.argsort(-l1)[:3]]


def test_sampled_evaluation_ranks_among_the_sample():
    model = kge.train(model="DistMult", max_step=20, **SMALL)
    data = kge.load_dataset("nations")
    test = data.test[:20]
    ranks = model.ranks(test, data.known(), neg_sample_size=50, seed=3)
    cands = np.random.default_rng(3).integers(0, data.num_entities, 50)
    known = {tuple(t) for t in data.known()}
    want = []
    for side in ("head", "tail"):
        for h, r, t in test:
            s = model.score([h], [r], [t])[0]
            alt = [(c, r, t) if side == "head" else (h, r, c) for c in cands]
            keep = [a for a, c in zip(alt, cands) if a not in known and c != (h if side == "head" else t)]
            sc = model.score(*(np.array(x) for x in zip(*keep))) if keep else np.zeros(0)
            want.append(1 + np.sum(sc > s) + 0.5 * np.sum(sc == s))
    np.testing.assert_array_equal(ranks, want)


@pytest.mark.parametrize("backend", ["native", "pytorch"])
def test_embeddings_as_tensors_share_memory(backend):
    model = kge.train(model="DistMult", max_step=5, **SMALL)
    t = model.embeddings("entity", backend=backend)
    arr = t.numpy()
    assert arr.shape == model.entity.shape
    model.entity[0, 0] = 42.0
    assert float(t.numpy()[0, 0]) == 42.0


def test_user_files_raw_and_id_formats(tmp_path):
    (tmp_path / "train.tsv").write_text("a\tr\tb\nb\tr\tc\nc\ts\ta\n")
    (tmp_path / "valid.tsv").write_text("a\ts\td\n")
    kg = kge.load_files(tmp_path, ["train.tsv", "valid.tsv"])
    assert kg.entities == ["a", "b", "c", "d"] and kg.relations == ["r", "s"]
    assert kg.valid.tolist() == [[0, 1, 3]] and kg.test.shape == (0, 3)
    (tmp_path / "ids.txt").write_text("0,1,4\n2,0,3\n")
    kg = kge.load_files(tmp_path, ["ids.txt"], fmt="id_hrt", delimiter=",")
    assert kg.num_entities == 5 and kg.num_relations == 2 and kg.train.tolist() == [[0, 1, 4], [2, 0, 3]]


def test_cli_train_eval_predict_emb_sim(tmp_path):
    out = tmp_path / "run"
    r = run_cli("train", "--model", "DistMult", "--dataset", "nations", "--hidden-dim", "16", "--batch-size", "64",
                "--neg-sample-size", "16", "--lr", "0.1", "--max-step", "60", "--save-path", str(out), "--test",
                "--no-progress", "--plot")
    assert r.returncode == 0, r.stderr
    assert '"model": "DistMult"' in r.stderr and "test MRR" in r.stderr  # the echoed configuration
    assert (out / "training_curve.png").stat().st_size > 0
    r = run_cli("eval", "--model-path", str(out))
    assert r.returncode == 0 and "MRR" in r.stdout, r.stderr
    r = run_cli("predict", "--model-path", str(out), "--query", "usa", "intergovorgs", "?", "--topk", "3")
    assert r.returncode == 0 and len(r.stdout.strip().splitlines()) == 4, r.stderr
    r = run_cli("emb-sim", "--model-path", str(out), "--items", "usa", "uk", "--topk", "2")
    assert r.returncode == 0 and r.stdout.count("#") == 2, r.stderr
    # DGL-KE's spellings.
    r = run_cli("train", "--model_name", "TransE_l1", "--dataset", "nations", "--hidden_dim", "8", "--batch_size",
                "32", "--neg_sample_size", "8", "--max_step", "5", "--no-progress")
    assert r.returncode == 0, r.stderr


def _checkpoint_step(path) -> int:
    try:
        return load_checkpoint(path)[2]
    except Exception:  # not written yet
        return -1


def test_resume_after_kill_minus_9_is_bit_identical(tmp_path):
    common = ["train", "--model", "RotatE", "--dataset", "nations", "--hidden-dim", "64", "--batch-size", "128",
              "--neg-sample-size", "64", "--lr", "0.05", "--max-step", "400", "--checkpoint-interval", "20",
              "--num-threads", "1", "--no-progress", "--seed", "5"]
    whole = tmp_path / "whole"
    assert run_cli(*common, "--save-path", str(whole)).returncode == 0
    cut = tmp_path / "cut"
    proc = subprocess.Popen([sys.executable, "-m", "nodeweave.kge", *common, "--save-path", str(cut)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while _checkpoint_step(cut) < 60 and proc.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    step = _checkpoint_step(cut)
    assert 60 <= step < 400, f"the run was not cut in the middle (checkpoint at step {step})"
    r = run_cli(*common, "--save-path", str(cut), "--resume")
    assert r.returncode == 0 and f"resuming from step {step}" in r.stderr, r.stderr
    for name in ("entity.npy", "relation.npy"):
        assert np.array_equal(np.load(whole / name), np.load(cut / name)), name


@pytest.mark.parametrize("case", ["malformed", "empty", "missing", "model", "resume-none", "resume-other",
                                  "predict-name", "predict-id", "id-format", "two-blanks"])
def test_bad_input_exits_2_with_a_message(tmp_path, case):
    d = tmp_path / "data"
    d.mkdir()
    (d / "train.tsv").write_text("a\tr\tb\nb\tr\n")
    (d / "empty.tsv").write_text("")
    (d / "ids.tsv").write_text("0\t1\t2\n3\tx\t4\n")
    (d / "good.tsv").write_text("a\tr\tb\nb\tr\tc\n")
    base = ["train", "--max-step", "3", "--hidden-dim", "4", "--batch-size", "2", "--neg-sample-size", "2",
            "--no-progress"]
    save = tmp_path / "save"
    if case in ("predict-name", "predict-id", "two-blanks", "resume-other"):
        assert run_cli(*base, "--model", "DistMult", "--data-path", str(d), "--data-files", "good.tsv",
                       "--save-path", str(save)).returncode == 0
    args, expect = {
        "malformed": (base + ["--data-path", str(d), "--data-files", "train.tsv"], "train.tsv:2"),
        "empty": (base + ["--data-path", str(d), "--data-files", "empty.tsv"], "holds no triples"),
        "missing": (base + ["--data-path", str(d), "--data-files", "nope.tsv"], "does not exist"),
        "model": (base + ["--model", "TransQ", "--data-path", str(d), "--data-files", "good.tsv"], "unknown model 'TransQ'"),
        "resume-none": (base + ["--data-path", str(d), "--data-files", "good.tsv", "--save-path", str(tmp_path / "x"),
                                "--resume"], "holds no checkpoint"),
        "resume-other": (base + ["--model", "ComplEx", "--data-path", str(d), "--data-files", "good.tsv",
                                 "--save-path", str(save), "--resume"], "model 'DistMult' there, 'ComplEx' now"),
        "predict-name": (["predict", "--model-path", str(save), "--query", "zed", "r", "?"], "unknown entity 'zed'"),
        "predict-id": (["predict", "--model-path", str(save), "--query", "99", "r", "?"], "out of range"),
        "id-format": (base + ["--data-path", str(d), "--data-files", "ids.tsv", "--format", "id_hrt"], "ids.tsv:2"),
        "two-blanks": (["predict", "--model-path", str(save), "--query", "?", "r", "?"], "at most one '?'"),
    }[case]
    before = set(os.listdir(save)) if save.exists() else set()
    r = run_cli(*args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert expect in r.stderr and r.stderr.strip().splitlines()[-1].startswith("nodeweave-kge: error:"), r.stderr
    assert "Traceback" not in r.stderr
    assert (set(os.listdir(save)) if save.exists() else set()) == before  # nothing written
