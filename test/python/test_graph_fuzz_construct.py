"""Fuzzing the builders: random arrays of random dtypes/lengths/values for nw.graph, random bytes and
mutated files for read_edge_list. Every input must either build a correct graph or raise
TypeError/ValueError (never crash, hang or return a wrong graph)."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.core as nc

DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64, np.float32,
          np.float64, np.bool_]


def _random_ids(rng, n):
    dt = DTYPES[rng.integers(len(DTYPES))] if rng.random() < 0.5 else np.int64
    if np.dtype(dt).kind == "f":
        arr = rng.normal(3, 5, n).astype(dt)
    elif dt is np.bool_:
        arr = rng.integers(0, 2, n).astype(bool)
    else:
        info = np.iinfo(dt)
        lo = max(int(info.min), -3)
        hi = min(int(info.max), 40)
        arr = rng.integers(lo, hi + 1, n).astype(dt)
        if rng.random() < 0.05 and n:
            arr[rng.integers(n)] = info.max
    form = rng.integers(4)
    if form == 0:
        return arr, arr
    if form == 1:
        return arr.tolist(), arr
    if form == 2 and dt in (np.int32, np.int64, np.float32, np.float64, np.uint8, np.int8):
        return nc.tensor(arr), arr
    return arr.reshape(1, -1) if rng.random() < 0.1 else arr, arr


def test_fuzz_graph_construction():
    rng = np.random.default_rng(1234)
    built = 0
    for _ in range(600):
        n = int(rng.integers(0, 12))
        src, src_np = _random_ids(rng, n)
        dst, dst_np = _random_ids(rng, n if rng.random() < 0.8 else int(rng.integers(0, 12)))
        kwargs = {}
        if rng.random() < 0.3:
            kwargs["num_nodes"] = int(rng.integers(-2, 50))
        if rng.random() < 0.3:
            kwargs["idtype"] = ["int32", "int64", "int8"][rng.integers(3)]
        try:
            g = nw.graph((src, dst), **kwargs)
        except (TypeError, ValueError):
            continue
        built += 1
        s = np.asarray(src_np).astype(np.int64).reshape(-1)
        d = np.asarray(dst_np).astype(np.int64).reshape(-1)
        for given, arr in ((src, src_np), (dst, dst_np)):  # only integers, or an empty list
            assert np.asarray(arr).dtype.kind in "iu" or (isinstance(given, list) and not given)
        assert len(s) == len(d) and (len(s) == 0 or min(s.min(), d.min()) >= 0)
        u, v = g.edges()
        np.testing.assert_array_equal(u.numpy(), s)
        np.testing.assert_array_equal(v.numpy(), d)
        need = int(max(s.max(initial=-1), d.max(initial=-1))) + 1
        assert g.num_nodes() == kwargs.get("num_nodes", need) >= need
        if g.num_nodes() < 10 ** 6:  # a huge id (e.g. uint32 max) legitimately makes a huge graph
            np.testing.assert_array_equal(g.in_degrees().numpy(), np.bincount(d, minlength=g.num_nodes()))
    assert built > 50  # the fuzzer reaches the success path too


def _valid_file(rng, sep):
    lines = ["# header comment"]
    for _ in range(int(rng.integers(1, 15))):
        lines.append(f"{rng.integers(0, 30)}{sep}{rng.integers(0, 30)}")
    return ("\n".join(lines) + "\n").encode()


MUTATIONS = ["flip", "insert", "delete", "dup", "junk"]


def _mutate(data: bytes, rng) -> bytes:
    b = bytearray(data)
    for _ in range(int(rng.integers(1, 4))):
        kind = MUTATIONS[rng.integers(len(MUTATIONS))]
        pos = int(rng.integers(0, len(b) + 1))
        if kind == "flip" and b:
            b[min(pos, len(b) - 1)] = int(rng.integers(0, 256))
        elif kind == "insert":
            b[pos:pos] = bytes([int(x) for x in rng.integers(0, 256, int(rng.integers(1, 4)))])
        elif kind == "delete" and b:
            del b[pos:pos + int(rng.integers(1, 4))]
        elif kind == "dup":
            b[pos:pos] = b[max(0, pos - 5):pos]
        else:
            b[pos:pos] = [b"-", b"1.5", b",", b"\t", b"\r", b"\x00", b"99999999999999999999999", b"\xc3"][rng.integers(8)]
    return bytes(b)


@pytest.mark.parametrize("suffix", [".txt", ".csv"])
def test_fuzz_read_edge_list(tmp_path, suffix):
    rng = np.random.default_rng(99)
    ok = 0
    for i in range(300):
        if i % 4 == 0:
            data = bytes(rng.integers(0, 256, int(rng.integers(0, 200))).astype(np.uint8))
        else:
            data = _mutate(_valid_file(rng, "," if suffix == ".csv" else " "), rng)
        path = tmp_path / f"f{i}{suffix}"
        path.write_bytes(data)
        kwargs = {"relabel": bool(rng.random() < 0.2), "header": int(rng.integers(0, 2))}
        try:
            res = nw.read_edge_list(path, **kwargs)
        except ValueError as e:  # includes the wrapped UnicodeDecodeError
            assert str(path) in str(e) or "num_nodes" in str(e) or "src" in str(e)
            continue
        ok += 1
        g = res[0] if kwargs["relabel"] else res
        assert g.num_edges() >= 0 and g.num_nodes() >= 0
    assert ok > 20


def test_read_edge_list_matches_numpy_on_valid_files(tmp_path):
    rng = np.random.default_rng(5)
    for i in range(20):
        edges = rng.integers(0, 1000, (int(rng.integers(0, 200)), 3))
        path = tmp_path / f"v{i}.tsv"
        np.savetxt(path, edges, fmt="%d", delimiter="\t")
        g = nw.read_edge_list(path, src_col=2, dst_col=0, num_nodes=1000)
        u, v = g.edges()
        np.testing.assert_array_equal(u.numpy(), edges[:, 2])
        np.testing.assert_array_equal(v.numpy(), edges[:, 0])


def test_fast_and_careful_edge_list_readers_agree(tmp_path, monkeypatch):
    """NumPy's loadtxt is the fast path; the line-by-line reader is the reference. On every mutated
    file both must give the same graph or the careful reader must raise ValueError."""
    from nodeweave.graph import construct

    rng = np.random.default_rng(7)
    fast_reader = construct._loadtxt_pairs
    for i in range(200):
        data = _mutate(_valid_file(rng, " "), rng) if i % 3 else _valid_file(rng, " ")
        path = tmp_path / f"a{i}.txt"
        path.write_bytes(data)
        monkeypatch.setattr(construct, "_loadtxt_pairs", lambda *a: None)
        try:
            careful = nw.read_edge_list(path, num_nodes=10 ** 6)
        except ValueError:
            careful = None
        monkeypatch.setattr(construct, "_loadtxt_pairs", fast_reader)
        try:
            fast = nw.read_edge_list(path, num_nodes=10 ** 6)
        except ValueError:
            fast = None
        if careful is None:
            assert fast is None
        else:
            for a, b in zip(fast.edges(), careful.edges()):
                np.testing.assert_array_equal(a.numpy(), b.numpy())
