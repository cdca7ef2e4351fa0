"""MUTAG, BGS and AM (R-GCN's RDF entity classification sets) on small synthetic files written in R-GCN's
layout (``rgcn_entities/<NAME>/<name>_stripped.nt.gz``, ``trainingSet.tsv``, ``testSet.tsv`` with each set's
own columns): every triple an edge between the right typed nodes, node types by each set's naming rule
(re-derived here with plain string operations), labels and masks from the split files; a graph file that
still holds a label predicate, a split row naming no entity, and missing files each raise naming what is
wrong. The real files are not in the offline data copy; AIFB's real file is covered by test_data_rdf.py."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import nodeweave as nw
from nodeweave.data import (AMDataset, BGSDataset, ChecksumUnknownError, DataFormatError, DownloadError,
                            MUTAGDataset)

from test_data_support import offline  # noqa: F401

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
XSD_DOUBLE = "http://www.w3.org/2001/XMLSchema#double"

CARC = "http://dl-learner.org/carcinogenesis#"
BGS = "http://data.bgs.ac.uk/"
AM = "http://purl.org/collections/nl/am/"


def _lit(text: str) -> str:
    return '"' + text + '"'


def _term(x: str) -> str:
    """N-Triples form of a test term: IRIs are given bare, literals already quoted, blank nodes as _:x."""
    return x if x.startswith(('"', "_:")) else f"<{x}>"


# ----------------------------------------------------------------------------- the three synthetic sets


def mutag_set():
    compounds = [f"d{i}" for i in (1, 2, 3, 4, 5, 6)] + ["d23_2", "d208_1"]
    triples = []
    for c in compounds:
        triples.append((CARC + c, RDF, CARC + "Compound"))
        for j in (1, 2):
            atom = f"{c}_{j}" if "_" not in c else f"{c}{j}"
            triples += [(CARC + c, CARC + "hasAtom", CARC + atom), (CARC + atom, RDF, CARC + "Carbon-22"),
                        (CARC + atom, CARC + "charge", f'"-0.1{j}"^^<{XSD_DOUBLE}>')]
        bond = "bond" + c[1:].replace("_", "")
        triples += [(CARC + c, CARC + "hasBond", CARC + bond), (CARC + bond, RDF, CARC + "Bond-7")]
    triples += [(CARC + "Carbon-22", SUBCLASS, CARC + "Carbon"), (CARC + "Carbon", SUBCLASS, CARC + "Atom"),
                ("_:n1", CARC + "note", _lit("a blank node"))]

    def kind(iri: str) -> str:
        if not iri.startswith(CARC):
            return "_Resource"
        local = iri[len(CARC):]
        if local[:1] == "d" and local[1:2].isdigit():
            return "d"
        if local[:4] == "bond" and local[4:5].isdigit():
            return "bond"
        return "_Resource"

    header = ["bond", "id", "label_mutagenic"]
    rows = {"train": [(CARC + c, f"{i}.0", lab) for i, (c, lab) in
                      enumerate(zip(compounds[:6], ["1.0", "0.0", "0.0", "1.0", "1.0", "0.0"]))],
            "test": [(CARC + c, f"{i + 6}.0", lab) for i, (c, lab) in enumerate(zip(compounds[6:], ["1.0", "0.0"]))]}
    return dict(cls=MUTAGDataset, folder="MUTAG", nt="mutag_stripped.nt.gz", triples=triples, kind=kind,
                header=header, entity_col=0, label_col=2, rows=rows, category="d",
                leak=(CARC + "d1", CARC + "isMutagenic", _lit("true")))


def bgs_set():
    units = ["EMSG", "BISG", "DSG", "CBAY", "LHGR", "SDVY"]
    triples = []
    for u in units:
        unit = BGS + "id/Lexicon/NamedRockUnit/" + u
        triples += [(unit, BGS + "ref/Lexicon/hasRockUnitRank", BGS + "id/Lexicon/RockUnitRank/FM"),
                    (unit, BGS + "ref/Lexicon/hasTheme", BGS + "id/Lexicon/Theme/SUPERFICIAL"),
                    (unit, "http://www.w3.org/2004/02/skos/core#prefLabel", _lit(u.lower() + " unit")),
                    (unit, BGS + "ref/Lexicon/hasCurrentStatus", BGS + "ref/CurrentStatus/CURRENT"),
                    (unit, "http://example.org/v0.1/has.part", BGS + "id/EarthMaterialClass/RockName/SDST")]
    triples += [(BGS + "id/Lexicon/RockUnitRank/FM", RDF, "http://www.w3.org/2004/02/skos/core#Concept")]

    def kind(iri: str) -> str:
        if not iri.startswith(BGS):
            return "_Resource"
        parts = iri[len(BGS):].split("/")  # <ref or id>/<Major>/<Sub>/<instance>
        return f"{parts[1]}/{parts[2]}" if len(parts) == 4 and all(parts) else "_Resource"

    lith = BGS + "id/Lexicon/LithogeneticType/"
    header = ["id", "rock", "label_lithogenesis"]
    rows = {"train": [(f"{i}.0", BGS + "id/Lexicon/NamedRockUnit/" + u, lith + lab) for i, (u, lab) in
                      enumerate(zip(units[:4], ["FLUV", "GLACI", "FLUV", "FLUV"]))],
            "test": [(f"{i + 4}.0", BGS + "id/Lexicon/NamedRockUnit/" + u, lith + lab) for i, (u, lab) in
                     enumerate(zip(units[4:], ["GLACI", "FLUV"]))]}
    return dict(cls=BGSDataset, folder="BGS", nt="bgs_stripped.nt.gz", triples=triples, kind=kind,
                header=header, entity_col=1, label_col=2, rows=rows, category="Lexicon/NamedRockUnit",
                leak=(BGS + "id/Lexicon/NamedRockUnit/EMSG", BGS + "ref/Lexicon/hasLithogenesis", lith + "FLUV"))


def am_set():
    proxies = [f"proxy-{i}" for i in (11, 12, 13, 14, 15, 16, 17)]
    triples = []
    for i, p in enumerate(proxies):
        triples += [(AM + p, AM + "proxyFor", AM + f"aggregation-{i}"),
                    (AM + f"aggregation-{i}", AM + "maker", AM + f"people-{i % 3}"),
                    (AM + p, "http://purl.org/dc/elements/1.1/title", _lit(f"object {i}")),
                    (AM + p, AM + "acquisitionMethod", f"_:m{i % 2}")]
    triples += [(AM + "people-0", RDF, AM + "Person"), ("_:m0", LABEL, _lit("purchase"))]

    def kind(iri: str) -> str:
        if not iri.startswith(AM):
            return "_Resource"
        local = iri[len(AM):]
        bits = local.split("-")
        return bits[0] if "/" not in local and len(bits) == 2 and all(bits) else "_Resource"

    cat = AM + "t-"
    header = ["proxy", "id", "label_cateogory"]
    rows = {"train": [(AM + p, f"{i}.0", cat + lab) for i, (p, lab) in
                      enumerate(zip(proxies[:5], ["22503", "15459", "22503", "5504", "15459"]))],
            "test": [(AM + p, f"{i + 5}.0", cat + lab) for i, (p, lab) in
                     enumerate(zip(proxies[5:], ["5504", "22503"]))]}
    return dict(cls=AMDataset, folder="AM", nt="am_stripped.nt.gz", triples=triples, kind=kind, header=header,
                entity_col=0, label_col=2, rows=rows, category="proxy",
                leak=(AM + "proxy-11", AM + "objectCategory", cat + "22503"))


SETS = {"MUTAG": mutag_set, "BGS": bgs_set, "AM": am_set}


def write_set(root: Path, spec: dict, extra_triples=(), crlf: bool = False) -> Path:
    folder = root / "rgcn_entities" / spec["folder"]
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"{_term(s)} <{p}> {_term(o)} .\n" for s, p, o in list(spec["triples"]) + list(extra_triples)]
    with gzip.open(folder / spec["nt"], "wt", encoding="utf-8") as fh:
        fh.write("".join(lines))
    end = "\r\n" if crlf else "\n"
    for split, name in (("train", "trainingSet.tsv"), ("test", "testSet.tsv")):
        body = [spec["header"]] + [list(r) for r in spec["rows"][split]]
        (folder / name).write_bytes(end.join("\t".join(r) for r in body).encode() + end.encode())
    return folder


def node_kind(spec: dict, term: str) -> str:
    if term.startswith('"'):
        return "_Literal"
    if term.startswith("_:"):
        return "_BlankNode"
    return spec["kind"](term)


# ----------------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("name", sorted(SETS))
def test_graph_types_labels_and_masks(name, tmp_path, backend_name):
    spec = SETS[name]()
    write_set(tmp_path, spec, crlf=(name == "MUTAG"))  # relational-gcn serves some split files with CRLF
    ds = spec["cls"](raw_dir=tmp_path, download=False)
    g = ds[0]
    triples = spec["triples"]
    terms = {x for s, _, o in triples for x in (s, o)}
    preds = sorted({p for _, p, _ in triples})
    assert ds.predict_category == spec["category"] and ds.name == spec["folder"]
    assert (g.num_nodes(), g.num_edges(), ds.num_rels) == (len(terms), 2 * len(triples), len(preds))
    assert ds.relations == preds
    assert all("." not in n for n in ds.relation_names)  # torch.nn.ModuleDict keys, for HeteroGraphConv
    kinds = Counter(node_kind(spec, t) for t in terms)
    assert {nt: g.num_nodes(nt) for nt in g.ntypes} == dict(kinds)

    # every forward edge type holds exactly the triples of its predicate between nodes of its types
    seen = Counter()
    for st, et, dt in g.canonical_etypes:
        if et.startswith("rev-"):
            continue
        r = ds.relation_names.index(et)
        s, d = (t.numpy() if hasattr(t, "numpy") else t for t in g.edges(etype=(st, et, dt)))
        s, d = np.asarray(s), np.asarray(d)
        got = Counter((ds.node_terms[st][a], ds.node_terms[dt][b]) for a, b in zip(s.tolist(), d.tolist()))
        want = Counter((_term(x), _term(y)) for x, p, y in triples
                       if p == preds[r] and node_kind(spec, x) == st and node_kind(spec, y) == dt)
        assert got == want
        rs, rd = (np.asarray(t.numpy()) for t in g.edges(etype=(dt, "rev-" + et, st)))
        np.testing.assert_array_equal(rs, d)
        np.testing.assert_array_equal(rd, s)
        assert set(np.asarray(g.edges[(st, et, dt)].data["rel_type"].numpy()).tolist()) == {r}
        assert set(np.asarray(g.edges[(dt, "rev-" + et, st)].data["rel_type"].numpy()).tolist()) == {r + len(preds)}
        seen[et] += len(s)
    assert sum(seen.values()) == len(triples)

    # labels and masks, class ids in sorted label order
    cat = spec["category"]
    rows = spec["rows"]
    classes = sorted({r[spec["label_col"]] for split in rows.values() for r in split})
    assert ds.class_names == classes and ds.num_classes == len(classes)
    data = g.nodes[cat].data
    label, train, test = (np.asarray(data[k].numpy()) for k in ("label", "train_mask", "test_mask"))
    np.testing.assert_array_equal(np.asarray(data["labels"].numpy()), label)  # DGL's older name, same values
    assert label.dtype == np.int64 and train.dtype == np.bool_
    position = {t: i for i, t in enumerate(ds.node_terms[cat])}
    want_label = np.full(g.num_nodes(cat), -1)
    for split, mask in (("train", train), ("test", test)):
        idx = [position[_term(r[spec["entity_col"]])] for r in rows[split]]
        assert sorted(np.flatnonzero(mask).tolist()) == sorted(idx)
        want_label[idx] = [classes.index(r[spec["label_col"]]) for r in rows[split]]
    np.testing.assert_array_equal(label, want_label)

    h = ds.to_homogeneous()
    assert (h.num_nodes(), h.num_edges()) == (g.num_nodes(), g.num_edges())
    assert int(np.asarray(h.ndata["train_mask"].numpy()).sum()) == len(rows["train"])


@pytest.mark.parametrize("name", sorted(SETS))
def test_without_reverse_edges(name, tmp_path):
    spec = SETS[name]()
    write_set(tmp_path, spec)
    g = spec["cls"](raw_dir=tmp_path, download=False, reverse_edge=False)[0]
    assert g.num_edges() == len(spec["triples"]) and not any(et.startswith("rev-") for et in g.etypes)


def test_an_rgcn_script_runs_on_mutag(tmp_path):
    """DGL's R-GCN entity example, in miniature: labels popped under DGL's name, a norm per relation,
    the homogeneous graph, the category's nodes found by type."""
    torch = pytest.importorskip("torch")
    nw.set_backend("pytorch")
    spec = mutag_set()
    write_set(tmp_path, spec)
    data = MUTAGDataset(raw_dir=tmp_path, download=False)
    g = data[0]
    category = data.predict_category
    labels = g.nodes[category].data.pop("labels")
    assert isinstance(labels, torch.Tensor)
    for ct in g.canonical_etypes:
        g.edges[ct].data["norm"] = nw.norm_by_dst(g, ct).unsqueeze(1)
    h = nw.to_homogeneous(g, edata=["norm"])
    target = torch.arange(h.num_nodes())[h.ndata[nw.NTYPE] == g.ntypes.index(category)]
    assert len(target) == g.num_nodes(category) and tuple(h.edata["norm"].shape) == (h.num_edges(), 1)
    conv = nw.nn.pytorch.RelGraphConv(4, 2, len(g.canonical_etypes))
    out = conv(h, torch.ones(h.num_nodes(), 4), h.edata[nw.ETYPE], h.edata["norm"])
    assert tuple(out[target].shape) == (g.num_nodes(category), 2)


