"""Knowledge graphs for link prediction: FB15k-237, WN18RR, WN18, FB15k and the small sets kinship,
nations and umls.

Files (``kg/<name>/`` in the data directory): ``train.txt``, ``valid.txt``, ``test.txt`` with one
``head<TAB>relation<TAB>tail`` triple per line, and, except for the small sets, ``entities.dict`` /
``relations.dict`` mapping ``id<TAB>name``. A training file may be stored gzip-compressed
(``train.txt.gz``). Without dictionaries (the small sets), ids follow the sorted names.

``ds.train`` / ``ds.valid`` / ``ds.test`` are ``(n, 3)`` int64 arrays of ``(head, relation, tail)``
ids; ``ds.entity2id`` / ``ds.relation2id`` map names to ids; ``ds.num_nodes`` / ``ds.num_rels`` count
them. ``ds[0]`` is DGL's graph view (``KnowledgeGraphDataset``): one node per entity and one edge
``head -> tail`` per triple of train, then valid, then test, with ``edata['etype']`` (int64 relation
id) and ``edata['train_mask'|'val_mask'|'test_mask']`` (bool). With ``reverse=True`` (the default,
as in DGL) every triple also gets a reverse edge ``tail -> head`` of type ``relation + num_rels``,
appended after all forward edges; the three masks mark forward edges only, while
``edata['train_edge_mask'|'val_edge_mask'|'test_edge_mask']`` mark both directions. Message passing
for link prediction must only see training edges: ``nw.edge_subgraph(g, train_edge_mask)``.

===========  ========  =========  ========================
dataset      entities  relations  train / valid / test
===========  ========  =========  ========================
FB15k-237    14541     237        272115 / 17535 / 20466
WN18RR       40943     11         86835 / 3034 / 3134
WN18         40943     18         141442 / 5000 / 5000
FB15k        14951     1345       483142 / 50000 / 59071
kinship      104       25         8544 / 1068 / 1074
nations      14        55         1592 / 199 / 201
umls         135       46         5216 / 652 / 661
===========  ========  =========  ========================

FB15k is not in the offline copy and has no recorded checksums (``verify=False`` downloads it).

>>> from nodeweave.data import NationsDataset
>>> ds = NationsDataset()
>>> ds.num_nodes, ds.num_rels, ds.train.shape, ds.train.dtype
(14, 55, (1592, 3), dtype('int64'))
>>> g = ds[0]
>>> g.num_edges() == 2 * (1592 + 199 + 201), int(g.edata["train_mask"].numpy().sum())
(True, 1592)
"""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np

from nodeweave.data.dataset import Dataset, _single_index, reverse_option, to_tensor
from nodeweave.data.download import RemoteFile
from nodeweave.data.errors import DataFormatError
from nodeweave.data.text_tables import read_text, str_table
from nodeweave import errors as nwerr

__all__ = ["KnowledgeGraphDataset", "FB15k237Dataset", "WN18RRDataset", "WN18Dataset", "FB15kDataset",
           "KinshipDataset", "NationsDataset", "UMLSDataset"]

_ROTATE = "https://raw.githubusercontent.com/DeepGraphLearning/KnowledgeGraphEmbedding/master/data/{}/{}"
_CONVE = "https://github.com/TimDettmers/ConvE/raw/master/{}.tar.gz"
SPLITS = ("train", "valid", "test")

