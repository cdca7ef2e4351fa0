"""PPI (node2vec) and DBLP edge lists with community labels, and the text-table parser under them."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from nodeweave.data import DataFormatError, DBLPDataset, PPINode2VecDataset
from nodeweave.data.text_tables import float_table, int_table, read_text, str_table

from test_data_support import shared  # noqa: F401


def _lines(path):
    return [line for line in path.read_text().split("\n") if line.strip()]


def test_ppi_counts_and_labels(shared):
    ds = PPINode2VecDataset(raw_dir=shared, download=False)
    g = ds[0]
    assert (g.num_nodes(), g.num_edges(), ds.num_classes) == (3890, 2 * 37845 + 894, 50)
    src, dst = (t.numpy() for t in g.edges())
    assert int((src == dst).sum()) == 894 and int((src < dst).sum()) == 37845
    pairs = set(zip(src.tolist(), dst.tolist()))
    assert all((v, u) in pairs for u, v in pairs)
    label = g.ndata["label"].numpy()
    assert label.dtype == np.float32 and label.shape == (3890, 50) and set(np.unique(label)) == {0.0, 1.0}
    cmty = _lines(shared / "ppi_node2vec/PPI.cmty")
    np.testing.assert_array_equal(label.sum(0), [len(line.split()) for line in cmty])
    first = [int(x) for x in cmty[0].split()]
    assert label[first, 0].all() and int(label[:, 0].sum()) == len(first)
    ds.verify_files()


def test_dblp_counts_and_labels(shared):
    ds = DBLPDataset(raw_dir=shared, download=False)
    g = ds[0]
    assert (g.num_nodes(), g.num_edges(), ds.num_classes) == (51264, 2 * 127968, 60)
    label = g.ndata["label"].numpy()
    assert label.dtype == np.int64 and label.min() == 0 and label.max() == 59
    cmty = _lines(shared / "dblp_prone/dblp.cmty")
    np.testing.assert_array_equal(np.bincount(label, minlength=60), [len(line.split()) for line in cmty])
    ds.verify_files()


def _copy(shared, tmp_path, files):
    root = tmp_path / "data"
    for f in files:
        (root / f.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shared / f.path, root / f.path)
    return root


def test_label_and_edge_errors(shared, tmp_path):
    root = _copy(shared, tmp_path, DBLPDataset.files)
    cmty = root / "dblp_prone/dblp.cmty"
    lines = cmty.read_text().split("\n")
    lines[3] = lines[3] + "\t0"  # node 0 is already in class 0
    cmty.write_text("\n".join(lines))
    with pytest.raises(DataFormatError, match=r"dblp\.cmty:4: node 0 is in two classes"):
        DBLPDataset(raw_dir=root, download=False)
    lines[3] = "12\tx7"
    cmty.write_text("\n".join(lines))
    with pytest.raises(DataFormatError, match=r"dblp\.cmty:4: 'x7' is not an integer node id"):
        DBLPDataset(raw_dir=root, download=False)
    shutil.copyfile(shared / "dblp_prone/dblp.cmty", cmty)
    edges = root / "dblp_prone/dblp.ungraph"
    edges.write_text(edges.read_text().replace("\n", "\n5\n", 1))
    with pytest.raises(DataFormatError, match=r"dblp\.ungraph:2: expected 2 numbers, got 1"):
        DBLPDataset(raw_dir=root, download=False)


def test_single_label_set_needs_every_node_labelled(shared, tmp_path):
    root = _copy(shared, tmp_path, DBLPDataset.files)
    cmty = root / "dblp_prone/dblp.cmty"
    lines = cmty.read_text().split("\n")
    lines[0] = "\t".join(x for x in lines[0].split("\t") if x != "6")
    cmty.write_text("\n".join(lines))
    with pytest.raises(DataFormatError, match=r"dblp\.cmty: node 6 has no class"):
        DBLPDataset(raw_dir=root, download=False)


# ----------------------------------------------------------------------------------- text tables


def test_int_table_values_and_errors():
    np.testing.assert_array_equal(int_table(b"1, 2\n3,4\n\n\n", "f", 2), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(int_table(b"-1\t2\r\n3 4", "f", 2, commas=False), [[-1, 2], [3, 4]])
    assert int_table(b"", "f", 2).shape == (0, 2)
    for data, msg in ((b"1 2\n3\n", "f:2: expected 2 numbers, got 1"),
                      (b"1 2\n\n3 4\n", "f:2: empty line inside the table"),
                      (b"1 2\n3 2.5\n", "f:2: '2.5' is not an integer"),
                      (b"1 2\n3 4 5\n", "f:2: expected 2 numbers, got 3"),
                      (b"1,2\n3;4\n", "f:2: expected 2 numbers, got 1")):
        with pytest.raises(DataFormatError, match=msg.replace(".", r"\.")):
            int_table(data, "f", 2)


def test_float_table_width_from_first_line():
    np.testing.assert_allclose(float_table(b"0.5, 1e3, -2\n1, 2, 3\n", "f"), [[0.5, 1000, -2], [1, 2, 3]])
    with pytest.raises(DataFormatError, match=r"f:2: 'nope' is not a number"):
        float_table(b"1, 2\n3, nope\n", "f")


def test_str_table_and_text(tmp_path):
    assert str_table("a\tb\r\nc\td\n\n", "f", 2) == [["a", "b"], ["c", "d"]]
    with pytest.raises(DataFormatError, match=r"f:7: expected 2"):
        str_table("a\tb\nc\n", "f", 2, first_line=6)
    path = tmp_path / "bad.txt"
    path.write_bytes(b"ok\nstill ok\nbad \xff byte\n")
    with pytest.raises(DataFormatError, match=r"bad\.txt:3: not valid UTF-8"):
        read_text(path)


def test_fuzzed_tables_never_crash(shared):
    import random
    lines = (shared / "tu/MUTAG/MUTAG_A.txt").read_bytes().split(b"\n")[:50]
    rng = random.Random(99)
    alphabet = b"0123456789,-+. \t\r\nxe\xff"
    errors = 0
    for _ in range(3000):
        body = bytearray(b"\n".join(rng.sample(lines, 5)))
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(len(body) + 1)
            body[pos:pos + rng.randint(0, 2)] = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 3)))
        data = bytes(body)
        for parse in (lambda d: int_table(d, "A.txt", 2), lambda d: str_table(d.decode("latin1"), "T.txt", 2, ",")):
            try:
                out = parse(data)
            except DataFormatError as e:
                errors += 1
                assert 1 <= e.line <= data.count(b"\n") + 1
                assert str(e).startswith(("A.txt", "T.txt"))
            else:
                assert len(out) <= data.count(b"\n") + 1
    assert errors > 1000
