"""Planetoid citation graphs (Cora, Citeseer, Pubmed) with the public GCN split.

Files ``planetoid/raw/ind.<name>.{x,y,tx,ty,allx,ally,graph,test.index}`` from the Planetoid
repository (Yang, Cohen, Salakhutdinov, ICML 2016; split of Kipf & Welling, ICLR 2017). The pickles
are read with a whitelisting unpickler (:mod:`nodeweave.data.safe_pickle`): they cannot run code.

``ds[0]`` follows DGL's ``CoraGraphDataset`` conventions:

- nodes ``0..len(allx)-1`` take the rows of ``allx``/``ally``; test node ``test.index[k]`` takes row
  ``k`` of ``tx``/``ty``. Citeseer's ``test.index`` leaves 15 ids of its range unused: those isolated
  nodes get zero features and label 0 and lie in no mask.
- edges: the adjacency lists made symmetric (both directions), duplicates removed, self-loops kept
  once, as in the raw graph; sorted by (source, destination). With ``reverse_edge=False`` each
  undirected edge appears once, as ``(smaller id, larger id)``.
- ``ndata['feat']`` float32, row-normalized like DGL's (each row sums to 1; pass
  ``normalize_features=False`` for the raw binary / TF-IDF values), ``ndata['label']`` int64,
  ``ndata['train_mask'|'val_mask'|'test_mask']`` bool: the first ``len(y)`` nodes, the next 500, and
  the ``test.index`` ids.

=========  =====  ==============  ========  =======  ===============
dataset    nodes  directed edges  features  classes  train/val/test
=========  =====  ==============  ========  =======  ===============
Cora       2708   10556           1433      7        140/500/1000
Citeseer   3327   9228            3703      6        120/500/1000
Pubmed     19717  88648           500       3        60/500/1000
=========  =====  ==============  ========  =======  ===============

Citeseer's 9228 edges are its 4552 undirected edges in both directions plus 124 self-loops kept once.
No sha256 is recorded for Pubmed's files (they were not available when this loader was written):
download them yourself into ``planetoid/raw/``, or pass ``verify=False``.

>>> from nodeweave.data import CoraGraphDataset
>>> ds = CoraGraphDataset()
>>> g = ds[0]
>>> g.num_nodes(), g.num_edges(), ds.num_classes
(2708, 10556, 7)
>>> int(g.ndata["train_mask"].numpy().sum()), tuple(g.ndata["feat"].shape)
(140, (2708, 1433))
"""

from __future__ import annotations

import itertools
import os
from typing import Any, Callable

import numpy as np

from nodeweave.data.dataset import Dataset, _single_index, to_tensor
from nodeweave.data.download import RemoteFile
from nodeweave.data.errors import DataFormatError
from nodeweave.data.safe_pickle import load_pickle, to_csr
from nodeweave.data.text_tables import int_table, read_bytes
from nodeweave.transforms._checks import flag
from nodeweave import errors as nwerr

__all__ = ["PlanetoidDataset", "CoraGraphDataset", "CiteseerGraphDataset", "PubmedGraphDataset"]

URL = "https://github.com/kimiyoung/planetoid/raw/master/data/ind.{name}.{ext}"
EXTS = ("x", "y", "tx", "ty", "allx", "ally", "graph", "test.index")
NUM_VAL = 500

SHA256: dict[str, dict[str, str] | None] = {
    "cora": {
        "x": "23cfa55d91c6f624233f5eb7b6e3f141f1bd2b2ae39608a63cf5d084bb27baab",
        "y": "94465c14eb53e04ca262198dcbb2521ee8af60fb3f3d546cd6ca24a511b0e7d1",
        "tx": "b9afbaa4a400df991f6f02ef677e1e44da55ffc04801fd02f9e673987829226a",
        "ty": "41f5ac76596a1699cc33f53084a2419e92961c42bb75f36fc38e616d348532ad",
        "allx": "9419ba2f26f5c35243db64aba110e0f35a04851609e0dc5433450676ca6b8543",
        "ally": "2b998f5cc7fedc86e7f97ca2498f47a1ffc1462c29e2d578b23bf3f62b6e7d71",
        "graph": "58f13302f39dde8852dad6fe6d15b89b077b6d7f837626bce671ef80344b383d",
        "test.index": "297ce89af2b51a6a194181c7dbe1796c6a1cf9cd9349a88383b1b1e227867875",
    },
    "citeseer": {
        "x": "d20de19150741e555de0ed037195630fc194114ebc7fd72ced62810148aa22f6",
        "y": "8ba87e515d8e3ee3cf52f6d2c5b86aa73f11ecad825a808455209ec26cd54924",
        "tx": "539a8906a2da97628d212f2fdd668c109a8b3f0d36574b59e5d3fd5b5303da21",
        "ty": "55e5bd1ba1e733a04598753ad1a8d57957f4b8f89e74519f41f4f4938767e4ce",
        "allx": "2ac30345d95c9ec933a817ee0bdd6a5f077f8c184a20e696910192d534414668",
        "ally": "f704b2d986dde6c2669934de1f3ae5696a6cf9455c0f6b2646a2d135ea0a1c95",
        "graph": "d79a4ef9d3e7169aee8946145f6b7306e35bc79bffad26346cfb94e10e9912a7",
        "test.index": "2af990671580b6b2df5d158d1038f8292e30c9cd821b5453f399659b25b723d4",
    },
    "pubmed": None,  # not available offline when this was written: no checksum to record
}


