"""Fuzzing load_graphs: byte flips, truncations and random junk must raise ValueError (naming the
file), never crash, hang or return a wrong graph silently."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.core as nc
from transform_helpers import assert_graphs_equal, rand_graph, rand_hetero


def load_or_valueerror(path):
    try:
        return nw.load_graphs(path)
    except ValueError as e:
        assert str(path) in str(e)
        return None


@pytest.fixture
def good(tmp_path, rng):
    g = rand_graph(rng, 6, 9, "int32")
    h = rand_hetero(rng)
    b = nw.batch([rand_graph(rng, 3, 2), rand_graph(rng, 2, 2)])
    gs = [g, h, b]
    labels = {"y": nc.tensor([0, 1, 2])}
    path = tmp_path / "good.nwg"
    nw.save_graphs(str(path), gs, labels)
    return path.read_bytes(), gs


def test_byte_flips(tmp_path, good, rng):
    raw, gs = good
    path = tmp_path / "flip.nwg"
    positions = np.unique(np.concatenate([np.arange(0, min(len(raw), 64)),
                                          rng.integers(0, len(raw), 300)]))
    for pos in positions:
        data = bytearray(raw)
        data[pos] ^= 1 << int(rng.integers(0, 8))
        path.write_bytes(bytes(data))
        assert load_or_valueerror(path) is None, f"a flip at byte {pos} went unnoticed"


def test_truncations(tmp_path, good):
    raw, _ = good
    path = tmp_path / "trunc.nwg"
    for n in list(range(0, 64)) + list(range(64, len(raw), 11)):
        path.write_bytes(raw[:n])
        assert load_or_valueerror(path) is None, f"truncation to {n} bytes went unnoticed"
    path.write_bytes(raw + b"\0" * 64)
    assert load_or_valueerror(path) is None


def test_random_junk(tmp_path, good, rng):
    raw, _ = good
    path = tmp_path / "junk.nwg"
    for i in range(200):
        n = int(rng.integers(0, 600))
        junk = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        if i % 2:  # keep a valid preamble start so later checks get exercised
            junk = raw[:int(rng.integers(8, 32))] + junk
        path.write_bytes(junk)
        assert load_or_valueerror(path) is None


def test_good_file_still_loads(tmp_path, good):
    raw, gs = good
    path = tmp_path / "ok.nwg"
    path.write_bytes(raw)
    got, labels = nw.load_graphs(str(path))
    for a, b in zip(got, gs):
        assert_graphs_equal(a, b)
