"""Knowledge-graph loaders: published counts, ids against a csv-module reference, the DGL-style graph
view, gzip training files, and errors naming file and line."""

from __future__ import annotations

import csv
import gzip
import shutil

import numpy as np
import pytest

from nodeweave.data import (DataFormatError, FB15k237Dataset, FB15kDataset, KinshipDataset,
                            KnowledgeGraphDataset, NationsDataset, UMLSDataset, WN18Dataset, WN18RRDataset)

from test_data_support import offline, shared  # noqa: F401

# class: entities, relations, train, valid, test (README)
COUNTS = {
    FB15k237Dataset: (14541, 237, 272115, 17535, 20466),
    WN18RRDataset: (40943, 11, 86835, 3034, 3134),
    WN18Dataset: (40943, 18, 141442, 5000, 5000),
    KinshipDataset: (104, 25, 8544, 1068, 1074),
    NationsDataset: (14, 55, 1592, 199, 201),
    UMLSDataset: (135, 46, 5216, 652, 661),
}


@pytest.fixture(scope="module")
def fb15k237():
    from test_data_support import shared_data_dir
    return FB15k237Dataset(raw_dir=shared_data_dir(), download=False)


@pytest.mark.parametrize("cls", list(COUNTS), ids=lambda c: c.__name__)
def test_published_counts(shared, cls, fb15k237):
    ds = fb15k237 if cls is FB15k237Dataset else cls(raw_dir=shared, download=False)
    n, r, tr, va, te = COUNTS[cls]
    assert (ds.num_nodes, ds.num_rels) == (n, r) == (len(ds.entity2id), len(ds.relation2id))
    assert [len(ds.train), len(ds.valid), len(ds.test)] == [tr, va, te]
    for split in (ds.train, ds.valid, ds.test):
        assert split.dtype == np.int64 and split.shape[1] == 3
        assert split[:, [0, 2]].min() >= 0 and split[:, [0, 2]].max() < n
        assert split[:, 1].min() >= 0 and split[:, 1].max() < r
    ds.verify_files()


@pytest.mark.parametrize("cls, unseen", [(FB15k237Dataset, (9, 28)), (WN18RRDataset, (210, 210))],
                         ids=["FB15k-237", "WN18RR"])
def test_unseen_entities_match_readme(shared, cls, unseen, fb15k237):
    ds = fb15k237 if cls is FB15k237Dataset else cls(raw_dir=shared, download=False)
    seen = set(ds.train[:, 0]) | set(ds.train[:, 2])
    got = tuple(int(sum(h not in seen or t not in seen for h, _, t in s)) for s in (ds.valid, ds.test))
    assert got == unseen


def test_ids_match_csv_reference(shared, fb15k237):
    folder = shared / "kg/FB15k-237"
    ent = {row[1]: int(row[0]) for row in csv.reader(open(folder / "entities.dict"), delimiter="\t")}
    rel = {row[1]: int(row[0]) for row in csv.reader(open(folder / "relations.dict"), delimiter="\t")}
    for name, got in (("valid.txt", fb15k237.valid), ("test.txt", fb15k237.test)):
        rows = list(csv.reader(open(folder / name), delimiter="\t", quoting=csv.QUOTE_NONE))
        np.testing.assert_array_equal(got, [[ent[h], rel[r], ent[t]] for h, r, t in rows])
    with gzip.open(folder / "train.txt.gz", "rt") as fh:
        rows = list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    np.testing.assert_array_equal(fb15k237.train, [[ent[h], rel[r], ent[t]] for h, r, t in rows])
    assert fb15k237.entity2id == ent and fb15k237.relation2id == rel


def test_small_sets_number_sorted_names(shared):
    ds = UMLSDataset(raw_dir=shared, download=False)
    names = sorted(ds.entity2id)
    assert [ds.entity2id[k] for k in names] == list(range(len(names)))
    row = (shared / "kg/small/umls/train.txt").read_text().split("\n")[0].split("\t")
    assert ds.train[0].tolist() == [ds.entity2id[row[0]], ds.relation2id[row[1]], ds.entity2id[row[2]]]


