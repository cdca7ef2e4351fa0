"""Entity classification on an RDF graph in R-GCN's setup (Schlichtkrull et al., ESWC 2018): one
loader for every dataset of that form. A dataset is a subclass of :class:`RDFEntityDataset` that
declares its facts once, as an :class:`EntityTask`; :mod:`nodeweave.data.rdf` declares AIFB, MUTAG,
BGS and AM.

**Files** (relational-gcn's layout, under ``rgcn_entities/<NAME>/``): the graph as gzipped
N-Triples with the triples that would give the labels away removed (``<name>_stripped.nt.gz``), and
a training and a test split file: tab-separated, a header row, one labelled entity per row, its IRI
in one named column and its label in another.

**Graph.** Every triple is an edge and every distinct subject and object a node, literals included:
the graph R-GCN was evaluated on. ``ds[0]`` is a heterograph whose node types come from the IRIs
(:attr:`EntityTask.instance_type`; literals ``_Literal``, blank nodes ``_BlankNode``, every other IRI
``_Resource``) and whose canonical edge types are ``(source type, relation, destination type)``,
the relation named by :func:`relation_names`. With ``insert_reverse=True`` (default, as in DGL)
each edge type gets a reverse type ``rev-<relation>``. Every edge carries ``edata['rel_type']``:
the relation id, ``0 .. num_rels - 1`` forward and ``+ num_rels`` reverse. Relations are numbered by
sorted predicate IRI; nodes within a type by first appearance in the file; edges within an edge type
keep file order.

**Labels** live on the node type :attr:`predict_category`: ``label`` (int64, -1 when unlabelled;
DGL's older name ``labels`` holds the same tensor), ``train_mask`` and ``test_mask``. Class ids
number the distinct label strings in sorted order (:attr:`class_names`).

A graph file that still holds one of the task's :attr:`EntityTask.label_predicates` is refused
(:class:`~nodeweave.data.errors.DataFormatError`): a model would read the answer off the graph.

>>> import gzip, os, re, tempfile
>>> from nodeweave.data.download import RemoteFile
>>> from nodeweave.data.rdf_entities import EntityTask, RDFEntityDataset
>>> class Toy(RDFEntityDataset):
...     task = EntityTask(
...         name="TOY", predict_category="person", entity_column="who", label_column="team",
...         instance_type=re.compile(r"http://ex\\.org/(\\w+)/"), label_predicates=("http://ex.org/memberOf",),
...         files=(RemoteFile("toy/toy_stripped.nt.gz", None, None),
...                RemoteFile("toy/train.tsv", None, None), RemoteFile("toy/test.tsv", None, None)))
>>> root = tempfile.mkdtemp(); os.makedirs(os.path.join(root, "toy"))
>>> nt = "".join(f"<http://ex.org/person/{p}> <http://ex.org/knows> <http://ex.org/person/{q}> .\\n"
...              for p, q in [(1, 2), (2, 3), (3, 1)])
>>> with gzip.open(os.path.join(root, "toy/toy_stripped.nt.gz"), "wt") as fh:
...     _ = fh.write(nt + '<http://ex.org/person/1> <http://ex.org/name> "Ann" .\\n')
>>> for split, rows in (("train", [(1, "red"), (2, "blue")]), ("test", [(3, "red")])):
...     with open(os.path.join(root, f"toy/{split}.tsv"), "w") as fh:
...         _ = fh.write("who\\tteam\\n" + "".join(f"http://ex.org/person/{p}\\t{t}\\n" for p, t in rows))
>>> ds = Toy(raw_dir=root)
>>> g = ds[0]
>>> g.ntypes, ds.num_rels, ds.relation_names, ds.class_names
(['_Literal', 'person'], 2, ['knows', 'name'], ['blue', 'red'])
>>> g.canonical_etypes
[('_Literal', 'rev-name', 'person'), ('person', 'knows', 'person'), ('person', 'name', '_Literal'), ('person', 'rev-knows', 'person')]
>>> g.nodes["person"].data["label"].tolist(), g.nodes["person"].data["test_mask"].tolist()
([1, 0, 1], [False, False, True])
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import numpy as np

from nodeweave.data.dataset import Dataset, _single_index, reverse_option, to_tensor
from nodeweave.data.download import RemoteFile
from nodeweave.data.errors import DataFormatError
from nodeweave.data.ntriples import IRI, BlankNode, Literal, Term, read_ntriples
from nodeweave.data.text_tables import read_text, str_table

__all__ = ["EntityTask", "RDFEntityDataset", "relation_names", "node_type", "LITERAL", "BLANK_NODE", "RESOURCE"]

LITERAL, BLANK_NODE, RESOURCE = "_Literal", "_BlankNode", "_Resource"
"""Node types of literals, blank nodes, and IRIs that :attr:`EntityTask.instance_type` does not type."""

_KNOWN_VOCABULARIES = {
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#": "rdf",
    "http://www.w3.org/2000/01/rdf-schema#": "rdfs",
    "http://www.w3.org/2002/07/owl#": "owl",
    "http://www.w3.org/2001/XMLSchema#": "xsd",
}


@dataclass(frozen=True)
class EntityTask:
    """What sets one RDF entity-classification dataset apart from another.

    Attributes
    ----------
    name : str
        Short name (``'AIFB'``).
    predict_category : str
        The node type of the labelled entities.
    entity_column, label_column : str
        Header names, in the split files, of the entity IRI column and of the label column.
    instance_type : re.Pattern
        Matched (``re.match``) against each IRI: group 1 of a match is the IRI's node type. IRIs it
        does not match are ``_Resource``.
    label_predicates : tuple of str
        Predicate IRIs whose triples give the labels away (R-GCN removed them from the graph).
    files : (RemoteFile, RemoteFile, RemoteFile)
        The N-Triples graph, the training split and the test split, in that order.
    """

    name: str
    predict_category: str
    entity_column: str
    label_column: str
    instance_type: re.Pattern
    label_predicates: tuple[str, ...]
    files: tuple[RemoteFile, RemoteFile, RemoteFile]


def relation_names(iris: list[str]) -> list[str]:
    """Short, unique names for predicate IRIs: the local name (after the last ``#`` or ``/``), with
    ``rdf_`` / ``rdfs_`` / ``owl_`` / ``xsd_`` for the W3C vocabularies; local names that collide
    take their namespace's last segment as prefix; ``.`` becomes ``_`` (``torch.nn.ModuleDict``,
    keyed by relation in heterogeneous models, refuses dots).

    >>> from nodeweave.data.rdf_entities import relation_names
    >>> relation_names(["http://ex.org/onto#author", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
    ...                 "http://a.org/x/type", "http://b.org/y#type", "http://c.org/v1.2#has.part"])
    ['author', 'rdf_type', 'x_type', 'y_type', 'has_part']
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
    names = [n.replace(".", "_") for n in names]
    if len(set(names)) != len(names):  # still ambiguous: fall back to full IRIs
        names = list(iris)
    return names