# name -> (folder in the data dir, upstream folder, {file: sha256} or None)
# Training files of FB15k-237 and WN18 are stored gzip-compressed in the offline copy; their sha256 is
# of the decompressed text, which is what upstream serves as train.txt.
_DICT_SETS: dict[str, tuple[str, str, dict[str, str] | None]] = {
    "FB15k-237": ("kg/FB15k-237", "FB15k-237", {
        "entities.dict": "55666c4fb9c2990ef809e41d3a0023503b1f927fd00a1c947f21a805608f50ac",
        "relations.dict": "e98ebcc621a217ca80d44992cdf0ef5f0eb355ff9aff0ba1a3e939f6ca8fb095",
        "train.txt": "61099230e4439f90885ca9767739e31e8e32f54736fa1c35952b27997bc7c08a",
        "valid.txt": "749cbe9d923bac7b9354da5614ecfed2e0220256d442c3e04a6b303db1f273d9",
        "test.txt": "e2e35e8e6113de220140b6f44dc71a5207b0fc6872d575e874aefe13259b655b"}),
    "WN18RR": ("kg/WN18RR", "wn18rr", {
        "entities.dict": "3dc41455a835d7523b68a2d449a8ae9429ba8cf8be7db7e29b4cbadf6fbc092f",
        "relations.dict": "0cf033f5ea243c938d86e8e5e89b43676df040b9196ce495b92382e54ad59916",
        "train.txt": "038612e783c215ee5f3ca9fbfca27b8d0739be1028fe4ee7c174aecf0b83d5df",
        "valid.txt": "453ce7202afa58094a04d2b1560ee2b02660f1c260b32ce6651c8ccedd1028ab",
        "test.txt": "0383bceaaa1096cf3c03ec021ed0048068e2355dbfc0239b292cefdac821cec5"}),
    "WN18": ("kg/WN18", "wn18", {
        "entities.dict": "c293c2541b89dc0b4a782b976918a08cfb241336084fadf541784b3685612e4d",
        "relations.dict": "686f444b1bdbd7bc43a27cabcc4626be0ec010c414a8b34fbb82e9d72fbc8139",
        "train.txt": "24c9b02dc57d3ae8ca8467ce355995edee7be8eddc3bd070ee34d3c6fc3c95eb",
        "valid.txt": "13347bfb5e17d1cae003e0bfe29b4716d3ab748e8cfb6af997138d37da3a51dc",
        "test.txt": "d22c19d176d4ba6a6f0d0c6bfce39ab3c16e3b20e1df6f9efe0d9ed86542fa10"}),
    "FB15k": ("kg/FB15k", "FB15k", None),
}

# The small sets ship only inside ConvE's tarballs (Dettmers et al., AAAI 2018).
_SMALL_SETS: dict[str, dict[str, str]] = {
    "kinship": {
        "train.txt": "738612111a6acf0e39662bde24c7e72a4d1edf20931beea077da367dda689731",
        "valid.txt": "c56f8630a583178b1e569f11a64aa535ae1ce0b0912d8b1e24716be2b37f04da",
        "test.txt": "05e5733265761d55be9c05bfaff5a8d0808df46f9c1e9d66cc3f2fe114e43d88"},
    "nations": {
        "train.txt": "0830fa9da8e5bba2ccdaa45b7bdc9130451ba66b09ff2708f35fccaf82473e57",
        "valid.txt": "2b337a62e51a2f45c283eac98a70d21b7e0e102136be1539b2a52c652a7b0530",
        "test.txt": "3971085165b47b6aeaec68058c6d8d98b3005e929db81268410b95ae4db770ab"},
    "umls": {
        "train.txt": "873ef4925516b83e7f6f8cc02b4be51d848828710a7f65a956f0ac4a9e452f35",
        "valid.txt": "025c98f8a4891e2a6582ec5b40ee0d904031edad9c52554522f4b7904820c98e",
        "test.txt": "a7eb529a3d2810fcc96341ccc97c625a5e202f8389673aa6bd317eeebbb79014"},
}

NAMES = tuple(_DICT_SETS) + tuple(_SMALL_SETS)


def kg_files(name: str) -> tuple[RemoteFile, ...]:
    """The raw files of knowledge graph ``name`` (one of :data:`NAMES`)."""
    if name in _DICT_SETS:
        folder, upstream, sums = _DICT_SETS[name]
        return tuple(RemoteFile(f"{folder}/{fn}", (sums or {}).get(fn), _ROTATE.format(upstream, fn), gzip_ok=True)
                     for fn in ("entities.dict", "relations.dict") + tuple(f"{s}.txt" for s in SPLITS))
    sums = _SMALL_SETS[name]
    return tuple(RemoteFile(f"kg/small/{name}/{s}.txt", sums[f"{s}.txt"], _CONVE.format(name),
                            member=f"{s}.txt", gzip_ok=True) for s in SPLITS)


