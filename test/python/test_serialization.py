"""nc.save / nc.load: round trips of every dtype and nested structures, the documented on-disk
layout (parsed here independently), atomic writes, and corruption/truncation fuzzing."""

import io
import json
import math
import os
import stat
import struct
import zlib
from collections import OrderedDict

import numpy as np
import pytest

import nodeweave.core as nc
from nodeweave.core import serialization

NP_DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]


def _values(t):
    if t.dtype == nc.bfloat16:
        return t.float().detach().numpy()
    return t.detach().numpy()


def _random_array(rng, dtype, shape):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype in ("uint8", "int8", "int32", "int64"):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", NP_DTYPES + ["bfloat16"])
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 0, 2), (2, 3, 5)])
def test_every_dtype_round_trips_bit_exactly(dtype, shape, tmp_path):
    rng = np.random.default_rng(0)
    if dtype == "bfloat16":
        t = nc.tensor(rng.standard_normal(shape).astype(np.float32)).to("bfloat16")
    else:
        t = nc.tensor(_random_array(rng, dtype, shape))
    nc.save(t, tmp_path / "t.nw")
    back = nc.load(tmp_path / "t.nw")
    assert back.dtype == t.dtype and tuple(back.shape) == shape
    assert back.is_contiguous() or back.numel() == 0  # (the engine calls some empty tensors non-contiguous)
    np.testing.assert_array_equal(_values(back), _values(t))
    if t.numel():
        assert back.data_ptr() != t.data_ptr()


def test_special_float_values_and_noncontiguous_tensors(tmp_path):
    vals = np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 1.7976931348623157e308])
    src = nc.tensor(np.arange(12.0).reshape(3, 4)).t()  # a transposed view
    nc.save({"special": nc.tensor(vals), "view": src}, tmp_path / "f.nw")
    back = nc.load(tmp_path / "f.nw")
    assert back["special"].numpy().tobytes() == vals.tobytes()  # bit patterns, NaN and -0.0 included
    np.testing.assert_array_equal(back["view"].numpy(), np.arange(12.0).reshape(3, 4).T)


def test_requires_grad_is_kept_and_loaded_tensors_are_fresh(tmp_path):
    p = nc.nn.Parameter(nc.ones(3))
    nc.save({"p": p, "plain": nc.ones(2)}, tmp_path / "g.nw")
    back = nc.load(tmp_path / "g.nw")
    assert back["p"].requires_grad and back["p"].is_leaf and not back["plain"].requires_grad
    with nc.no_grad():
        back["p"].fill_(5.0)
    assert p.tolist() == [1.0, 1.0, 1.0]


def test_nested_structures_round_trip(tmp_path):
    shared = nc.tensor([1.0, 2.0])
    obj = {
        "model": OrderedDict([("a.weight", shared), ("a.bias", nc.zeros(2))]),
        "again": shared,
        7: [1, -2 ** 100, 2.5, float("nan"), float("-inf"), -0.0, True, None, "ünïcødé ✓", (1, (2, "x"))],
        (1, "k"): {"nested": {"deep": [[[]]], "empty": {}}},
        None: nc.float64,
        2.5: (),
        False: "bool key",
    }
    nc.save(obj, tmp_path / "n.nw")
    back = nc.load(tmp_path / "n.nw")
    assert list(back) == list(obj)
    assert isinstance(back["model"], OrderedDict) and type(back[(1, "k")]) is dict
    assert list(back["model"]) == ["a.weight", "a.bias"]
    assert back["again"] is back["model"]["a.weight"]  # one tensor object stays one object
    items = back[7]
    assert items[:3] == [1, -2 ** 100, 2.5] and math.isnan(items[3]) and items[4] == float("-inf")
    assert math.copysign(1.0, items[5]) == -1.0
    assert items[6:] == [True, None, "ünïcødé ✓", (1, (2, "x"))]
    assert isinstance(items[9], tuple) and isinstance(items[9][1], tuple)
    assert back[(1, "k")] == {"nested": {"deep": [[[]]], "empty": {}}}
    assert back[None] == nc.float64 and back[2.5] == () and back[False] == "bool key"
    for x in (1.0 / 3, 1e-310, 123456789.123456789):
        nc.save(x, tmp_path / "x.nw")
        assert nc.load(tmp_path / "x.nw") == x  # floats are exact


