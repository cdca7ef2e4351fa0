"""AIFB (R-GCN entity classification) and the N-Triples parser: published counts, term semantics,
every malformed line a DataFormatError naming file, line and column (fuzzed)."""

from __future__ import annotations

import gzip
import random
import re
import shutil

import numpy as np
import pytest

from nodeweave.data import AIFBDataset, DataFormatError
from nodeweave.data.ntriples import IRI, BlankNode, Literal, parse_ntriples, read_ntriples

from test_data_support import shared  # noqa: F401

NT = "rgcn_entities/AIFB/aifb_stripped.nt.gz"


@pytest.fixture(scope="module")
def aifb():
    from test_data_support import shared_data_dir
    return AIFBDataset(raw_dir=shared_data_dir(), download=False)


def test_published_counts(aifb):
    g, cat = aifb[0], aifb.predict_category
    assert (cat, aifb.num_classes, aifb.num_rels) == ("Personen", 4, 45)
    assert g.num_nodes() == 8285 and g.num_edges() == 2 * 29043
    data = g.nodes[cat].data
    train, test, label = data["train_mask"].numpy(), data["test_mask"].numpy(), data["label"].numpy()
    assert (int(train.sum()), int(test.sum())) == (140, 36) and not (train & test).any()
    assert label.dtype == np.int64 and (label[train | test] >= 0).all() and (label[~(train | test)] == -1).all()
    assert sorted(np.bincount(label[train | test]).tolist()) == [15, 28, 60, 73]
    assert len(aifb.class_names) == 4 and all("Forschungsgruppen" in c for c in aifb.class_names)
    aifb.verify_files()


