"""The entity-classification benchmarks of R-GCN (Schlichtkrull et al., ESWC 2018): AIFB, MUTAG, BGS
and AM, as DGL's ``dgl.data.rdf`` names them. Each is an RDF graph with one labelled entity type;
all four are read by one loader (:class:`~nodeweave.data.rdf_entities.RDFEntityDataset`, whose
module docs describe the graph, the relations and the labels) from R-GCN's own files, and each
class below only declares its facts.

Files, under ``rgcn_entities/<NAME>/`` in the data directory: ``<name>_stripped.nt.gz`` (the graph,
with the triples that give the labels away removed, from R-GCN's Dropbox links), ``trainingSet.tsv``
and ``testSet.tsv`` (from the relational-gcn repository; BGS's are ``trainingSet(lith).tsv`` and
``testSet(lith).tsv`` there). Only AIFB's checksums are recorded: the other files download with
``verify=False``, or can be put in place by hand (a missing file raises an error naming where it
goes and where it comes from).

- AIFB: category ``Personen``; split columns ``person`` / ``label_affiliation``; label predicates
  SWRC's ``affiliation`` and ``employs``; 4 classes.
- MUTAG: category ``d``; columns ``bond`` / ``label_mutagenic``; ``isMutagenic``; 2 classes.
- BGS: category ``Lexicon/NamedRockUnit``; columns ``rock`` / ``label_lithogenesis``;
  ``hasLithogenesis``; 2 classes.
- AM: category ``proxy``; columns ``proxy`` / ``label_cateogory``; ``objectCategory`` and
  ``material``; 11 classes.

(``label_cateogory`` is spelled so in R-GCN's AM files; MUTAG's entity column is named ``bond`` but
holds compounds.) Node types follow DGL's classes of the same names for the instances; literals are
``_Literal``, blank nodes ``_BlankNode`` and untyped IRIs ``_Resource``, where DGL drops some of
those kinds (and reads other releases of the files): here every triple is kept, so the graph is the
one R-GCN was evaluated on.

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

import re

from nodeweave.data.download import RemoteFile
from nodeweave.data.rdf_entities import EntityTask, RDFEntityDataset, relation_names

__all__ = ["AIFBDataset", "MUTAGDataset", "BGSDataset", "AMDataset", "RDFEntityDataset", "relation_names"]

_RGCN = "https://raw.githubusercontent.com/tkipf/relational-gcn/master/rgcn/data/"


def _unverified(folder: str, nt_url: str, train: str = "trainingSet.tsv",
                test: str = "testSet.tsv") -> tuple[RemoteFile, RemoteFile, RemoteFile]:
    """R-GCN's three files of one dataset, no checksum recorded (they were not available to hash).
    ``train`` / ``test``: the split files' names upstream."""
    name = folder.lower()
    root = f"rgcn_entities/{folder}/"
    return (RemoteFile(root + f"{name}_stripped.nt.gz", None, nt_url),
            # relational-gcn serves AIFB's split files with CRLF line ends: normalized for all four
            RemoteFile(root + "trainingSet.tsv", None, _RGCN + f"{name}/{train}", newline_lf=True),
            RemoteFile(root + "testSet.tsv", None, _RGCN + f"{name}/{test}", newline_lf=True))


class AIFBDataset(RDFEntityDataset):
    """AIFB: the research groups of the people of the AIFB institute (see the module docs).

    ``aifb_stripped.nt.gz`` holds 29043 triples (``affiliation`` / ``employs`` removed): 8285 nodes
    (every distinct subject and object, literals included), 45 relations, 176 labelled people in 4
    research groups, 140 for training and 36 for testing: the counts of the R-GCN paper, checked by
    the tests. Node types: an IRI ``http://www.aifb.uni-karlsruhe.de/<Kind>/...`` is of type
    ``<Kind>`` (``Personen``, ``Publikationen``, ``Forschungsgebiete``, ``Projekte``,
    ``Kooperationen``, ``Forschungsgruppen``, ``WBS``), as in DGL's ``AIFBDataset``. DGL reads another
    release (``aifb-hetero.zip``: 7262 nodes, 24405 triples) and drops blank nodes and non-AIFB IRIs.
    ``class_names`` are the IRIs of the groups.
    """

    task = EntityTask(
        name="AIFB", predict_category="Personen", entity_column="person", label_column="label_affiliation",
        instance_type=re.compile(r"http://www\.aifb\.uni-karlsruhe\.de/([^/]+)"),
        label_predicates=("http://swrc.ontoware.org/ontology#affiliation",
                          "http://swrc.ontoware.org/ontology#employs"),
        files=(
            RemoteFile("rgcn_entities/AIFB/aifb_stripped.nt.gz",
                       "ba4191235456e09d8f12a2415f24273b8d7641ffee6001ca9340f02c04d77fea",
                       "https://www.dropbox.com/s/fkvgvkygo2gf28k/aifb_stripped.nt.gz?dl=1"),
            # relational-gcn stores these two with CRLF line ends; the recorded sha256 is of the LF text
            RemoteFile("rgcn_entities/AIFB/trainingSet.tsv",
                       "5ed245d354691768fc3386f18c66331043317440ff8e2c0706353cb0d35cd73a",
                       _RGCN + "aifb/trainingSet.tsv", newline_lf=True),
            RemoteFile("rgcn_entities/AIFB/testSet.tsv",
                       "e384415e23ff4e001e1259810867dda61dfa2547851e9c0b9f130f40f2cb97c1",
                       _RGCN + "aifb/testSet.tsv", newline_lf=True)))


