"""The partition files on disk: the manifest's contents, checksums and sizes; corrupt, truncated,
missing, swapped and foreign part files and bad manifests each raise an error naming the file; an
interrupted partitioning leaves no manifest and no temporary file; bad arguments name themselves;
the ``nodeweave-partition`` command line (help, a run, every bad input -> message and exit 2); and
the memory partitioning adds on a mid-size graph, printed by the command line."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import nodeweave as nw
from nodeweave.distributed import PartitionFormatError, load_partition, load_partition_book, partition_graph
from nodeweave.distributed import partition as partition_module
from conftest import np_of

ROOT = Path(__file__).resolve().parents[2]


def small_graph(seed=0, n=60, m=240):
    rng = np.random.default_rng(seed)
    g = nw.graph((rng.integers(0, n, m), rng.integers(0, n, m)), num_nodes=n)
    g.ndata["x"] = nw.backend.current().from_numpy(rng.standard_normal((n, 2)).astype(np.float32))
    g.edata["w"] = nw.backend.current().from_numpy(rng.standard_normal(m))
    return g


@pytest.fixture
def parts(tmp_path):
    partition_graph(small_graph(), 3, tmp_path, graph_name="g")
    return tmp_path, tmp_path / "g.json"


def rewrite_manifest(path, edit):
    m = json.loads(path.read_text())
    edit(m)
    path.write_text(json.dumps(m))


def record(m, p, name, path):
    """Points the manifest's record of part p's file `name` at `path`'s actual size and sha256."""
    data = Path(path).read_bytes()
    m["parts"][p]["files"][name].update(size=len(data), sha256=hashlib.sha256(data).hexdigest())


# ----------------------------------------------------------------------------- the manifest
def test_manifest_records_the_partitioning(parts):
    out, manifest = parts
    m = json.loads(manifest.read_text())
    assert m["format"] == "nodeweave-partition" and m["format_version"] == nw.distributed.FORMAT_VERSION == 1
    assert (m["graph_name"], m["num_parts"], m["halo_hops"], m["part_method"], m["objtype"]) == ("g", 3, 1, "metis", "cut")
    assert m["ntypes"] == ["_N"] and m["canonical_etypes"] == [["_N", "_E", "_N"]]
    assert m["num_nodes"] == {"_N": 60} and m["num_edges"] == {"_N:_E:_N": 240}
    assert m["node_ranges"]["_N"][0] == 0 and m["node_ranges"]["_N"][-1] == 60 and len(m["node_ranges"]["_N"]) == 4
    assert m["node_feats"] == {"_N": {"x": {"dtype": "float32", "shape": [2]}}}
    assert m["edge_feats"] == {"_N:_E:_N": {"w": {"dtype": "float64", "shape": []}}}
    assert isinstance(m["metis_objective_value"], int) and m["metis_objective_value"] > 0
    for p, part in enumerate(m["parts"]):
        assert part["part_id"] == p and set(part["files"]) == {"graph", "node_feats", "edge_feats"}
        for name, f in part["files"].items():
            assert f["path"] == f"part{p}/{name}.nwg"
            data = (out / f["path"]).read_bytes()
            assert f["size"] == len(data) and f["sha256"] == hashlib.sha256(data).hexdigest()
    leftovers = [p.name for p in out.rglob("*") if p.name.startswith(".") or p.name.endswith(".tmp")]
    assert leftovers == []


def test_load_partition_book_reads_only_the_manifest(parts):
    out, manifest = parts
    shutil.rmtree(out / "part1")
    book, name, ntypes, etypes = load_partition_book(manifest, 1)
    assert book.partid == 1 and name == "g" and ntypes == ["_N"] and etypes == [("_N", "_E", "_N")]
    assert book.num_nodes() == 60 and book.num_edges() == 240
    g, nf, ef, *_ = load_partition(manifest, 0, load_feats=False)
    assert nf == {} and ef == {} and g.num_nodes() > 0


# ----------------------------------------------------------------------------- damaged files
@pytest.mark.parametrize("name", ["graph", "node_feats", "edge_feats"])
def test_corrupt_file_is_named(parts, name):
    out, manifest = parts
    path = out / "part1" / f"{name}.nwg"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(PartitionFormatError, match=re.escape(str(path)) + ".*corrupt.*sha256"):
        load_partition(manifest, 1)
    load_partition(manifest, 0)  # the other parts are untouched