def test_against_a_naive_reference(shared, aifb):
    # Independent count: this file's lines are simple enough for a regex split.
    nodes, preds, n = set(), set(), 0
    line_re = re.compile(r'^(\S+) (<[^>]*>) (.*) \.$')
    with gzip.open(shared / NT, "rt", encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            m = line_re.match(line.rstrip("\n"))
            assert m, line
            nodes.update((m.group(1), m.group(3)))
            preds.add(m.group(2))
            n += 1
    assert (len(nodes), len(preds), n) == (8285, 45, 29043)
    assert sorted(f"<{r}>" for r in aifb.relations) == sorted(preds)


def test_node_types_and_relations(aifb):
    g = aifb[0]
    assert set(g.ntypes) == {"Forschungsgebiete", "Forschungsgruppen", "Kooperationen", "Personen", "Projekte",
                             "Publikationen", "WBS", "_BlankNode", "_Literal", "_Resource"}
    assert g.num_nodes("_Literal") == 5450 and g.num_nodes("_BlankNode") == 152
    assert all(t.startswith("<http://www.aifb.uni-karlsruhe.de/Personen/") for t in aifb.node_terms["Personen"])
    names = aifb.relation_names
    assert len(set(names)) == 45 and {"author", "rdf_type", "ontology_type", "merge_type"} <= set(names)
    for st, et, dt in g.canonical_etypes:
        rel = g.edges[(st, et, dt)].data["rel_type"].numpy()
        base = et[4:] if et.startswith("rev-") else et
        expect = names.index(base) + (45 if et.startswith("rev-") else 0)
        assert (rel == expect).all()
    # every forward edge type has its reverse with the edges swapped
    fwd = ("Publikationen", "author", "Personen")
    s, d = (t.numpy() for t in g.edges(etype=fwd))
    rs, rd = (t.numpy() for t in g.edges(etype=("Personen", "rev-author", "Publikationen")))
    np.testing.assert_array_equal(s, rd)
    np.testing.assert_array_equal(d, rs)


def test_homogeneous_form(aifb):
    h = aifb.to_homogeneous()
    assert (h.num_nodes(), h.num_edges()) == (8285, 58086)
    rel = h.edata["rel_type"].numpy()
    assert sorted(np.unique(rel).tolist()) == list(range(90))
    assert int(h.ndata["train_mask"].numpy().sum()) == 140 and int(h.ndata["test_mask"].numpy().sum()) == 36
    lab = h.ndata["label"].numpy()
    assert int((lab >= 0).sum()) == 176


def test_without_reverse(shared):
    g = AIFBDataset(raw_dir=shared, download=False, insert_reverse=False)[0]
    assert g.num_edges() == 29043 and not any(et.startswith("rev-") for et in g.etypes)


def test_split_file_errors(shared, tmp_path):
    root = tmp_path / "data"
    for f in AIFBDataset.files:
        (root / f.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shared / f.path, root / f.path)
    test_file = root / "rgcn_entities/AIFB/testSet.tsv"
    lines = test_file.read_text().split("\n")
    lines[3] = "http://www.aifb.uni-karlsruhe.de/Personen/viewPersonOWL/id999999instance\t9.0\tx"
    test_file.write_text("\n".join(lines))
    with pytest.raises(DataFormatError, match=r"testSet\.tsv:4: person <.*id999999instance> is not a Personen node"):
        AIFBDataset(raw_dir=root, download=False)
    train_line = (root / "rgcn_entities/AIFB/trainingSet.tsv").read_text().split("\n")[1]
    lines[3] = train_line
    test_file.write_text("\n".join(lines))
    with pytest.raises(DataFormatError, match=r"testSet\.tsv:4: person <.*> is also in the train set"):
        AIFBDataset(raw_dir=root, download=False)
    test_file.write_text("who\tid\tlabel\n")
    with pytest.raises(DataFormatError, match=r"testSet\.tsv:1: header must name"):
        AIFBDataset(raw_dir=root, download=False)


# ----------------------------------------------------------------------------------------- parser


def test_terms_and_escapes():
    nt = (b'<http://a.org/s> <http://a.org/p> "tab\\there \\"q\\" \\u00e9\\U0001F600" .\n'
          b'# a comment\n'
          b'\n'
          b'_:b0 <http://a.org/p> "5"^^<http://www.w3.org/2001/XMLSchema#integer> .  # trailing comment\r\n'
          b'<http://a.org/s> <http://a.org/p> "x"@EN-gb .\n'
          b'<http://a.org/s> <http://a.org/p> "x"^^<http://www.w3.org/2001/XMLSchema#string> .\n'
          b'<http://a.org/s><http://a.org/p><http://a.org/\\u00e9>.\n')
    t = parse_ntriples(nt, "t.nt")
    assert len(t) == 5
    assert t[0] == (IRI("http://a.org/s"), IRI("http://a.org/p"), Literal('tab\there "q" é\U0001F600'))
    assert t[1][0] == BlankNode("b0") and t[1][2] == Literal("5", datatype="http://www.w3.org/2001/XMLSchema#integer")
    assert t[2][2] == Literal("x", language="en-gb")
    assert t[3][2] == Literal("x")  # xsd:string is the simple literal
    assert t[4][2] == IRI("http://a.org/é")
    assert IRI("x") != BlankNode("x") and Literal("x") != IRI("x")
    assert str(t[0][2]) == '"tab\there \\"q\\" é\U0001F600"'


MALFORMED = [
    (b'<http://a.org/s> <http://a.org/p> <http://a.org/o>', "expected '.' to end the triple", 51),
    (b'<http://a.org/s> <http://a.org/p> "open .', "expected an object", 35),
    (b'"lit" <http://a.org/p> <http://a.org/o> .', "expected a subject", 1),
    (b'<http://a.org/s> _:b <http://a.org/o> .', "expected a predicate IRI", 18),
    (b'<http://a.org/s> <http://a.org/p> "x"@ .', "malformed language tag", 38),
    (b'<http://a.org/s> <http://a.org/p> "x"^^"y" .', "datatype IRI", 40),
    (b'<http://a.org/s> <http://a.org/p> "bad \\q escape" .', "expected an object", 35),
    (b'<http://a.org/s> <http://a.org/p> "\\uD800" .', "not a valid Unicode code point", 36),
    (b'<relative> <http://a.org/p> <http://a.org/o> .', "not an absolute IRI", 1),
    (b'<http://a.org/a b> <http://a.org/p> <http://a.org/o> .', "expected a subject", 1),
    (b'<http://a.org/s> <http://a.org/p> <http://a.org/o> . extra', "unexpected text after the final '.'", 54),
    (b'<http://a.org/s> <http://a.org/p> _:-x .', "malformed blank node label", 35),
    (b'<http://a.org/s> <http://a.org/p> "caf\xc3" .', "not valid UTF-8", 39),
    (b'<http://a.org/s> <http://a.org/p> "x"^^<http://a.org/\\u12> .', "datatype IRI", 40),
]


@pytest.mark.parametrize("line, msg, col", MALFORMED)
def test_malformed_lines_name_file_line_and_column(line, msg, col):
    data = b'<http://a.org/s> <http://a.org/p> "ok" .\n\n' + line + b"\n"
    with pytest.raises(DataFormatError) as info:
        parse_ntriples(data, "graph.nt")
    e = info.value
    assert (e.path, e.line, e.column) == ("graph.nt", 3, col), str(e)
    assert str(e).startswith(f"graph.nt:3:{col}: ") and msg in str(e)


def test_fuzzed_lines_never_crash(shared):
    with gzip.open(shared / NT, "rb") as fh:
        lines = fh.read().split(b"\n")[:400]
    rng = random.Random(1234)
    alphabet = b'<>"\\_:.@^# \t\r\x00\xff\xc3abcu0123456789'
    errors = 0
    for trial in range(10000):
        line = bytearray(rng.choice(lines)) if trial % 10 else bytearray(rng.randbytes(rng.randint(0, 60)))
        for _ in range(rng.randint(1, 3)):
            op = rng.randrange(4)
            pos = rng.randrange(len(line) + 1)
            if op == 0 and line:
                del line[min(pos, len(line) - 1)]
            elif op == 1:
                line.insert(pos, rng.choice(alphabet))
            elif op == 2:
                line = line[:pos]
            else:
                line[pos:pos] = bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))
        data = bytes(line)
        try:
            parse_ntriples(data, "fuzz.nt")
        except DataFormatError as e:
            errors += 1
            parts = data.split(b"\n")  # random bytes may hold newlines: the first bad line is reported
            assert 1 <= e.line <= len(parts) and str(e).startswith(f"fuzz.nt:{e.line}:{e.column}: ")
            parse_ntriples(b"\n".join(parts[:e.line - 1]), "ok.nt")
            with pytest.raises(DataFormatError):
                parse_ntriples(parts[e.line - 1], "alone.nt")
    assert errors > 5000  # most mutations are malformed; every one was reported, none crashed


def test_read_ntriples_names_file_and_line(tmp_path):
    path = tmp_path / "g.nt.gz"
    path.write_bytes(gzip.compress(b'<http://a.org/s> <http://a.org/p> "x" .\n<http://a.org/s> oops .\n'))
    with pytest.raises(DataFormatError, match=r"g\.nt\.gz:2:18: expected a predicate IRI"):
        read_ntriples(path)
    path.write_bytes(gzip.compress(b'<http://a.org/s> <http://a.org/p> "x" .\n' * 50)[:40])
    with pytest.raises(DataFormatError, match=r"g\.nt\.gz: truncated or corrupt gzip"):
        read_ntriples(path)
    with pytest.raises(TypeError):
        parse_ntriples("text, not bytes")
