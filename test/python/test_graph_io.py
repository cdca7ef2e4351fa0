"""save_graphs / load_graphs: round trips (features, dtypes, batches, heterographs, labels),
partial loads, atomic writes, and a clear ValueError for each kind of damaged file."""

import json
import os
import struct
import zlib

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.graph import io as gio
from transform_helpers import assert_graphs_equal, rand_graph, rand_hetero


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "graphs.nwg")


def sample_graphs(rng):
    g = rand_graph(rng, 7, 12, "int32")
    for dt in ("bool", "uint8", "int8", "int32", "int64", "float16", "float64"):
        g.ndata[f"f_{dt}"] = nc.tensor(rng.integers(0, 2, (7, 2)).astype(dt))
    g.edata["m"] = nc.tensor(rng.standard_normal((12, 2, 3)).astype(np.float32))
    return [g, nw.graph(([], []), num_nodes=0), rand_graph(rng, 5, 0), rand_hetero(rng),
            nw.batch([rand_graph(rng, 3, 4), rand_graph(rng, 4, 2)])]


def test_round_trip(rng, path):
    gs = sample_graphs(rng)
    labels = {"y": nc.tensor(np.arange(5)), "score": nc.tensor(rng.standard_normal((5, 2)))}
    nw.save_graphs(path, gs, labels)
    got, lab = nw.load_graphs(path)
    assert len(got) == len(gs)
    for a, b in zip(got, gs):
        assert_graphs_equal(a, b)
    assert set(lab) == {"y", "score"}
    np.testing.assert_array_equal(lab["score"].numpy(), labels["score"].numpy())
    assert lab["y"].dtype == nc.int64
    # the batch survives: unbatching the loaded graph works
    assert got[4].batch_size == 2 and len(nw.unbatch(got[4])) == 2


def test_partial_load(rng, path):
    gs = sample_graphs(rng)
    nw.save_graphs(path, gs)
    got, lab = nw.load_graphs(path, [3, 0])
    assert lab == {}
    assert_graphs_equal(got[0], gs[3])
    assert_graphs_equal(got[1], gs[0])
    assert_graphs_equal(nw.load_graphs(path, 1)[0][0], gs[1])
    with pytest.raises(IndexError, match=r"idx_list\[0\] = 5"):
        nw.load_graphs(path, [5])
    with pytest.raises(TypeError, match="idx_list"):
        nw.load_graphs(path, ["a"])


def test_single_graph_and_types(rng, path):
    g = rand_graph(rng, 4, 3)
    nw.save_graphs(path, g)
    assert_graphs_equal(nw.load_graphs(path)[0][0], g)
    with pytest.raises(TypeError, match="graphs"):
        nw.save_graphs(path, "g")
    with pytest.raises(TypeError, match="labels"):
        nw.save_graphs(path, g, labels={"y": [1, 2]})
    nw.save_graphs(path, [], labels={"y": np.arange(3, dtype=np.int32)})  # NumPy labels load as tensors
    lab = nw.load_graphs(path)[1]["y"]
    assert isinstance(lab, nc.Tensor) and lab.dtype == nc.int32 and lab.tolist() == [0, 1, 2]
    g.ndata["bf"] = nc.zeros(4, dtype=nc.bfloat16)
    with pytest.raises(TypeError, match="bfloat16"):
        nw.save_graphs(path, g)


def test_atomic_write(rng, path, monkeypatch):
    g = rand_graph(rng, 4, 3)
    nw.save_graphs(path, [g])
    before = open(path, "rb").read()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(gio, "_write", boom)
    with pytest.raises(OSError, match="disk full"):
        nw.save_graphs(path, [rand_graph(rng, 9, 9)])
    assert open(path, "rb").read() == before
    assert os.listdir(os.path.dirname(path)) == [os.path.basename(path)]  # no temporary left


def rewrite_header(path, edit):
    """Applies ``edit`` to the JSON header and rewrites the file with a valid header CRC (so the
    schema checks, not the checksum, must catch the change)."""
    raw = open(path, "rb").read()
    magic, version, hlen, _ = gio._PREAMBLE.unpack(raw[:24])
    header = json.loads(raw[24:24 + hlen])
    edit(header)
    data = raw[gio._align(24 + hlen):]
    new = json.dumps(header).encode()
    out = gio._PREAMBLE.pack(magic, version, len(new), zlib.crc32(new)) + new
    out += b"\0" * (gio._align(len(out)) - len(out))
    with open(path, "wb") as f:
        f.write(out + data)


def saved(rng, path):
    g = nw.graph(([0, 1, 2], [1, 2, 3]), num_nodes=4)
    g.ndata["h"] = nc.ones((4, 2))
    nw.save_graphs(path, [g], {"y": nc.tensor([1])})
    return open(path, "rb").read()


def expect_bad(path, match):
    with pytest.raises(ValueError, match=match) as e:
        nw.load_graphs(path)
    assert path in str(e.value)


