"""AIFB: entity classification on an RDF graph, the benchmark of R-GCN (Schlichtkrull et al., ESWC 2018).

Files ``rgcn_entities/AIFB/``: ``aifb_stripped.nt.gz`` (N-Triples, with the ``affiliation`` /
``employs`` triples that would leak the labels removed) and ``trainingSet.tsv`` / ``testSet.tsv``
(columns ``person``, ``id``, ``label_affiliation``). All 29043 triples are kept: 8285 nodes (every
distinct subject and object, literals included), 45 relations, 176 labelled people in 4 research
groups, 140 for training and 36 for testing: the counts of the R-GCN paper.

**Node types.** ``ds[0]`` is a heterograph. An IRI of an AIFB instance,
``http://www.aifb.uni-karlsruhe.de/<Kind>/...``, gets node type ``<Kind>`` (``Personen``,
``Publikationen``, ``Forschungsgebiete``, ``Projekte``, ``Kooperationen``, ``Forschungsgruppen``,
``WBS``), the typing of DGL's ``AIFBDataset``; literals are ``_Literal`` (as in DGL), blank nodes
``_BlankNode`` and every other IRI (the SWRC ontology's classes and properties, OWL terms)
``_Resource``. DGL instead drops blank nodes, non-AIFB IRIs and the triples touching them, and reads a
different release (``aifb-hetero.zip``: 7262 nodes, 24405 triples); here nothing is dropped, so the
graph is exactly the one R-GCN was evaluated on.

**Relations.** Canonical edge types are ``(source type, relation, destination type)``, the relation
named by the predicate's local name (``author``, ``isAbout``; ``rdf_type``, ``rdfs_subClassOf``,
``owl_inverseOf`` for the W3C vocabularies; colliding local names take their namespace's last segment
as prefix, e.g. ``ontology_type`` and ``merge_type``). With ``insert_reverse=True`` (default, as in
DGL) every edge type gets a reverse type ``rev-<relation>``. Every edge carries ``edata['rel_type']``,
the relation id: ``0..44`` forward, ``45..89`` reverse (``id + num_rels``).

**R-GCN.** R-GCN treats the graph as homogeneous with one weight matrix per relation (and its
inverse). :meth:`AIFBDataset.to_homogeneous` returns that form: 8285 nodes, edges with
``edata['rel_type']``, and ``ndata['label']`` (-1 when unlabelled), ``train_mask``, ``test_mask`` on
all nodes; ``ndata['_TYPE']`` / ``ndata['_ID']`` map back to the heterograph (see
:func:`nodeweave.to_homogeneous`). A heterogeneous model (``HeteroGraphConv`` over ``ds[0]``) sees the
same relations split by node-type pair.

>>> from nodeweave.data import AIFBDataset
>>> ds = AIFBDataset()
>>> g, cat = ds[0], ds.predict_category
>>> cat, ds.num_classes, ds.num_rels, g.num_nodes(cat)
('Personen', 4, 45, 237)
>>> int(g.nodes[cat].data["train_mask"].numpy().sum()), int(g.nodes[cat].data["test_mask"].numpy().sum())
(140, 36)
>>> h = ds.to_homogeneous()
>>> h.num_nodes(), h.num_edges()
(8285, 58086)
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable

import numpy as np

from nodeweave.data.dataset import Dataset, _single_index, reverse_option, to_tensor
from nodeweave.data.download import RemoteFile
from nodeweave.data.errors import DataFormatError
from nodeweave.data.ntriples import IRI, BlankNode, Literal, Term, read_ntriples
from nodeweave.data.text_tables import read_text, str_table

__all__ = ["AIFBDataset", "relation_names"]

AIFB_PREFIX = "http://www.aifb.uni-karlsruhe.de/"
_RGCN = "https://raw.githubusercontent.com/tkipf/relational-gcn/master/rgcn/data/aifb/"
_KNOWN_VOCABULARIES = {
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#": "rdf",
    "http://www.w3.org/2000/01/rdf-schema#": "rdfs",
    "http://www.w3.org/2002/07/owl#": "owl",
    "http://www.w3.org/2001/XMLSchema#": "xsd",
}


def relation_names(iris: list[str]) -> list[str]:
    """Short, unique names for predicate IRIs (see the module docs).

    >>> from nodeweave.data.rdf import relation_names
    >>> relation_names(["http://ex.org/onto#author", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
    ...                 "http://a.org/x/type", "http://b.org/y#type"])
    ['author', 'rdf_type', 'x_type', 'y_type']
    """
    def split(iri: str) -> tuple[str, str]:
        cut = max(iri.rfind("#"), iri.rfind("/"))
        return iri[:cut], iri[cut + 1:]

    names = []
    for iri in iris:
        ns = next((ns for ns in _KNOWN_VOCABULARIES if iri.startswith(ns)), None)
        names.append(f"{_KNOWN_VOCABULARIES[ns]}_{iri[len(ns):]}" if ns else split(iri)[1] or iri)
    for name in set(names):
        clash = [i for i, n in enumerate(names) if n == name]
        if len(clash) > 1:
            for i in clash:
                ns, local = split(iris[i])
                names[i] = f"{re.split('[/#]', ns)[-1]}_{local}"
    if len(set(names)) != len(names):  # still ambiguous: fall back to full IRIs
        names = list(iris)
    return names


def node_type(term: Term) -> str:
    """The node type of an RDF term in :class:`AIFBDataset` (see the module docs)."""
    if isinstance(term, Literal):
        return "_Literal"
    if isinstance(term, BlankNode):
        return "_BlankNode"
    if term.value.startswith(AIFB_PREFIX):
        kind = term.value[len(AIFB_PREFIX):].split("/", 1)[0]
        if kind:
            return kind
    return "_Resource"


class AIFBDataset(Dataset):
    """AIFB entity classification (R-GCN's setup); see the module docs.

    Parameters
    ----------
    raw_dir, download, mirror, verify, progress, transform
        See :class:`~nodeweave.data.Dataset`.
    insert_reverse, reverse_edge : bool
        Add a ``rev-<relation>`` edge type per edge type (default True). ``reverse_edge`` is the
        same option under the name every dataset takes; give either.

    Attributes
    ----------
    predict_category : str
        ``'Personen'``, the node type with labels and masks.
    num_classes, num_rels : int
        4 research groups; 45 relations (reverse relations not counted).
    relations : list[str]
        Predicate IRI of each relation id; :attr:`relation_names` their edge type names.
    class_names : list[str]
        IRI of the research group behind each class id (sorted).
    node_terms : dict[str, list[str]]
        For each node type, the N-Triples form of each node (index = node id within the type).
    """

    name = "AIFB"
    predict_category = "Personen"
    files = (
        RemoteFile("rgcn_entities/AIFB/aifb_stripped.nt.gz",
                   "ba4191235456e09d8f12a2415f24273b8d7641ffee6001ca9340f02c04d77fea",
                   "https://www.dropbox.com/s/fkvgvkygo2gf28k/aifb_stripped.nt.gz?dl=1"),
        # relational-gcn stores these two with CRLF line ends; the recorded sha256 is of the LF text
        RemoteFile("rgcn_entities/AIFB/trainingSet.tsv",
                   "5ed245d354691768fc3386f18c66331043317440ff8e2c0706353cb0d35cd73a",
                   _RGCN + "trainingSet.tsv", newline_lf=True),
        RemoteFile("rgcn_entities/AIFB/testSet.tsv",
                   "e384415e23ff4e001e1259810867dda61dfa2547851e9c0b9f130f40f2cb97c1",
                   _RGCN + "testSet.tsv", newline_lf=True),
    )

    def __init__(self, raw_dir: str | os.PathLike | None = None, *, insert_reverse: bool | None = None,
                 download: bool = True, mirror: str | None = None, verify: bool = True,
                 progress: bool | None = None, transform: Callable[[Any], Any] | None = None,
                 reverse_edge: bool | None = None) -> None:
        self.insert_reverse = reverse_option(insert_reverse, "insert_reverse", reverse_edge, type(self).__name__)
        self.reverse_edge = self.insert_reverse
        super().__init__(raw_dir, download=download, mirror=mirror, verify=verify, progress=progress,
                         transform=transform)

    def _load(self) -> None:
        import nodeweave as nw

        nt_path = self.raw_path(self.files[0].path)
        triples = read_ntriples(nt_path)
        if not triples:
            raise DataFormatError(nt_path, "holds no triples")
        node_id: dict[Term, int] = {}
        for s, _, o in triples:
            node_id.setdefault(s, len(node_id))
            node_id.setdefault(o, len(node_id))
        terms = list(node_id)
        self.relations = sorted({p.value for _, p, _ in triples})
        rel_id = {iri: i for i, iri in enumerate(self.relations)}
        self.relation_names = relation_names(self.relations)
        self.num_rels = len(self.relations)
        m = len(triples)
        src = np.fromiter((node_id[t[0]] for t in triples), dtype=np.int64, count=m)
        rel = np.fromiter((rel_id[t[1].value] for t in triples), dtype=np.int64, count=m)
        dst = np.fromiter((node_id[t[2]] for t in triples), dtype=np.int64, count=m)

        type_names = [node_type(t) for t in terms]
        ntypes = sorted(set(type_names))
        tid = np.array([ntypes.index(t) for t in type_names], dtype=np.int64)
        local = np.empty(len(terms), dtype=np.int64)
        counts = {}
        for i, nt in enumerate(ntypes):
            members = np.flatnonzero(tid == i)
            local[members] = np.arange(len(members))
            counts[nt] = len(members)
        self.node_terms = {nt: [str(terms[j]) for j in np.flatnonzero(tid == i)] for i, nt in enumerate(ntypes)}

        nt_count, r_count = len(ntypes), self.num_rels
        key = (tid[src] * r_count + rel) * nt_count + tid[dst]
        uniq, inv = np.unique(key, return_inverse=True)
        data: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]] = {}
        rel_of: dict[tuple[str, str, str], int] = {}
        for j, k in enumerate(uniq):
            idx = np.flatnonzero(inv == j)  # file order within the edge type
            ts, r, to = int(k) // (r_count * nt_count), int(k) // nt_count % r_count, int(k) % nt_count
            fwd = (ntypes[ts], self.relation_names[r], ntypes[to])
            data[fwd], rel_of[fwd] = (local[src[idx]], local[dst[idx]]), r
            if self.insert_reverse:
                rev = (ntypes[to], "rev-" + self.relation_names[r], ntypes[ts])
                data[rev], rel_of[rev] = (local[dst[idx]], local[src[idx]]), r + r_count
        g = nw.heterograph(data, num_nodes_dict=counts)
        for ct in g.canonical_etypes:
            g.edges[ct].data["rel_type"] = to_tensor(np.full(g.num_edges(ct), rel_of[ct], dtype=np.int64))

        cat = self.predict_category
        if cat not in counts:
            raise DataFormatError(nt_path, f"has no node of the category {cat!r}")
        person_local = {terms[j]: int(local[j]) for j in np.flatnonzero(tid == ntypes.index(cat))}
        split_rows = {which: self._read_split(self.raw_path(f.path), person_local)
                      for which, f in (("train", self.files[1]), ("test", self.files[2]))}
        seen: dict[int, str] = {}
        for which, rows in split_rows.items():
            for node, _, line, path, person in rows:
                if node in seen:
                    raise DataFormatError(path, f"person <{person}> is also in the {seen[node]} set", line=line)
                seen[node] = which
        self.class_names = sorted({row[1] for rows in split_rows.values() for row in rows})
        class_id = {c: i for i, c in enumerate(self.class_names)}
        label = np.full(counts[cat], -1, dtype=np.int64)
        masks = {w: np.zeros(counts[cat], dtype=bool) for w in split_rows}
        for which, rows in split_rows.items():
            for node, lab, *_ in rows:
                label[node] = class_id[lab]
                masks[which][node] = True
        g.nodes[cat].data["label"] = to_tensor(label)
        g.nodes[cat].data["train_mask"] = to_tensor(masks["train"])
        g.nodes[cat].data["test_mask"] = to_tensor(masks["test"])
        self.num_classes = len(self.class_names)
        self._graph = g

    def _read_split(self, path: Any, person_local: dict[Term, int]) -> list[tuple[int, str, int, Any, str]]:
        """``(node id in the category, label IRI, line, path, person IRI)`` for each row of a split file."""
        text = read_text(path)
        header, _, body = text.partition("\n")
        cols = header.rstrip("\r").split("\t")
        if "person" not in cols or "label_affiliation" not in cols:
            raise DataFormatError(path, f"header must name the columns 'person' and 'label_affiliation', got {cols}",
                                  line=1)
        pc, lc = cols.index("person"), cols.index("label_affiliation")
        out = []
        for i, row in enumerate(str_table(body, path, len(cols), first_line=2)):
            node = person_local.get(IRI(row[pc]))
            if node is None:
                raise DataFormatError(path, f"person <{row[pc]}> is not a {self.predict_category} node of "
                                      f"{self.files[0].path.rsplit('/', 1)[-1]}", line=i + 2)
            out.append((node, row[lc], i + 2, path, row[pc]))
        return out

    def to_homogeneous(self) -> Any:
        """The graph with all node and edge types merged (R-GCN's form); see the module docs."""
        import nodeweave as nw
        from nodeweave import backend

        g = self._graph
        h = nw.to_homogeneous(g, edata=["rel_type"])
        B = backend.of(h.ndata["_TYPE"])
        ntype = B.to_numpy(h.ndata["_TYPE"])
        within = B.to_numpy(h.ndata["_ID"]).astype(np.int64)
        is_cat = ntype == g.ntypes.index(self.predict_category)
        cat_data = g.nodes[self.predict_category].data
        for k, fill in (("label", -1), ("train_mask", False), ("test_mask", False)):
            src = backend.of(cat_data[k]).to_numpy(cat_data[k])
            out = np.full(h.num_nodes(), fill, dtype=src.dtype)
            out[is_cat] = src[within[is_cat]]
            h.ndata[k] = to_tensor(out)
        return h

    def __len__(self) -> int:
        return 1

    def __getitem__(self, idx: int) -> Any:
        _single_index(idx, type(self).__name__)
        return self._transformed(self._graph)