def planetoid_files(name: str) -> tuple[RemoteFile, ...]:
    """The raw files of Planetoid dataset ``name`` ('cora', 'citeseer' or 'pubmed')."""
    sums = SHA256[name] or {}
    return tuple(RemoteFile(f"planetoid/raw/ind.{name}.{ext}", sums.get(ext), URL.format(name=name, ext=ext))
                 for ext in EXTS)


def _dense_labels(arr: Any, path: Any) -> np.ndarray:
    if not isinstance(arr, np.ndarray) or arr.ndim != 2 or arr.dtype.kind not in "biuf":
        raise DataFormatError(path, f"expected a 2-D one-hot label array, got {_describe(arr)}")
    return arr


def _describe(obj: Any) -> str:
    if isinstance(obj, np.ndarray):
        return f"an array of shape {obj.shape} and dtype {obj.dtype}"
    return type(obj).__name__


def _edges_from_adjacency(adj: Any, n: int, path: Any) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric, duplicate-free (src, dst) from a ``{node: [neighbours]}`` dict, sorted."""
    if not isinstance(adj, dict):
        raise DataFormatError(path, f"expected a dict of adjacency lists, got {type(adj).__name__}")
    keys = list(adj.keys())
    lists = [adj[k] for k in keys]
    if not all(isinstance(k, int) and not isinstance(k, bool) for k in keys) or \
            not all(isinstance(v, list) for v in lists):
        raise DataFormatError(path, "adjacency dict must map int node ids to lists of ints")
    lengths = np.fromiter((len(v) for v in lists), dtype=np.int64, count=len(lists))
    try:
        dst = np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int64, count=int(lengths.sum()))
    except (TypeError, ValueError, OverflowError):
        raise DataFormatError(path, "adjacency lists must hold int node ids") from None
    src = np.repeat(np.asarray(keys, dtype=np.int64), lengths)
    for arr in (src, dst):
        if arr.size and (arr.min() < 0 or arr.max() >= n):
            bad = int(arr[(arr < 0) | (arr >= n)][0])
            raise DataFormatError(path, f"node id {bad} is outside 0..{n - 1}")
    key = np.unique(np.concatenate([src * n + dst, dst * n + src]))
    return key // n, key % n


class PlanetoidDataset(Dataset):
    """Planetoid citation graph ``name`` ('cora', 'citeseer' or 'pubmed'); see the module docs.

    Parameters
    ----------
    name : str
        Dataset name (case-insensitive).
    raw_dir, download, mirror, verify, progress, transform
        See :class:`~nodeweave.data.Dataset`.
    normalize_features : bool
        Row-normalize ``feat`` as DGL does (default True).
    reverse_edge : bool
        Both directions of every undirected edge (default True, as DGL); False keeps each once.

    Attributes
    ----------
    num_classes : int
    reverse_edge : bool
    """

    def __init__(self, name: str, raw_dir: str | os.PathLike | None = None, *, normalize_features: bool = True,
                 reverse_edge: bool = True, download: bool = True, mirror: str | None = None,
                 verify: bool = True, progress: bool | None = None,
                 transform: Callable[[Any], Any] | None = None) -> None:
        if not isinstance(name, str) or name.lower() not in SHA256:
            raise nwerr.ValueError(f"PlanetoidDataset: name must be one of {sorted(SHA256)}, got {name!r}")
        self.name = name.lower()
        self.files = planetoid_files(self.name)
        self._normalize = bool(normalize_features)
        self.reverse_edge = flag(reverse_edge, "reverse_edge", "PlanetoidDataset")
        super().__init__(raw_dir, download=download, mirror=mirror, verify=verify, progress=progress,
                         transform=transform)

    def _path(self, ext: str):
        return self.raw_path(f"planetoid/raw/ind.{self.name}.{ext}")

    def _load(self) -> None:
        import nodeweave as nw

        p = {ext: self._path(ext) for ext in EXTS}
        x, tx, allx = (to_csr(load_pickle(p[e]), p[e]) for e in ("x", "tx", "allx"))
        y, ty, ally = (_dense_labels(load_pickle(p[e]), p[e]) for e in ("y", "ty", "ally"))
        adj = load_pickle(p["graph"])
        test_idx = int_table(read_bytes(p["test.index"]), p["test.index"], 1, commas=False).ravel()

        n_all, n_feat, n_cls = allx.shape[0], allx.shape[1], ally.shape[1]
        for arr, e in ((x, "x"), (tx, "tx")):
            if arr.shape[1] != n_feat:
                raise DataFormatError(p[e], f"has {arr.shape[1]} feature columns, allx has {n_feat}")
        for arr, e in ((y, "y"), (ty, "ty")):
            if arr.shape[1] != n_cls:
                raise DataFormatError(p[e], f"has {arr.shape[1]} label columns, ally has {n_cls}")
        if ally.shape[0] != n_all or y.shape[0] != x.shape[0] or ty.shape[0] != tx.shape[0]:
            raise DataFormatError(p["ally"], "feature and label row counts differ "
                                  f"(x {x.shape[0]}/y {y.shape[0]}, allx {n_all}/ally {ally.shape[0]}, "
                                  f"tx {tx.shape[0]}/ty {ty.shape[0]})")
        if len(test_idx) != tx.shape[0]:
            raise DataFormatError(p["test.index"], f"lists {len(test_idx)} ids but tx has {tx.shape[0]} rows")
        if len(np.unique(test_idx)) != len(test_idx) or (len(test_idx) and test_idx.min() < n_all):
            raise DataFormatError(p["test.index"], f"test ids must be distinct and at least len(allx)={n_all}")
        n_train = y.shape[0]
        if n_train + NUM_VAL > n_all:
            raise DataFormatError(p["allx"], f"has {n_all} rows, fewer than train + validation = {n_train + NUM_VAL}")

        n = max(n_all, int(test_idx.max()) + 1 if len(test_idx) else 0)
        feat = np.zeros((n, n_feat), dtype=np.float32)
        feat[:n_all] = allx.toarray()
        feat[test_idx] = tx.toarray()
        onehot = np.zeros((n, n_cls), dtype=np.float32)
        onehot[:n_all] = ally
        onehot[test_idx] = ty
        label = onehot.argmax(1).astype(np.int64)  # rows without a label (Citeseer's gaps) give 0, as in DGL
        if self._normalize:
            rowsum = feat.sum(1, keepdims=True)
            np.divide(feat, rowsum, out=feat, where=rowsum > 0)

        src, dst = _edges_from_adjacency(adj, n, p["graph"])
        if not self.reverse_edge:
            once = src <= dst
            src, dst = src[once], dst[once]
        masks = {name: np.zeros(n, dtype=bool) for name in ("train_mask", "val_mask", "test_mask")}
        masks["train_mask"][:n_train] = True
        masks["val_mask"][n_train:n_train + NUM_VAL] = True
        masks["test_mask"][test_idx] = True

        g = nw.graph((src, dst), num_nodes=n)
        g.ndata["feat"] = to_tensor(feat)
        g.ndata["label"] = to_tensor(label)
        for k, m in masks.items():
            g.ndata[k] = to_tensor(m)
        self._graph = g
        self.num_classes = int(n_cls)

    def __len__(self) -> int:
        return 1

    def __getitem__(self, idx: int) -> Any:
        _single_index(idx, type(self).__name__)
        return self._transformed(self._graph)


class CoraGraphDataset(PlanetoidDataset):
    """Cora: 2708 nodes, 10556 directed edges, 1433 features, 7 classes, split 140/500/1000.

    >>> from nodeweave.data import CoraGraphDataset
    >>> CoraGraphDataset()[0].ndata["label"].dtype
    nodeweave.core.int64
    """

    def __init__(self, raw_dir: str | os.PathLike | None = None, **kwargs: Any) -> None:
        super().__init__("cora", raw_dir, **kwargs)


class CiteseerGraphDataset(PlanetoidDataset):
    """Citeseer: 3327 nodes, 9228 directed edges, 3703 features, 6 classes, split 120/500/1000.

    >>> from nodeweave.data import CiteseerGraphDataset
    >>> g = CiteseerGraphDataset()[0]
    >>> g.num_nodes(), g.num_edges()
    (3327, 9228)
    """

    def __init__(self, raw_dir: str | os.PathLike | None = None, **kwargs: Any) -> None:
        super().__init__("citeseer", raw_dir, **kwargs)


class PubmedGraphDataset(PlanetoidDataset):
    """Pubmed: 19717 nodes, 88648 directed edges, 500 TF-IDF features, 3 classes, split 60/500/1000.

    Its files are not in the offline data copy and no sha256 is recorded for them: place them in
    ``<data dir>/planetoid/raw/`` or pass ``verify=False`` to download them unverified.

    >>> import tempfile
    >>> from nodeweave.data import PubmedGraphDataset
    >>> PubmedGraphDataset(raw_dir=tempfile.mkdtemp(), download=False)
    Traceback (most recent call last):
    ...
    nodeweave.errors.FileNotFoundError: PubmedGraphDataset: 8 raw file(s) missing and download=False:
    ...planetoid/raw/ind.pubmed.x  <-  https://github.com/kimiyoung/planetoid/raw/master/data/ind.pubmed.x
    ...
    """

    def __init__(self, raw_dir: str | os.PathLike | None = None, **kwargs: Any) -> None:
        super().__init__("pubmed", raw_dir, **kwargs)