def _read_dict(path: Any) -> dict[str, int]:
    rows = str_table(read_text(path), path, 2)
    out: dict[str, int] = {}
    for i, (num, key) in enumerate(rows, 1):
        if not num.isdigit():
            raise DataFormatError(path, f"id {num!r} is not a non-negative integer", line=i)
        if key in out:
            raise DataFormatError(path, f"name {key!r} appears twice", line=i)
        out[key] = int(num)
    ids = np.fromiter(out.values(), dtype=np.int64, count=len(out))
    if not np.array_equal(np.sort(ids), np.arange(len(ids))):
        raise DataFormatError(path, f"ids must be 0..{len(ids) - 1}, each once")
    return out


def _to_ids(rows: list[list[str]], col: int, table: dict[str, int], path: Any, what: str) -> np.ndarray:
    try:
        return np.fromiter((table[r[col]] for r in rows), dtype=np.int64, count=len(rows))
    except KeyError:
        i = next(i for i, r in enumerate(rows) if r[col] not in table)
        raise DataFormatError(path, f"{what} {rows[i][col]!r} is not in the dictionary", line=i + 1) from None


class KnowledgeGraphDataset(Dataset):
    """Knowledge graph ``name`` (one of ``FB15k-237, WN18RR, WN18, FB15k, kinship, nations, umls``).

    Parameters
    ----------
    name : str
    raw_dir, download, mirror, verify, progress, transform
        See :class:`~nodeweave.data.Dataset`.
    reverse, reverse_edge : bool
        Add a reverse edge of type ``relation + num_rels`` for every triple in the graph view
        (default True, as in DGL). ``reverse_edge`` is the same option under the name every
        dataset takes; give either.

    Attributes
    ----------
    train, valid, test : numpy.ndarray
        ``(n, 3)`` int64 ``(head, relation, tail)``.
    entity2id, relation2id : dict[str, int]
    num_nodes, num_rels : int
    """

    def __init__(self, name: str, raw_dir: str | os.PathLike | None = None, *, reverse: bool | None = None,
                 download: bool = True, mirror: str | None = None, verify: bool = True,
                 progress: bool | None = None, transform: Callable[[Any], Any] | None = None,
                 reverse_edge: bool | None = None) -> None:
        if name not in NAMES:
            raise nwerr.ValueError(f"KnowledgeGraphDataset: name must be one of {list(NAMES)}, got {name!r}")
        self.name = name
        self.reverse = reverse_option(reverse, "reverse", reverse_edge, type(self).__name__)
        self.reverse_edge = self.reverse
        self.files = kg_files(name)
        self._graph = None
        super().__init__(raw_dir, download=download, mirror=mirror, verify=verify, progress=progress,
                         transform=transform)

    def _load(self) -> None:
        folder = self.files[0].path.rsplit("/", 1)[0]
        paths = {s: self.raw_path(f"{folder}/{s}.txt") for s in SPLITS}
        rows = {s: str_table(read_text(p), p, 3) for s, p in paths.items()}
        if self.name in _DICT_SETS:
            self.entity2id = _read_dict(self.raw_path(f"{folder}/entities.dict"))
            self.relation2id = _read_dict(self.raw_path(f"{folder}/relations.dict"))
        else:
            every = [r for s in SPLITS for r in rows[s]]
            self.entity2id = {k: i for i, k in enumerate(sorted({r[0] for r in every} | {r[2] for r in every}))}
            self.relation2id = {k: i for i, k in enumerate(sorted({r[1] for r in every}))}
        for s in SPLITS:
            p, r = paths[s], rows[s]
            trip = np.stack([_to_ids(r, 0, self.entity2id, p, "entity"),
                             _to_ids(r, 1, self.relation2id, p, "relation"),
                             _to_ids(r, 2, self.entity2id, p, "entity")], axis=1) if r else np.zeros((0, 3), np.int64)
            setattr(self, s, trip)
        self.num_nodes = len(self.entity2id)
        self.num_rels = len(self.relation2id)

    def _build_graph(self) -> Any:
        import nodeweave as nw

        trip = np.concatenate([self.train, self.valid, self.test])
        sizes = [len(self.train), len(self.valid), len(self.test)]
        split = np.repeat(np.arange(3), sizes)
        src, rel, dst = trip[:, 0], trip[:, 1], trip[:, 2]
        masks = {k: split == i for i, k in enumerate(("train", "val", "test"))}
        if self.reverse:
            src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
            rel = np.concatenate([rel, rel + self.num_rels])
            none = np.zeros(len(trip), dtype=bool)
            edge_masks = {k: np.concatenate([m, m]) for k, m in masks.items()}
            masks = {k: np.concatenate([m, none]) for k, m in masks.items()}
        else:
            edge_masks = masks
        g = nw.graph((src, dst), num_nodes=self.num_nodes)
        g.edata["etype"] = to_tensor(rel)
        for k in masks:
            g.edata[f"{k}_mask"] = to_tensor(masks[k])
            g.edata[f"{k}_edge_mask"] = to_tensor(edge_masks[k])
        return g

    def __len__(self) -> int:
        return 1

    def __getitem__(self, idx: int) -> Any:
        _single_index(idx, type(self).__name__)
        if self._graph is None:
            self._graph = self._build_graph()
        return self._transformed(self._graph)


