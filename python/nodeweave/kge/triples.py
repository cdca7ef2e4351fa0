"""Triples for knowledge-graph embedding: a dataset from the data directory, or the user's files.

``load_dataset("FB15k-237")`` reads :class:`nodeweave.data.FB15k237Dataset` (and WN18RR, WN18,
FB15k, kinship, nations, umls). ``load_files(path, ["train.tsv", "valid.tsv", "test.tsv"])`` reads
one triple per line, fields separated by ``delimiter``:

- ``raw_hrt``: ``head relation tail`` names; ids are given in order of first appearance (train,
  then valid, then test);
- ``id_hrt``: integer ids; there are ``max id + 1`` entities and relations, named by their ids.

A malformed line raises :class:`nodeweave.data.DataFormatError` naming the file and the line.

>>> import os, tempfile
>>> from nodeweave.kge.triples import load_files
>>> d = tempfile.mkdtemp()
>>> with open(os.path.join(d, "train.tsv"), "w") as f:
...     _ = f.write("alice\\tknows\\tbob\\nbob\\tknows\\tcarol\\n")
>>> kg = load_files(d, ["train.tsv"])
>>> kg.train.tolist(), kg.entities, kg.relations
([[0, 0, 1], [1, 0, 2]], ['alice', 'bob', 'carol'], ['knows'])
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from nodeweave import errors as nwerr
from nodeweave.data.errors import DataFormatError
from nodeweave.data.text_tables import read_text, str_table

__all__ = ["KGData", "DATASETS", "FORMATS", "load_dataset", "load_files"]

FORMATS = ("raw_hrt", "id_hrt")


def _dataset_classes() -> dict[str, type]:
    from nodeweave import data

    return {"FB15k-237": data.FB15k237Dataset, "WN18RR": data.WN18RRDataset, "WN18": data.WN18Dataset,
            "FB15k": data.FB15kDataset, "kinship": data.KinshipDataset, "nations": data.NationsDataset,
            "umls": data.UMLSDataset}


DATASETS = ("FB15k-237", "WN18RR", "WN18", "FB15k", "kinship", "nations", "umls")


@dataclass
class KGData:
    """Train / valid / test triples as ``(n, 3)`` int64 ``(head, relation, tail)`` ids, and the names."""

    train: np.ndarray
    valid: np.ndarray
    test: np.ndarray
    entities: list[str]
    relations: list[str]
    name: str = ""

    @property
    def num_entities(self) -> int:
        return len(self.entities)

    @property
    def num_relations(self) -> int:
        return len(self.relations)

    def known(self) -> np.ndarray:
        """Every triple of the three splits: the filter of filtered ranking."""
        return np.concatenate([self.train, self.valid, self.test])


def load_dataset(name: str, data_dir: str | os.PathLike | None = None) -> KGData:
    """One of :data:`DATASETS` (case-insensitive) from the data directory."""
    by_lower = {k.lower(): k for k in DATASETS}
    key = by_lower.get(str(name).lower())
    if key is None:
        raise nwerr.ValueError(f"unknown dataset {name!r}: expected one of {', '.join(DATASETS)} "
                               "(or --data-path and --data-files for your own triples)")
    ds = _dataset_classes()[key](data_dir)
    entities = [""] * ds.num_nodes
    for n, i in ds.entity2id.items():
        entities[i] = n
    relations = [""] * ds.num_rels
    for n, i in ds.relation2id.items():
        relations[i] = n
    return KGData(ds.train, ds.valid, ds.test, entities, relations, key)


def load_files(data_path: str | os.PathLike, data_files: Sequence[str], fmt: str = "raw_hrt",
               delimiter: str = "\t") -> KGData:
    """Triples from ``data_files`` (train, then optionally valid and test) under ``data_path``."""
    if fmt not in FORMATS:
        raise nwerr.ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if not 1 <= len(data_files) <= 3:
        raise nwerr.ValueError(f"data_files takes 1 to 3 files (train [valid [test]]), got {len(data_files)}")
    if not delimiter:
        raise nwerr.ValueError("delimiter must not be empty")
    tables = []
    for f in data_files:
        path = os.path.join(os.fspath(data_path), f)
        if not os.path.isfile(path):
            raise nwerr.FileNotFoundError(f"triple file {path} does not exist")
        rows = str_table(read_text(path), path, 3, sep=delimiter)
        if not rows:
            raise DataFormatError(path, "the file holds no triples")
        tables.append((path, rows))
    if fmt == "id_hrt":
        splits = [_id_rows(path, rows) for path, rows in tables]
        every = np.concatenate(splits)
        if every.min() < 0:
            raise nwerr.ValueError("ids must be non-negative")
        entities = [str(i) for i in range(int(max(every[:, 0].max(), every[:, 2].max())) + 1)]
        relations = [str(i) for i in range(int(every[:, 1].max()) + 1)]
    else:
        ent: dict[str, int] = {}
        rel: dict[str, int] = {}
        splits = []
        for _, rows in tables:
            ids = [(ent.setdefault(h, len(ent)), rel.setdefault(r, len(rel)), ent.setdefault(t, len(ent)))
                   for h, r, t in rows]
            splits.append(np.array(ids, dtype=np.int64).reshape(-1, 3))
        entities, relations = list(ent), list(rel)
    while len(splits) < 3:
        splits.append(np.zeros((0, 3), np.int64))
    return KGData(splits[0], splits[1], splits[2], entities, relations, os.fspath(data_path))


def _id_rows(path: str, rows: list[list[str]]) -> np.ndarray:
    out = np.empty((len(rows), 3), np.int64)
    for i, row in enumerate(rows):
        try:
            out[i] = [int(x) for x in row]
        except ValueError:
            raise DataFormatError(path, f"format id_hrt expects integer ids, got {row!r}", line=i + 1) from None
    return out