def test_checkpoint_of_model_and_optimizer(tmp_path):
    model = nc.nn.Sequential(nc.nn.Linear(3, 4), nc.nn.BatchNorm1d(4))
    opt = nc.optim.AdamW(model.parameters(), lr=0.01)
    model(nc.randn(5, 3)).sum().backward()
    opt.step()
    nc.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}, tmp_path / "ck.nw")
    ck = nc.load(tmp_path / "ck.nw")
    assert ck["epoch"] == 3 and ck["optim"]["param_groups"][0]["betas"] == (0.9, 0.999)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(ck["model"][k].numpy(), v.numpy())
    exp_avg = opt.state[model[0].weight]["exp_avg"]
    np.testing.assert_array_equal(ck["optim"]["state"][0]["exp_avg"].numpy(), exp_avg.numpy())


def test_file_objects(tmp_path):
    buf = io.BytesIO()
    nc.save({"x": nc.arange(5)}, buf)
    buf.seek(0)
    assert nc.load(buf)["x"].tolist() == [0, 1, 2, 3, 4]
    with open(tmp_path / "h.nw", "wb") as f:
        nc.save([nc.ones(2)], f)
    with open(tmp_path / "h.nw", "rb") as f:
        assert nc.load(f)[0].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="must be a path or a writable binary file, got int"):
        nc.save(1, 5)


def test_unsupported_objects_raise_before_writing(tmp_path):
    path = tmp_path / "u.nw"
    with pytest.raises(TypeError, match=r"type set at obj\['a'\]\[1\]"):
        nc.save({"a": [1, {2}]}, path)
    with pytest.raises(TypeError, match="type bytes at obj"):
        nc.save(b"raw", path)
    cyc = []
    cyc.append(cyc)
    with pytest.raises(ValueError, match="reference cycle"):
        nc.save(cyc, path)
    assert not path.exists() and os.listdir(tmp_path) == []


# ---------------------------------------------------------------- the documented layout
def test_layout_matches_the_documented_format(tmp_path):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1, -2, 3], dtype=np.int64)
    nc.save({"a": nc.tensor(a), "b": [nc.tensor(b), 1.5]}, tmp_path / "l.nw")
    raw = (tmp_path / "l.nw").read_bytes()
    magic, version, hlen, hcrc = struct.unpack_from("<8sIQI", raw, 0)
    assert magic == b"\x89NWT\r\n\x1a\n" and version == 1
    header_bytes = raw[24:24 + hlen]
    assert zlib.crc32(header_bytes) == hcrc
    header = json.loads(header_bytes)
    data = (24 + hlen + 63) // 64 * 64
    assert len(raw) == data + header["data_size"]
    assert header["root"]["type"] == "dict" and header["root"]["items"][0][0] == {"type": "str", "value": "a"}
    assert header["root"]["items"][1][1]["items"][1] == {"type": "float", "value": (1.5).hex()}
    for entry, arr in zip(header["tensors"], (a, b)):
        assert entry["dtype"] == arr.dtype.name and entry["shape"] == list(arr.shape)
        assert entry["offset"] % 64 == 0 and entry["nbytes"] == arr.nbytes
        chunk = raw[data + entry["offset"]:data + entry["offset"] + entry["nbytes"]]
        assert chunk == arr.astype(arr.dtype.newbyteorder("<")).tobytes()  # raw little-endian C order
        assert zlib.crc32(chunk) == entry["crc32"]