def test_damaged_files(rng, path):
    raw = saved(rng, path)
    open(path, "wb").write(b"junk" + raw[4:])
    expect_bad(path, "bad magic")
    open(path, "wb").write(raw[:8] + struct.pack("<I", 99) + raw[12:])
    expect_bad(path, "unsupported format version 99")
    open(path, "wb").write(raw[:-1])
    expect_bad(path, "bytes")
    open(path, "wb").write(raw[:10])
    expect_bad(path, "shorter than")
    flipped = bytearray(raw)
    flipped[-3] ^= 0x40
    open(path, "wb").write(bytes(flipped))
    expect_bad(path, "CRC-32")
    flipped = bytearray(raw)
    flipped[30] ^= 0x01
    open(path, "wb").write(bytes(flipped))
    expect_bad(path, "header fails its CRC-32")
    open(path, "wb").write(b"")
    expect_bad(path, "shorter than")


def test_schema_violations(rng, path):
    def case(edit, match):
        saved(rng, path)
        rewrite_header(path, edit)
        expect_bad(path, match)

    case(lambda h: h["graphs"][0]["ntypes"][0].update(num_nodes=2, data={}), "out of range")
    case(lambda h: h["graphs"][0]["ntypes"][0].update(num_nodes=2 ** 60), "num_nodes")
    case(lambda h: h["graphs"][0]["ntypes"][0].update(num_nodes=-1), "num_nodes")
    case(lambda h: h["graphs"][0]["etypes"][0].update(num_edges=5), "ids for 5 edges")
    case(lambda h: h["graphs"][0].update(idtype="int16"), "idtype")
    case(lambda h: h["graphs"][0]["etypes"][0].update(type=["_N", "_E", "X"]), "unknown node type")
    case(lambda h: h["arrays"][0].update(shape=[10 ** 12]), "nbytes")
    case(lambda h: h["arrays"][0].update(shape=[10 ** 12], nbytes=4 * 10 ** 12), "ends at byte|describes")
    case(lambda h: h["arrays"][1].update(offset=1), "misaligned")
    case(lambda h: h["labels"].update(y=99), "out of range")
    case(lambda h: h.pop("graphs"), "graphs")
    case(lambda h: h["graphs"][0]["etypes"][0].update(src=0), "dtype|rows|dimension")


def test_ids_out_of_range_in_data(rng, path):
    # a consistent file (CRCs recomputed) whose dst ids exceed num_nodes: the relation graph refuses it
    g = nw.graph(([0, 1], [1, 1]), num_nodes=2)
    nw.save_graphs(path, [g])
    raw = bytearray(open(path, "rb").read())
    hlen = gio._PREAMBLE.unpack(bytes(raw[:24]))[2]
    header = json.loads(bytes(raw[24:24 + hlen]))
    start = gio._align(24 + hlen)
    e = header["arrays"][header["graphs"][0]["etypes"][0]["dst"]]
    arr = np.array([1, 7], np.int64)
    raw[start + e["offset"]:start + e["offset"] + 16] = arr.tobytes()
    e["crc32"] = zlib.crc32(arr.tobytes())
    open(path, "wb").write(bytes(raw))
    rewrite_header(path, lambda h: h["arrays"].__setitem__(slice(None), header["arrays"]))
    expect_bad(path, "out of range")


def test_non_zero_padding_detected(rng, path):
    raw = bytearray(saved(rng, path))
    hlen = gio._PREAMBLE.unpack(bytes(raw[:24]))[2]
    pad = 24 + hlen
    if gio._align(pad) > pad:
        raw[pad] = 1
        open(path, "wb").write(bytes(raw))
        expect_bad(path, "padding")


def test_save_graph_arrays_round_trip_and_errors(tmp_path):
    from nodeweave.graph.io import save_graph_arrays

    path = str(tmp_path / "a.nwg")
    edges = {("u", "r", "i"): (np.array([0, 2, 2]), np.array([1, 0, 1])), ("i", "s", "u"): (np.array([1]), np.array([2]))}
    save_graph_arrays(path, {"u": 3, "i": 2}, edges, ndata={"u": {"x": np.arange(6.0).reshape(3, 2)}},
                      edata={("u", "r", "i"): {"w": nc.tensor([1, 2, 3])}}, labels={"y": np.array([7])}, idtype="int32")
    (g,), labels = nw.load_graphs(path)
    assert g.ntypes == ["u", "i"] and g.canonical_etypes == [("u", "r", "i"), ("i", "s", "u")]
    assert g.idtype == nc.int32 and labels["y"].tolist() == [7]
    assert [t.tolist() for t in g.edges(etype="r")] == [[0, 2, 2], [1, 0, 1]]
    assert g.nodes["u"].data["x"].tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert g.edges["r"].data["w"].tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="outside"):
        save_graph_arrays(path, {"u": 2}, {("u", "r", "u"): (np.array([0, 2]), np.array([1, 1]))})
    with pytest.raises(ValueError, match="one length"):
        save_graph_arrays(path, {"u": 3}, {("u", "r", "u"): (np.array([0, 2]), np.array([1]))})
    with pytest.raises(ValueError, match="expected 3 rows"):
        save_graph_arrays(path, {"u": 3}, {}, ndata={"u": {"x": np.zeros(2)}})
    with pytest.raises(ValueError, match="unknown type"):
        save_graph_arrays(path, {"u": 3}, {}, ndata={"v": {"x": np.zeros(3)}})
    with pytest.raises(ValueError, match="idtype"):
        save_graph_arrays(path, {"u": 3}, {}, idtype="int16")
    assert nw.load_graphs(path)[0][0].ntypes == ["u", "i"]  # the failed calls left the file as it was