def test_truncated_file_is_named(parts):
    out, manifest = parts
    path = out / "part2" / "node_feats.nwg"
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(PartitionFormatError, match=re.escape(str(path)) + ".*truncated"):
        load_partition(manifest, 2)


def test_missing_file_is_named(parts):
    out, manifest = parts
    path = out / "part0" / "edge_feats.nwg"
    path.unlink()
    with pytest.raises(FileNotFoundError, match=re.escape(str(path)) + ".*missing") as e:
        load_partition(manifest, 0)
    assert isinstance(e.value, nw.NodeweaveError)


def test_swapped_part_files_are_named(parts):
    # part 1's graph file copied over part 0's, and the manifest made to agree with its checksum:
    # the file's own stamp still says part 1
    out, manifest = parts
    path = out / "part0" / "graph.nwg"
    shutil.copy(out / "part1" / "graph.nwg", path)
    rewrite_manifest(manifest, lambda m: record(m, 0, "graph", path))
    with pytest.raises(PartitionFormatError, match=re.escape(str(path)) + ".*belongs to part 1 of 3, not to part 0"):
        load_partition(manifest, 0)


def test_file_from_another_partitioning_is_named(parts, tmp_path_factory):
    out, manifest = parts
    other = tmp_path_factory.mktemp("other")
    partition_graph(small_graph(), 3, other, graph_name="g")   # the same graph, partitioned again
    path = out / "part2" / "node_feats.nwg"
    shutil.copy(other / "part2" / "node_feats.nwg", path)
    rewrite_manifest(manifest, lambda m: record(m, 2, "node_feats", path))
    with pytest.raises(PartitionFormatError, match=re.escape(str(path)) + ".*another partitioning"):
        load_partition(manifest, 2)


def test_part_contents_are_checked_against_the_book(parts):
    # a well-formed part file whose owned range disagrees with the manifest's ranges
    out, manifest = parts

    def shift(m):
        r = m["node_ranges"]["_N"]
        r[1] += 1 if r[1] < r[2] else -1
    rewrite_manifest(manifest, shift)
    with pytest.raises(PartitionFormatError, match=re.escape(str(out / "part0" / "graph.nwg"))):
        load_partition(manifest, 0)


@pytest.mark.parametrize("edit, match", [
    (lambda m: m.update(format_version=2), "format version 2 is not supported"),
    (lambda m: m.update(format="other"), "not a partition manifest"),
    (lambda m: m["parts"].pop(), "parts must list 3 parts"),
    (lambda m: m["node_ranges"].update(_N=[0, 70, 80, 60]), "non-decreasing offsets from 0 to 60"),
    (lambda m: m["parts"][1]["files"]["graph"].update(path="../../etc/passwd"), "inside the manifest's directory"),
    (lambda m: m["parts"][1]["files"].pop("edge_feats"), "must list the files"),
    (lambda m: m["parts"][2].update(part_id=1), "part_id 2"),
])
def test_bad_manifest_is_named(parts, edit, match):
    out, manifest = parts
    rewrite_manifest(manifest, edit)
    with pytest.raises(PartitionFormatError, match=re.escape(str(manifest)) + ".*" + match):
        load_partition(manifest, 1)


def test_unreadable_or_missing_manifest(parts, tmp_path):
    out, manifest = parts
    manifest.write_text("{not json")
    with pytest.raises(PartitionFormatError, match="invalid JSON"):
        load_partition(manifest, 0)
    with pytest.raises(FileNotFoundError, match="nope.json is missing"):
        load_partition(tmp_path / "nope.json", 0)


def test_part_id_is_checked(parts):
    _, manifest = parts
    with pytest.raises(IndexError, match="part_id 3 is out of range: the partitioning has 3 parts"):
        load_partition(manifest, 3)
    with pytest.raises(TypeError, match="part_id must be an int"):
        load_partition(manifest, "0")


# ----------------------------------------------------------------------------- atomic writes
def test_interrupted_partitioning_leaves_no_manifest(tmp_path, monkeypatch):
    g = small_graph()
    partition_graph(g, 3, tmp_path, graph_name="g")
    assert (tmp_path / "g.json").exists()
    calls = []

    def failing(real):
        def save(path, *a, **k):
            calls.append(path)
            if path.endswith("part1/node_feats.nwg"):
                raise OSError("disk full")
            real(path, *a, **k)
        return save

    for name in ("save_graphs", "save_graph_arrays"):  # the feature files and the structure files
        monkeypatch.setattr(partition_module, name, failing(getattr(partition_module, name)))
    with pytest.raises(OSError, match="disk full"):
        partition_graph(g, 3, tmp_path, graph_name="g")
    assert any(c.endswith("part1/node_feats.nwg") for c in calls)
    assert not (tmp_path / "g.json").exists()   # the old manifest went first, the new one never came
    assert [p.name for p in tmp_path.rglob("*") if p.name.startswith(".") or p.name.endswith(".tmp")] == []