# ---------------------------------------------------------------- atomic writes
def test_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "ck.nw"
    nc.save({"v": nc.tensor([1.0])}, path)
    before = path.read_bytes()
    calls = []

    def failing(f, t):
        calls.append(1)
        if len(calls) == 2:
            f.write(b"partial")
            raise OSError("disk full")
        f.write(serialization._bytes_of(t))

    monkeypatch.setattr(serialization, "_write_tensor_data", failing)
    with pytest.raises(OSError, match="disk full"):
        nc.save({"v": nc.tensor([2.0]), "w": nc.ones(1000)}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ck.nw"]

    monkeypatch.undo()
    monkeypatch.setattr(serialization.os, "replace", lambda *a: (_ for _ in ()).throw(OSError("rename failed")))
    with pytest.raises(OSError, match="rename failed"):
        nc.save({"v": nc.tensor([3.0])}, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ck.nw"]


def test_saved_file_gets_ordinary_permissions(tmp_path):
    nc.save(nc.ones(1), tmp_path / "p.nw")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "p.nw").st_mode) == 0o666 & ~umask


# ---------------------------------------------------------------- corruption
def _sample_file(tmp_path):
    rng = np.random.default_rng(1)
    obj = {"w": nc.tensor(rng.standard_normal((4, 3))), "ids": nc.tensor([3, 1, 2]),
           "meta": [1, "x", None, 2.5, (True,)], "h": nc.tensor(rng.standard_normal(5).astype(np.float16))}
    path = tmp_path / "s.nw"
    nc.save(obj, path)
    return path, path.read_bytes()


def _expect_corrupt(path, data):
    path.write_bytes(data)
    with pytest.raises(ValueError) as err:
        nc.load(path)
    assert str(path) in str(err.value)


def test_every_truncation_raises_value_error(tmp_path):
    path, good = _sample_file(tmp_path)
    bad = tmp_path / "bad.nw"
    for n in range(len(good)):
        _expect_corrupt(bad, good[:n])
    _expect_corrupt(bad, good + b"\0")  # trailing bytes are corruption too


def test_every_single_byte_flip_raises_value_error(tmp_path):
    path, good = _sample_file(tmp_path)
    bad = tmp_path / "bad.nw"
    rng = np.random.default_rng(2)
    for i in range(len(good)):
        data = bytearray(good)
        data[i] ^= int(rng.integers(1, 256))
        _expect_corrupt(bad, bytes(data))


def test_random_multi_byte_corruption_never_crashes(tmp_path):
    _, good = _sample_file(tmp_path)
    bad = tmp_path / "bad.nw"
    rng = np.random.default_rng(3)
    for _ in range(300):
        data = bytearray(good)
        for _ in range(int(rng.integers(1, 8))):
            data[int(rng.integers(0, len(data)))] = int(rng.integers(0, 256))
        if bytes(data) == good:
            continue
        cut = int(rng.integers(0, len(data) + 1)) if rng.random() < 0.3 else len(data)
        _expect_corrupt(bad, bytes(data[:cut]))
    for blob in (b"", b"hello world", os.urandom(4096), b"\x89PNG\r\n\x1a\n" + b"\0" * 100):
        _expect_corrupt(bad, blob)


def _craft(header, data=b"", version=1, root=None):
    """A file with valid CRCs around an arbitrary (possibly malicious) header."""
    if root is not None:
        header = dict(header, root=root)
    hb = json.dumps(header).encode() if not isinstance(header, bytes) else header
    pre = struct.pack("<8sIQI", b"\x89NWT\r\n\x1a\n", version, len(hb), zlib.crc32(hb))
    pad = (-(len(pre) + len(hb))) % 64
    return pre + hb + b"\0" * pad + data


def _entry(dtype="float32", shape=(2,), offset=0, nbytes=8, data=b"\0" * 8, **kw):
    e = {"dtype": dtype, "shape": list(shape), "offset": offset, "nbytes": nbytes, "crc32": zlib.crc32(data),
         "requires_grad": False}
    e.update(kw)
    return e


