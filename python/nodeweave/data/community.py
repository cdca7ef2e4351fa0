"""Plain edge lists with community labels, as used to evaluate node embeddings (node2vec, ProNE):
the node2vec version of PPI (multi-label) and DBLP (single-label).

Files: ``<name>.ungraph``, one ``u<TAB>v`` line per undirected edge (0-based ids, each edge once),
and ``<name>.cmty``, one line per label listing its nodes. ``ds[0]`` is the undirected graph with
both directions of every edge (a self-loop appears once) and sorted edges; with
``reverse_edge=False``, each undirected edge once, as ``(smaller id, larger id)``.

- :class:`PPINode2VecDataset`: 3890 nodes, 37845 edges + 894 self-loops (76584 directed edges),
  50 overlapping labels as ``ndata['label']``, a float32 multi-hot ``(3890, 50)`` matrix. It is the
  protein network of node2vec (Grover & Leskovec 2016), not GraphSAGE's 24-graph PPI of DGL's
  ``PPIDataset``, hence the name.
- :class:`DBLPDataset`: 51264 nodes, 127968 edges (255936 directed), 60 classes, one per node, as
  ``ndata['label']`` int64. No public URL is known for this preprocessed copy: it comes from a local
  directory or a mirror.

>>> from nodeweave.data import PPINode2VecDataset
>>> ds = PPINode2VecDataset()
>>> g = ds[0]
>>> g.num_nodes(), g.num_edges(), tuple(g.ndata["label"].shape), ds.num_classes
(3890, 76584, (3890, 50), 50)
"""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np

from nodeweave.data.dataset import Dataset, _single_index, to_tensor
from nodeweave.data.download import RemoteFile
from nodeweave.data.errors import DataFormatError
from nodeweave.data.text_tables import int_table, read_bytes
from nodeweave.transforms._checks import flag

__all__ = ["PPINode2VecDataset", "DBLPDataset"]


def _read_communities(path: Any) -> list[np.ndarray]:
    """The node ids listed on each line of a ``.cmty`` file (whitespace-separated integers)."""
    data = read_bytes(path)
    lines = data.rstrip().split(b"\n") if data.strip() else []
    out = []
    for i, line in enumerate(lines, 1):
        fields = line.split()
        if not fields:
            raise DataFormatError(path, "empty line inside the community list", line=i)
        try:
            ids = np.fromstring(line, dtype=np.int64, sep=" ")
        except ValueError:
            ids = None
        if ids is None or ids.size != len(fields):
            bad = next((f for f in fields if not f.lstrip(b"-").isdigit()), fields[0])
            raise DataFormatError(path, f"{bad.decode('utf-8', 'replace')!r} is not an integer node id", line=i)
        out.append(ids)
    return out


class _CommunityDataset(Dataset):
    multi_label = False

    def __init__(self, raw_dir: str | os.PathLike | None = None, *, download: bool = True,
                 mirror: str | None = None, verify: bool = True, progress: bool | None = None,
                 transform: Callable[[Any], Any] | None = None, reverse_edge: bool = True) -> None:
        self.reverse_edge = flag(reverse_edge, "reverse_edge", type(self).__name__)
        super().__init__(raw_dir, download=download, mirror=mirror, verify=verify, progress=progress,
                         transform=transform)

    def _load(self) -> None:
        import nodeweave as nw

        ep, cp = self.raw_path(self.files[0].path), self.raw_path(self.files[1].path)
        edges = int_table(read_bytes(ep), ep, 2, commas=False)
        comms = _read_communities(cp)
        if not comms:
            raise DataFormatError(cp, "file is empty")
        n = int(max(edges.max(initial=-1), max(int(c.max(initial=-1)) for c in comms))) + 1
        for arr, p in [(edges, ep)] + [(c, cp) for c in comms]:
            if arr.size and arr.min() < 0:
                raise DataFormatError(p, f"negative node id {int(arr.min())}")
        u, v = edges[:, 0], edges[:, 1]
        lo, hi = np.minimum(u, v), np.maximum(u, v)
        key = np.unique(np.concatenate([lo * n + hi, hi * n + lo]) if self.reverse_edge else lo * n + hi)
        g = nw.graph((key // n, key % n), num_nodes=n)
        if self.multi_label:
            label = np.zeros((n, len(comms)), dtype=np.float32)
            for c, members in enumerate(comms):
                label[members, c] = 1.0
        else:
            label = np.full(n, -1, dtype=np.int64)
            for c, members in enumerate(comms):
                taken = members[label[members] >= 0]
                if taken.size:
                    raise DataFormatError(cp, f"node {int(taken[0])} is in two classes, but {self.name} is "
                                          "single-label", line=c + 1)
                label[members] = c
            if np.any(label < 0):
                raise DataFormatError(cp, f"node {int(np.flatnonzero(label < 0)[0])} has no class")
        g.ndata["label"] = to_tensor(label)
        self._graph = g
        self.num_classes = len(comms)

    def __len__(self) -> int:
        return 1

    def __getitem__(self, idx: int) -> Any:
        _single_index(idx, type(self).__name__)
        return self._transformed(self._graph)


class PPINode2VecDataset(_CommunityDataset):
    """node2vec's PPI network: 3890 nodes, 76584 directed edges, 50 overlapping labels (multi-hot)."""

    name = "PPI (node2vec)"
    multi_label = True
    files = (
        RemoteFile("ppi_node2vec/PPI.ungraph", "853faf8f8f9705d0ccf2f12db80277cc779ccef04ba6a8703671138dca76796a",
                   "https://raw.githubusercontent.com/THUDM/ProNE/master/data/PPI.ungraph"),
        RemoteFile("ppi_node2vec/PPI.cmty", "d57a61e7cc5c46acafdd370c5126a2a5c57cb23f1a84ed1d0877f20149c90637",
                   "https://raw.githubusercontent.com/THUDM/ProNE/master/data/PPI.cmty"),
    )


class DBLPDataset(_CommunityDataset):
    """DBLP co-authorship graph of ProNE's evaluation: 51264 nodes, 255936 directed edges, 60 classes.

    No public download URL is recorded (local copy or mirror only).
    """

    name = "DBLP (ProNE)"
    files = (
        RemoteFile("dblp_prone/dblp.ungraph", "dfffc3dacacfc2af2b0b924e14d9b5730702c27cf86cc59a3b8d1822e4f6aaee", None),
        RemoteFile("dblp_prone/dblp.cmty", "9d18fa32e37ff9f1489321f94586ec8022026c8fe6f19a78bf1d51ca4cbea6b9", None),
    )