@pytest.mark.parametrize("name", sorted(SETS))
def test_a_label_predicate_in_the_graph_is_refused(name, tmp_path):
    spec = SETS[name]()
    write_set(tmp_path, spec, extra_triples=[spec["leak"]])
    with pytest.raises(DataFormatError, match=rf"{spec['nt']}: holds 1 triple\(s\) of <{spec['leak'][1]}>.*unstripped"):
        spec["cls"](raw_dir=tmp_path, download=False)


def test_split_rows_must_name_labelled_entities(tmp_path):
    spec = am_set()
    spec["rows"]["test"].append((AM + "aggregation-1", "9.0", AM + "t-5504"))  # not a proxy
    write_set(tmp_path, spec)
    with pytest.raises(DataFormatError, match=r"testSet\.tsv:4: proxy <.*aggregation-1> is not a proxy node"):
        AMDataset(raw_dir=tmp_path, download=False)
    spec = bgs_set()
    spec["rows"]["test"].append(spec["rows"]["train"][0])
    write_set(tmp_path, spec)
    with pytest.raises(DataFormatError, match=r"testSet\.tsv:4: rock <.*EMSG> is also in the train set"):
        BGSDataset(raw_dir=tmp_path, download=False)
    spec = mutag_set()
    spec["header"] = ["compound", "id", "label_mutagenic"]
    write_set(tmp_path, spec)
    with pytest.raises(DataFormatError, match=r"trainingSet\.tsv:1: header must name the columns 'bond' and "
                                              r"'label_mutagenic'"):
        MUTAGDataset(raw_dir=tmp_path, download=False)