T = {"type": "tensor", "index": 0}
CRAFTED = {
    "bad version": (_craft({"data_size": 0, "tensors": [], "root": {"type": "none"}}, version=2),
                    "unsupported format version 2"),
    "not json": (_craft(b"{not json"), "not valid JSON"),
    "not an object": (_craft(b"[1, 2]"), "not a JSON object"),
    "unknown dtype": (_craft({"data_size": 8, "tensors": [_entry(dtype="complex64")]}, b"\0" * 8, root=T),
                      "unknown dtype 'complex64'"),
    "negative dim": (_craft({"data_size": 8, "tensors": [_entry(shape=(-2,))]}, b"\0" * 8, root=T),
                     "invalid shape"),
    "nbytes mismatch": (_craft({"data_size": 8, "tensors": [_entry(shape=(3,))]}, b"\0" * 8, root=T),
                        "does not match dtype"),
    "huge shape": (_craft({"data_size": 8, "tensors": [_entry(shape=(2 ** 40, 2 ** 40), nbytes=2 ** 82)]},
                          b"\0" * 8, root=T), "ends at byte"),
    "past the end": (_craft({"data_size": 8, "tensors": [_entry(offset=64)]}, b"\0" * 8, root=T), "ends at byte"),
    "overlap": (_craft({"data_size": 8, "tensors": [_entry(), _entry()]}, b"\0" * 8, root=T), "overlaps"),
    "misaligned": (_craft({"data_size": 16, "tensors": [_entry(offset=8)]}, b"\0" * 16, root=T), "misaligned"),
    "bad crc": (_craft({"data_size": 8, "tensors": [_entry()]}, b"\1" * 8, root=T), "CRC-32"),
    "nonzero padding": (_craft({"data_size": 72, "tensors": [_entry(offset=64)]}, b"\1" + b"\0" * 71, root=T),
                        "non-zero padding"),
    "size disagrees": (_craft({"data_size": 16, "tensors": []}, b"\0" * 8, root={"type": "none"}),
                       "header describes"),
    "index out of range": (_craft({"data_size": 0, "tensors": [], "root": T}), "tensor index 0 is out of range"),
    "unknown node": (_craft({"data_size": 0, "tensors": [], "root": {"type": "pickle"}}), "unknown node type"),
    "bad int": (_craft({"data_size": 0, "tensors": [], "root": {"type": "int", "value": "1"}}), "int node"),
    "bad float": (_craft({"data_size": 0, "tensors": [], "root": {"type": "float", "value": "0xZZ"}}),
                  "bad float value"),
    "unhashable key": (_craft({"data_size": 0, "tensors": [], "root": {"type": "dict", "ordered": False, "items": [
        [{"type": "list", "items": []}, {"type": "none"}]]}}), "not hashable"),
    "deep nesting": (_craft(('{"data_size": 0, "tensors": [], "root": ' + '{"type": "list", "items": [' * 400
                             + "]}" * 400 + "}").encode()), "nested deeper than"),
    "json bomb": (_craft(("[" * 100000 + "]" * 100000).encode()), "JSON"),
    "missing root": (_craft({"data_size": 0, "tensors": []}), "'root' is missing"),
    "missing tensors": (_craft({"data_size": 0, "root": {"type": "none"}}), "'tensors' is missing"),
}


@pytest.mark.parametrize("name", list(CRAFTED))
def test_crafted_headers_raise_value_error(name, tmp_path):
    blob, match = CRAFTED[name]
    path = tmp_path / "c.nw"
    path.write_bytes(blob)
    with pytest.raises(ValueError, match=match):
        nc.load(path)


def test_crafted_file_that_is_valid_loads():
    # The crafting helper itself is right: a well-formed handmade file loads.
    data = np.array([1.5, -2.0], dtype=np.float32).tobytes()
    blob = _craft({"data_size": 8, "tensors": [_entry(data=data)]}, data, root=T)
    assert nc.load(io.BytesIO(blob)).tolist() == [1.5, -2.0]