def node_type(term: Term, instance_type: re.Pattern) -> str:
    """The node type of an RDF term (see the module docs).

    >>> import re
    >>> from nodeweave.data.ntriples import IRI, Literal
    >>> from nodeweave.data.rdf_entities import node_type
    >>> kind = re.compile(r"http://ex\\.org/(\\w+)-\\d+$")
    >>> node_type(IRI("http://ex.org/proxy-12"), kind), node_type(IRI("http://ex.org/material"), kind)
    ('proxy', '_Resource')
    >>> node_type(Literal("12"), kind)
    '_Literal'
    """
    if isinstance(term, Literal):
        return LITERAL
    if isinstance(term, BlankNode):
        return BLANK_NODE
    m = instance_type.match(term.value)
    return m.group(1) if m and m.group(1) else RESOURCE


class RDFEntityDataset(Dataset):
    """An RDF entity-classification dataset (see the module docs); subclasses set :attr:`task`.

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
        The node type with labels and masks.
    num_classes, num_rels : int
        Number of classes; of relations (reverse relations not counted).
    relations : list[str]
        Predicate IRI of each relation id; :attr:`relation_names` their edge type names.
    class_names : list[str]
        The label string of each class id (sorted).
    node_terms : dict[str, list[str]]
        For each node type, the N-Triples form of each node (index = node id within the type).
    """

    task: ClassVar[EntityTask]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        task = cls.__dict__.get("task")
        if task is not None:  # the facts the base class and the docs read, from the one declaration
            cls.name, cls.predict_category, cls.files = task.name, task.predict_category, task.files

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

        task = self.task
        nt_path = self.raw_path(task.files[0].path)
        triples = read_ntriples(nt_path)
        if not triples:
            raise DataFormatError(nt_path, "holds no triples")
        self._refuse_label_predicates(triples, nt_path)
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

        type_names = [node_type(t, task.instance_type) for t in terms]
        ntypes = sorted(set(type_names))
        type_index = {nt: i for i, nt in enumerate(ntypes)}
        tid = np.fromiter((type_index[t] for t in type_names), dtype=np.int64, count=len(terms))
        local = np.empty(len(terms), dtype=np.int64)
        counts = {}
        for i, nt in enumerate(ntypes):
            members = np.flatnonzero(tid == i)
            local[members] = np.arange(len(members))
            counts[nt] = len(members)
        self.node_terms = {nt: [str(terms[j]) for j in np.flatnonzero(tid == i)] for i, nt in enumerate(ntypes)}

        g = nw.heterograph(self._edge_types(src, rel, dst, tid, local, ntypes), num_nodes_dict=counts)
        for ct in g.canonical_etypes:
            g.edges[ct].data["rel_type"] = to_tensor(np.full(g.num_edges(ct), self._rel_of[ct], dtype=np.int64))

        cat = self.predict_category
        if cat not in counts:
            raise DataFormatError(nt_path, f"has no node of the category {cat!r}")
        cat_local = {terms[j]: int(local[j]) for j in np.flatnonzero(tid == type_index[cat])}
        split_rows = {which: self._read_split(self.raw_path(f.path), cat_local)
                      for which, f in (("train", task.files[1]), ("test", task.files[2]))}
        seen: dict[int, str] = {}
        for which, rows in split_rows.items():
            for node, _, line, path, entity in rows:
                if node in seen:
                    raise DataFormatError(path, f"{task.entity_column} <{entity}> is also in the {seen[node]} set",
                                          line=line)
                seen[node] = which
        self.class_names = sorted({row[1] for rows in split_rows.values() for row in rows})
        class_id = {c: i for i, c in enumerate(self.class_names)}
        label = np.full(counts[cat], -1, dtype=np.int64)
        masks = {w: np.zeros(counts[cat], dtype=bool) for w in split_rows}
        for which, rows in split_rows.items():
            for node, lab, *_ in rows:
                label[node] = class_id[lab]
                masks[which][node] = True
        labels = to_tensor(label)
        g.nodes[cat].data["label"] = labels
        g.nodes[cat].data["labels"] = labels  # DGL's RDF datasets store the labels under both names
        g.nodes[cat].data["train_mask"] = to_tensor(masks["train"])
        g.nodes[cat].data["test_mask"] = to_tensor(masks["test"])
        self.num_classes = len(self.class_names)
        self._graph = g

    def _refuse_label_predicates(self, triples: list, path: Any) -> None:
        leaks = set(self.task.label_predicates)
        if not leaks:
            return
        found = [t for t in triples if t[1].value in leaks]
        if found:
            s, p, o = found[0]
            raise DataFormatError(path, f"holds {len(found)} triple(s) of <{p.value}> (e.g. {s} {p} {o}), the "
                                  f"predicate that gives {self.name}'s labels away; R-GCN's graph file has them "
                                  "removed: is this the unstripped file?")

    def _edge_types(self, src: np.ndarray, rel: np.ndarray, dst: np.ndarray, tid: np.ndarray,
                    local: np.ndarray, ntypes: list[str]) -> dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]]:
        """``{canonical edge type: (src, dst)}`` in local ids, forward then reverse per type; also sets
        ``self._rel_of`` (the relation id of each canonical edge type)."""
        nt_count, r_count = len(ntypes), self.num_rels
        key = (tid[src] * r_count + rel) * nt_count + tid[dst]
        order = np.argsort(key, kind="stable")  # grouped by edge type, file order kept within each
        uniq, starts = np.unique(key[order], return_index=True)
        bounds = np.append(starts, len(order))
        data: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]] = {}
        self._rel_of: dict[tuple[str, str, str], int] = {}
        for j, k in enumerate(uniq):
            idx = order[bounds[j]:bounds[j + 1]]
            ts, r, to = int(k) // (r_count * nt_count), int(k) // nt_count % r_count, int(k) % nt_count
            fwd = (ntypes[ts], self.relation_names[r], ntypes[to])
            data[fwd], self._rel_of[fwd] = (local[src[idx]], local[dst[idx]]), r
            if self.insert_reverse:
                rev = (ntypes[to], "rev-" + self.relation_names[r], ntypes[ts])
                data[rev], self._rel_of[rev] = (local[dst[idx]], local[src[idx]]), r + r_count
        return data

    def _read_split(self, path: Any, cat_local: dict[Term, int]) -> list[tuple[int, str, int, Any, str]]:
        """``(node id in the category, label, line, path, entity IRI)`` for each row of a split file."""
        ecol, lcol = self.task.entity_column, self.task.label_column
        text = read_text(path)
        header, _, body = text.partition("\n")
        cols = header.rstrip("\r").split("\t")
        if ecol not in cols or lcol not in cols:
            raise DataFormatError(path, f"header must name the columns {ecol!r} and {lcol!r}, got {cols}", line=1)
        ec, lc = cols.index(ecol), cols.index(lcol)
        out = []
        for i, row in enumerate(str_table(body, path, len(cols), first_line=2)):
            node = cat_local.get(IRI(row[ec]))
            if node is None:
                raise DataFormatError(path, f"{ecol} <{row[ec]}> is not a {self.predict_category} node of "
                                      f"{self.task.files[0].path.rsplit('/', 1)[-1]}", line=i + 2)
            out.append((node, row[lc], i + 2, path, row[ec]))
        return out

    def to_homogeneous(self) -> Any:
        """The graph with all node and edge types merged (R-GCN's form): edges with
        ``edata['rel_type']``, and ``ndata['label']`` (-1 off the category), ``train_mask`` and
        ``test_mask`` on all nodes; ``ndata['_TYPE']`` / ``ndata['_ID']`` map back to the
        heterograph (see :func:`nodeweave.to_homogeneous`)."""
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