# ----------------------------------------------------------------------------- arguments
def test_bad_arguments_name_themselves(tmp_path, rng):
    g = small_graph()
    cases = [
        (dict(num_parts="g"), TypeError, "num_parts must be an int.*DGL's order"),
        (dict(num_parts=0), ValueError, r"num_parts must be in \[1, 60\]"),
        (dict(num_parts=61), ValueError, r"num_parts must be in \[1, 60\]"),
        (dict(graph_name="a/b"), ValueError, "graph_name must be a file name"),
        (dict(num_hops=0), ValueError, "num_hops must be >= 1"),
        (dict(part_method="kway"), ValueError, "part_method must be 'metis' or 'random'"),
        (dict(objtype="edges"), ValueError, "objtype must be 'cut'"),
        (dict(seed=-1), ValueError, "seed must be in"),
        (dict(balance_ntypes=[0, 1]), ValueError, r"balance_ntypes must hold one value per node \(60\)"),
        (dict(balance_ntypes={"user": np.zeros(60)}), ValueError, "balance_ntypes must have the key '_N'"),
    ]
    for kw, exc, match in cases:
        args = dict(num_parts=2, graph_name="g")
        args.update(kw)
        with pytest.raises(exc, match=match):
            partition_graph(g, args.pop("num_parts"), tmp_path, **args)
    with pytest.raises(TypeError, match="g must be a graph"):
        partition_graph("g", 2, tmp_path)
    with pytest.raises(TypeError, match="out_dir must be a directory path"):
        partition_graph(g, 2, 3)
    hg = nw.heterograph({("a", "r", "b"): ([0], [0])})
    with pytest.raises(TypeError, match="balance_ntypes must be a dict"):
        partition_graph(hg, 1, tmp_path, balance_ntypes=[0, 0])
    with pytest.raises(ValueError, match="unknown node types"):
        partition_graph(hg, 1, tmp_path, balance_ntypes={"c": [0]})
    colon = nw.heterograph({("a", "r:1", "a"): ([0], [0])})
    with pytest.raises(ValueError, match="contains ':' or '/'"):
        partition_graph(colon, 1, tmp_path)
    assert not list(tmp_path.iterdir())  # nothing was written by any bad call


# ----------------------------------------------------------------------------- command line
def run_cli(*args, timeout=300):
    # -S as the test process, when it has it: the child then imports the same nodeweave
    site = ["-S"] if sys.flags.no_site else []
    return subprocess.run([sys.executable, *site, "-m", "nodeweave.distributed.partition_cli", *args], capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ, PYTHONWARNINGS="ignore"))


def test_cli_help():
    r = run_cli("--help")
    assert r.returncode == 0
    for opt in ("--dataset", "--graph", "--num-parts", "--out-dir", "--num-hops", "--part-method", "--objtype",
                "--balance-ntypes", "--balance-edges", "--seed"):
        assert opt in r.stdout


def test_cli_partitions_a_saved_graph(tmp_path):
    g = small_graph()
    g.ndata["train_mask"] = nw.backend.current().from_numpy(np.arange(60) < 20)
    nw.save_graphs(str(tmp_path / "mine.nwg"), [g])
    r = run_cli("--graph", str(tmp_path / "mine.nwg"), "--num-parts", "3", "--out-dir", str(tmp_path / "out"),
                "--balance-ntypes", "train_mask", "--part-method", "random", "--num-hops", "2")
    assert r.returncode == 0, r.stderr
    assert re.search(r"peak memory \+[\d.]+ MiB = [\d.]+x the graph's", r.stdout)
    assert len(re.findall(r"^part \d: owns \d+ nodes and \d+ edges$", r.stdout, re.M)) == 3
    m = json.loads((tmp_path / "out" / "mine.json").read_text())
    assert (m["num_parts"], m["halo_hops"], m["part_method"]) == (3, 2, "random")
    counts = [int(np_of(load_partition(tmp_path / "out" / "mine.json", p)[1]["_N/train_mask"]).sum()) for p in range(3)]
    assert sorted(counts) == [6, 7, 7]