EXPECTED = {
    "MUTAG": ("mutag_stripped.nt.gz", "https://www.dropbox.com/s/qy8j3p8eacvm4ir/mutag_stripped.nt.gz?dl=1",
              "relational-gcn/master/rgcn/data/mutag/trainingSet.tsv"),
    "BGS": ("bgs_stripped.nt.gz", "https://www.dropbox.com/s/uqi0k9jd56j02gh/bgs_stripped.nt.gz?dl=1",
            "relational-gcn/master/rgcn/data/bgs/trainingSet(lith).tsv"),
    "AM": ("am_stripped.nt.gz", "https://www.dropbox.com/s/htisydfgwxmrx65/am_stripped.nt.gz?dl=1",
           "relational-gcn/master/rgcn/data/am/trainingSet.tsv"),
}


@pytest.mark.parametrize("name", sorted(SETS))
def test_missing_files_are_named_with_their_directory_and_source(name, tmp_path, offline):  # noqa: F811
    cls, (nt, nt_url, train_src) = SETS[name]()["cls"], EXPECTED[name]
    folder = tmp_path / "rgcn_entities" / name
    expected = [str(folder / f) for f in (nt, "trainingSet.tsv", "testSet.tsv")]
    with pytest.raises(FileNotFoundError) as info:  # download=False
        cls(raw_dir=tmp_path, download=False)
    assert all(p in str(info.value) for p in expected) and nt_url in str(info.value)
    with pytest.raises(ChecksumUnknownError) as info:  # no checksum is recorded: refused before any download
        cls(raw_dir=tmp_path)
    assert all(p in str(info.value) for p in expected) and train_src in str(info.value)
    assert "verify=False" in str(info.value) and offline == []
    with pytest.raises(DownloadError) as info:  # allowed, but the machine is offline
        cls(raw_dir=tmp_path, verify=False, progress=False)
    msg = str(info.value)
    assert f"{cls.__name__}: downloading" in msg and f"still missing under {tmp_path}" in msg
    assert all(p in msg for p in expected) and offline
    assert not folder.exists() or not any(folder.iterdir())  # no partial file left behind


def test_one_generic_loader_declared_per_dataset():
    from nodeweave.data import AIFBDataset
    from nodeweave.data.rdf_entities import RDFEntityDataset

    for cls, cat in ((AIFBDataset, "Personen"), (MUTAGDataset, "d"), (BGSDataset, "Lexicon/NamedRockUnit"),
                     (AMDataset, "proxy")):
        assert issubclass(cls, RDFEntityDataset) and cls.predict_category == cat
        assert [f.path.rsplit("/", 1)[-1] for f in cls.files][1:] == ["trainingSet.tsv", "testSet.tsv"]
        assert cls.files[0].path == f"rgcn_entities/{cls.name}/{cls.name.lower()}_stripped.nt.gz"