class MUTAGDataset(RDFEntityDataset):
    """MUTAG: whether a molecule is mutagenic, on the carcinogenesis ontology (see the module docs).

    As published (R-GCN paper, Table 1; not checked here, the file is not in the offline copy):
    23,644 entities, 23 relations, 74,227 edges, 340 labelled compounds in 2 classes; DGL documents
    a 272 / 68 train / test split. Node types, as in DGL's ``MUTAGDataset``: an IRI
    ``http://dl-learner.org/carcinogenesis#<local>`` whose local name is ``d`` or ``bond`` followed by
    a digit is of type ``d`` or ``bond``; the labelled compounds (``d1``, ``d23_2`` ...) are ``d``
    nodes. Other carcinogenesis IRIs (classes, properties) are ``_Resource`` here, where DGL types
    them by the relation that points at them. ``class_names`` are ``'0.0'`` and ``'1.0'`` (R-GCN's
    file), so class 1 is mutagenic.
    """

    task = EntityTask(
        name="MUTAG", predict_category="d", entity_column="bond", label_column="label_mutagenic",
        instance_type=re.compile(r"http://dl-learner\.org/carcinogenesis#(d|bond)[0-9]"),
        label_predicates=("http://dl-learner.org/carcinogenesis#isMutagenic",),
        files=_unverified("MUTAG", "https://www.dropbox.com/s/qy8j3p8eacvm4ir/mutag_stripped.nt.gz?dl=1"))


class BGSDataset(RDFEntityDataset):
    """BGS: the lithogenesis of named rock units, on the British Geological Survey's linked data (see
    the module docs).

    As published (R-GCN paper, Table 1; not checked here, the file is not in the offline copy):
    333,845 entities, 103 relations, 916,199 edges, 146 labelled rock units in 2 classes; DGL
    documents a 117 / 29 train / test split. Node types, as in DGL's ``BGSDataset``: an IRI
    ``http://data.bgs.ac.uk/<ref or id>/<Major>/<Sub>/<instance>`` is of type ``<Major>/<Sub>``
    (the rock units are ``Lexicon/NamedRockUnit``). DGL drops literals, which R-GCN keeps.
    ``class_names`` are the IRIs of the lithogenetic types.
    """

    task = EntityTask(
        name="BGS", predict_category="Lexicon/NamedRockUnit", entity_column="rock",
        label_column="label_lithogenesis",
        instance_type=re.compile(r"http://data\.bgs\.ac\.uk/[^/]+/([^/]+/[^/]+)/[^/]+$"),
        label_predicates=("http://data.bgs.ac.uk/ref/Lexicon/hasLithogenesis",),
        files=_unverified("BGS", "https://www.dropbox.com/s/uqi0k9jd56j02gh/bgs_stripped.nt.gz?dl=1",
                          train="trainingSet(lith).tsv", test="testSet(lith).tsv"))


class AMDataset(RDFEntityDataset):
    """AM: the category of artefacts of the Amsterdam Museum (see the module docs).

    As published (R-GCN paper, Table 1; not checked here, the file is not in the offline copy):
    1,666,764 entities, 133 relations, 5,988,321 edges, 1,000 labelled artefacts in 11 classes; DGL
    documents an 802 / 198 train / test split. Node types, as in DGL's ``AMDataset``: an IRI
    ``http://purl.org/collections/nl/am/<type>-<id>`` is of type ``<type>`` (the artefacts are
    ``proxy``); other AM IRIs, which DGL calls ``TYPE``, are ``_Resource`` here. DGL drops literals,
    which R-GCN keeps. ``class_names`` are the IRIs of the categories.
    """

    task = EntityTask(
        name="AM", predict_category="proxy", entity_column="proxy", label_column="label_cateogory",
        instance_type=re.compile(r"http://purl\.org/collections/nl/am/([^/-]+)-[^/-]+$"),
        label_predicates=("http://purl.org/collections/nl/am/objectCategory",
                          "http://purl.org/collections/nl/am/material"),
        files=_unverified("AM", "https://www.dropbox.com/s/htisydfgwxmrx65/am_stripped.nt.gz?dl=1"))