def test_cli_synthetic_rmat(tmp_path):
    r = run_cli("--dataset", "rmat10", "--feat-dim", "4", "--num-parts", "2", "--out-dir", str(tmp_path),
                "--objtype", "vol", "--quiet")
    assert r.returncode == 0 and r.stdout == "", r.stderr
    g, nf, *_ = load_partition(tmp_path / "rmat10.json", 1)
    m = json.loads((tmp_path / "rmat10.json").read_text())
    assert m["num_nodes"] == {"_N": 1024} and m["num_edges"] == {"_N:_E:_N": 16 * 1024 + 1024}
    assert m["objtype"] == "vol" and np_of(nf["_N/feat"]).shape[1] == 4


@pytest.mark.skipif(not os.environ.get("NODEWEAVE_DATA_DIR"), reason="needs NODEWEAVE_DATA_DIR (Cora)")
def test_cli_cora(tmp_path):
    r = run_cli("--dataset", "cora", "--num-parts", "2", "--out-dir", str(tmp_path), "--balance-ntypes", "train_mask")
    assert r.returncode == 0, r.stderr
    g, nf, ef, book, name, *_ = load_partition(tmp_path / "cora.json", 0)
    assert name == "cora" and set(nf) == {"_N/feat", "_N/label", "_N/train_mask", "_N/val_mask", "_N/test_mask"}
    assert book.num_nodes() == 2708


@pytest.mark.parametrize("args, match", [
    (["--dataset", "nope"], "--dataset: .*'nope'.*rmat<S>"),
    (["--dataset", "rmat10", "--num-parts", "0"], r"num_parts must be in \[1, 1024\]"),
    (["--graph", "/nonexistent/g.nwg"], "/nonexistent/g.nwg"),
    (["--dataset", "rmat10", "--num-hops", "0"], "num_hops must be >= 1"),
    (["--dataset", "rmat10", "--balance-ntypes", "train_mask"], "no node feature 'train_mask'"),
    (["--dataset", "rmat40"], "1 <= S <= 30"),
    (["--dataset", "cora", "--feat-dim", "8"], "--feat-dim applies to rmat<S> only"),
    (["--dataset", "rmat10", "--graph-name", "a b"], "graph_name must be a file name"),
    (["--dataset", "rmat10", "--part-method", "spectral"], "invalid choice"),
    (["--dataset", "rmat10", "--num-parts", "two"], "invalid int value"),
    (["--dataset", "rmat10", "--graph", "x.nwg"], "not allowed with argument"),
])
def test_cli_bad_input_exits_2(tmp_path, args, match):
    full = args + (["--num-parts", "2"] if "--num-parts" not in args else []) + ["--out-dir", str(tmp_path / "o")]
    r = run_cli(*full)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert re.search(match, r.stderr), r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("nodeweave-partition: error:")


def test_cli_graph_index_out_of_range(tmp_path):
    nw.save_graphs(str(tmp_path / "two.nwg"), [small_graph(), small_graph(1)])
    r = run_cli("--graph", str(tmp_path / "two.nwg"), "--graph-index", "2", "--num-parts", "2", "--out-dir", str(tmp_path))
    assert r.returncode == 2 and "--graph-index 2 is out of range" in r.stderr


# ----------------------------------------------------------------------------- memory
def test_peak_memory_stays_within_three_times_the_graph(tmp_path):
    # R-MAT 2^16 (65,536 nodes, 1.1 M edges with self-loops) with 128 float32 features per node, as the
    # sampling benchmarks' graphs: structure 17 MiB + features 32 MiB. A fresh process, so that the
    # figure is partitioning's alone; METIS' own workspace is most of it.
    r = run_cli("--dataset", "rmat16", "--feat-dim", "128", "--num-parts", "4", "--out-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    m = re.search(r"peak memory \+([\d.]+) MiB = ([\d.]+)x the graph's ([\d.]+) MiB", r.stdout)
    assert m, r.stdout
    growth, ratio, size = map(float, m.groups())
    assert size == pytest.approx((2 * 8 * (16 + 1) * 65536 + 4 * 128 * 65536) / 2**20, abs=0.1)
    assert growth > 0 and ratio <= 3.0, r.stdout