def test_graph_view_with_reverse_edges(shared):
    ds = KinshipDataset(raw_dir=shared, download=False)
    g = ds[0]
    m = len(ds.train) + len(ds.valid) + len(ds.test)
    assert (g.num_nodes(), g.num_edges()) == (ds.num_nodes, 2 * m)
    src, dst = (t.numpy() for t in g.edges())
    etype = g.edata["etype"].numpy()
    trip = np.concatenate([ds.train, ds.valid, ds.test])
    np.testing.assert_array_equal(src[:m], trip[:, 0])
    np.testing.assert_array_equal(dst[:m], trip[:, 2])
    np.testing.assert_array_equal(etype[:m], trip[:, 1])
    np.testing.assert_array_equal(src[m:], trip[:, 2])  # reverse edges, relation + num_rels
    np.testing.assert_array_equal(etype[m:], trip[:, 1] + ds.num_rels)
    sizes = [len(ds.train), len(ds.valid), len(ds.test)]
    for k, size in zip(("train", "val", "test"), sizes):
        mask, edge_mask = g.edata[f"{k}_mask"].numpy(), g.edata[f"{k}_edge_mask"].numpy()
        assert int(mask.sum()) == size and not mask[m:].any()
        assert int(edge_mask.sum()) == 2 * size
    assert g.edata["train_mask"].numpy()[:len(ds.train)].all()
    assert ds[0] is g  # built once


def test_graph_view_without_reverse(shared):
    ds = NationsDataset(raw_dir=shared, download=False, reverse=False)
    g = ds[0]
    assert g.num_edges() == 1592 + 199 + 201
    assert int(g.edata["etype"].numpy().max()) < ds.num_rels
    np.testing.assert_array_equal(g.edata["val_mask"].numpy(), g.edata["val_edge_mask"].numpy())


def _nations_copy(shared, tmp_path):
    root = tmp_path / "data"
    (root / "kg/small/nations").mkdir(parents=True)
    for s in ("train", "valid", "test"):
        shutil.copyfile(shared / f"kg/small/nations/{s}.txt", root / f"kg/small/nations/{s}.txt")
    return root


def test_gzip_training_file(shared, tmp_path):
    root = _nations_copy(shared, tmp_path)
    plain = root / "kg/small/nations/train.txt"
    (root / "kg/small/nations/train.txt.gz").write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    ds = NationsDataset(raw_dir=root, download=False)
    np.testing.assert_array_equal(ds.train, NationsDataset(raw_dir=shared, download=False).train)
    # a truncated gzip names the file
    gz = root / "kg/small/nations/train.txt.gz"
    gz.write_bytes(gz.read_bytes()[:200])
    with pytest.raises(DataFormatError, match=r"train\.txt\.gz: truncated or corrupt gzip"):
        NationsDataset(raw_dir=root, download=False)


@pytest.mark.parametrize("line, msg", [
    ("usa\tintergovorgs", r"valid\.txt:5: expected 3 '\\t'-separated fields, got 2"),
    ("usa\tintergovorgs\tuk\textra", r"valid\.txt:5: expected 3 '\\t'-separated fields, got 4"),
    ("usa\t\tuk", r"valid\.txt:5: empty field"),
])
def test_malformed_triple_line(shared, tmp_path, line, msg):
    root = _nations_copy(shared, tmp_path)
    path = root / "kg/small/nations/valid.txt"
    lines = path.read_text().split("\n")
    lines[4] = line
    path.write_text("\n".join(lines))
    with pytest.raises(DataFormatError, match=msg):
        NationsDataset(raw_dir=root, download=False)


def test_unknown_entity_and_bad_dictionary(shared, tmp_path):
    root = tmp_path / "data"
    folder = root / "kg/WN18RR"
    folder.mkdir(parents=True)
    for fn in ("entities.dict", "relations.dict", "train.txt", "valid.txt", "test.txt"):
        shutil.copyfile(shared / "kg/WN18RR" / fn, folder / fn)
    lines = (folder / "test.txt").read_text().split("\n")
    lines[2] = "99999999\t_hypernym\t00001740"
    (folder / "test.txt").write_text("\n".join(lines))
    with pytest.raises(DataFormatError, match=r"test\.txt:3: entity '99999999' is not in the dictionary"):
        WN18RRDataset(raw_dir=root, download=False)
    shutil.copyfile(shared / "kg/WN18RR/test.txt", folder / "test.txt")
    (folder / "relations.dict").write_text("0\t_hypernym\n0\t_also_see\n")
    with pytest.raises(DataFormatError, match=r"relations\.dict: ids must be 0\.\.1, each once"):
        WN18RRDataset(raw_dir=root, download=False)
    (folder / "relations.dict").write_text("zero\t_hypernym\n")
    with pytest.raises(DataFormatError, match=r"relations\.dict:1: id 'zero' is not a non-negative integer"):
        WN18RRDataset(raw_dir=root, download=False)


def test_fb15k_absent_offline(tmp_path, offline):
    with pytest.raises(FileNotFoundError, match=r"kg/FB15k/train\.txt.*KnowledgeGraphEmbedding/master/data/FB15k/"):
        FB15kDataset(raw_dir=tmp_path, download=False)
    assert offline == []


def test_bad_name():
    with pytest.raises(ValueError, match="must be one of"):
        KnowledgeGraphDataset("fb15k237")