class FB15k237Dataset(KnowledgeGraphDataset):
    """FB15k-237 (Toutanova & Chen 2015): 14541 entities, 237 relations, 272115 / 17535 / 20466 triples."""

    def __init__(self, raw_dir: str | os.PathLike | None = None, **kwargs: Any) -> None:
        super().__init__("FB15k-237", raw_dir, **kwargs)


class WN18RRDataset(KnowledgeGraphDataset):
    """WN18RR (Dettmers et al. 2018): 40943 entities, 11 relations, 86835 / 3034 / 3134 triples."""

    def __init__(self, raw_dir: str | os.PathLike | None = None, **kwargs: Any) -> None:
        super().__init__("WN18RR", raw_dir, **kwargs)


class WN18Dataset(KnowledgeGraphDataset):
    """WN18 (Bordes et al. 2013): 40943 entities, 18 relations, 141442 / 5000 / 5000 triples."""

    def __init__(self, raw_dir: str | os.PathLike | None = None, **kwargs: Any) -> None:
        super().__init__("WN18", raw_dir, **kwargs)


class FB15kDataset(KnowledgeGraphDataset):
    """FB15k (Bordes et al. 2013): 14951 entities, 1345 relations, 483142 / 50000 / 59071 triples.

    Not in the offline copy and no checksums are recorded: download it with ``verify=False``.
    """

    def __init__(self, raw_dir: str | os.PathLike | None = None, **kwargs: Any) -> None:
        super().__init__("FB15k", raw_dir, **kwargs)


class KinshipDataset(KnowledgeGraphDataset):
    """kinship (ConvE's copy): 104 entities, 25 relations, 8544 / 1068 / 1074 triples."""

    def __init__(self, raw_dir: str | os.PathLike | None = None, **kwargs: Any) -> None:
        super().__init__("kinship", raw_dir, **kwargs)


class NationsDataset(KnowledgeGraphDataset):
    """nations (ConvE's copy): 14 entities, 55 relations, 1592 / 199 / 201 triples."""

    def __init__(self, raw_dir: str | os.PathLike | None = None, **kwargs: Any) -> None:
        super().__init__("nations", raw_dir, **kwargs)


class UMLSDataset(KnowledgeGraphDataset):
    """umls (ConvE's copy): 135 entities, 46 relations, 5216 / 652 / 661 triples."""

    def __init__(self, raw_dir: str | os.PathLike | None = None, **kwargs: Any) -> None:
        super().__init__("umls", raw_dir, **kwargs)
