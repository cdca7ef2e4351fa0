"""Graph classification sets in the TU Dortmund format (Morris et al. 2020, https://chrsmrrs.github.io/datasets/).

Files ``tu/<NAME>/<NAME>_*.txt``: ``_A.txt`` (one ``i, j`` line per directed edge, 1-based node ids,
both directions of every undirected edge), ``_graph_indicator.txt`` (graph id of each node, 1-based,
non-decreasing), ``_graph_labels.txt``, ``_node_labels.txt`` and, where the set has them,
``_edge_labels.txt`` (one per line of ``_A.txt``) and ``_node_attributes.txt`` (comma-separated
floats per node). Upstream ships one zip per set; the extracted files are verified one by one.

Conventions of ``ds[i] -> (graph, label)``:

- edges exactly as listed in ``_A.txt`` (so ``num_edges`` counts both directions), in file order;
  with ``reverse_edge=False`` each undirected edge once (``u -> v`` with ``u <= v``, and an edge
  listed in one direction only as it is);
- ``ndata['feat']`` float32 = one-hot of the node label, column ``label - min_label`` over the whole
  set (width ``max - min + 1``, the PyG convention), followed by the node attributes where present;
  ``ndata['node_label']`` int64 holds ``label - min_label``;
- where edge labels exist: ``edata['edge_label']`` int64 (``label - min``) and ``edata['feat']``
  float32, its one-hot;
- the graph label is int64 in ``0..num_classes-1``: the sorted distinct raw labels are numbered in
  order (MUTAG's -1/1 become 0/1).

The sets have no standard split: use :func:`~nodeweave.data.kfold_split` (stratified k-fold).

=========  ======  ======  ================  =======  ===========
set        graphs  nodes   undirected edges  classes  feat width
=========  ======  ======  ================  =======  ===========
MUTAG      188     3371    3721              2        7
PTC_MR     344     4915    5054              2        18
PROTEINS   1113    43471   81044             2        3 + 1 attr
NCI1       4110    122747  132753            2        37
NCI109     4127    122494  132604            2        38
=========  ======  ======  ================  =======  ===========

Graphs are built on first access and kept, so constructing a large set costs only the parsing.

>>> from nodeweave.data import TUDataset
>>> ds = TUDataset("MUTAG")
>>> len(ds), ds.num_classes
(188, 2)
>>> g, label = ds[0]
>>> g.num_nodes(), g.num_edges(), tuple(g.ndata["feat"].shape), int(label)
(17, 38, (17, 7), 1)
"""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np

from nodeweave.data.dataset import Dataset, once_per_pair, to_tensor
from nodeweave.data.download import RemoteFile
from nodeweave.data.errors import DataFormatError
from nodeweave.data.text_tables import float_table, int_table, read_bytes
from nodeweave.transforms._checks import flag
from nodeweave import errors as nwerr

__all__ = ["TUDataset"]

URL = "https://www.chrsmrrs.com/graphkerneldatasets/{}.zip"

SHA256: dict[str, dict[str, str]] = {
    "MUTAG": {
        "A": "d9656ca7493f3445d737c711710bb36fd432dddd1c0ea32e1d4713c86ebd28e2",
        "edge_labels": "4669ce755075ff86c3240709345745886400908fa637a49310459b9c267b3e56",
        "graph_indicator": "7d520a4d6c7961c0cdeabe076d8fe27e795b6d373485c9a2b744987e560a2056",
        "graph_labels": "a1518ea39ba3426bd42f57396b9c4baffe68e9adc718caeeab0119c6591a5f2c",
        "node_labels": "678f429965490e84dd27713017538c995fc05d1621beac910848b600015ee863"},
    "PTC_MR": {
        "A": "f79523ff94dfbef539e5602a8ac1931a50a2800f33fa1d30e5e31725289b5202",
        "edge_labels": "acee2f93b52175a329009dc837bea9db7c2a121c2ef0b1587b38bbe6fc9b8177",
        "graph_indicator": "d52754f3cbc54e29324f884b4c17200c16e06db0c499afae300b4fa1bb6d794b",
        "graph_labels": "64210accbe4c6c027535b1294e0da652b1f539667f7a2d4bf5121dcd8b00a224",
        "node_labels": "cc50d1e1c5f4c98b2100cf50c5ddd88ff28b419a9180d531046b75ce22983235"},
    "PROTEINS": {
        "A": "4c4b33e272fc95cac6d27ed6d5d12b9a852c8610e91fff59f8f0dbdd5a20df67",
        "graph_indicator": "8d4ff1e852a5c28561e9bffb44cf9490bc552b13a3b6156dd12dc7f44e9afc4a",
        "graph_labels": "c0ef9810c440775252872318d0c8adc385588e14bc4c47a2c34aa96ee3c7cdcd",
        "node_attributes": "54eef829abb37e458a5fbf3a3c581e48e5810e220463c2cd951856b9ceb08f07",
        "node_labels": "f758e8ad3d6e3c026b50833d75f6f90735b94eb3345e4243707f495ca8afea8d"},
    "NCI1": {
        "A": "2c028eda59a5fe96e2265a63d9ac236901bd9a7dc658498be13cd704a703076d",
        "graph_indicator": "ffe5acfa754b057d5ce0dc725c5aadb631628161886cc040d38c719635257dc5",
        "graph_labels": "fae44681e70113f496256ae87eaac33b7836e3a97fe8e023933b84fde6a5c8a2",
        "node_labels": "dc0a22b6cbff0c939de00373e823977ba32b358f560e4288d7602f7b51407ee2"},
    "NCI109": {
        "A": "9c0ae8c1e631f771663de1e095eb36604f4feeb512e46b90b0409f05f876bab6",
        "graph_indicator": "f86bb0249bf985be397f46c493879022cb068b1d4331215151442de1738c9163",
        "graph_labels": "8ab9932d5347b935e3aaa7be2f787cc78860fa1af9df836dd3f03cde6939b640",
        "node_labels": "d2ceda711b4ea4218909e5527325374d7e50c698b0d8a22567390a5526dbd6bc"},
}


def tu_files(name: str) -> tuple[RemoteFile, ...]:
    """The raw files of TU set ``name`` (members of its upstream zip)."""
    return tuple(RemoteFile(f"tu/{name}/{name}_{kind}.txt", sha, URL.format(name), member=f"{name}/{name}_{kind}.txt")
                 for kind, sha in SHA256[name].items())


def _one_hot(values: np.ndarray, width: int) -> np.ndarray:
    out = np.zeros((len(values), width), dtype=np.float32)
    out[np.arange(len(values)), values] = 1.0
    return out


class TUDataset(Dataset):
    """A TU Dortmund graph classification set: one of ``MUTAG, PTC_MR, PROTEINS, NCI1, NCI109``.

    Parameters
    ----------
    name : str
    raw_dir, download, mirror, verify, progress, transform
        See :class:`~nodeweave.data.Dataset`; ``transform`` applies to the graph of ``(graph, label)``.
    reverse_edge : bool
        Both directions of every edge, as the files list them (default True); False: each
        undirected edge once.

    Attributes
    ----------
    num_classes : int
    graph_labels : numpy.ndarray
        int64 label of every graph (``0..num_classes-1``).
    graph_label_values : numpy.ndarray
        The raw label behind each class id.
    num_nodes_per_graph, num_edges_per_graph : numpy.ndarray
    """

    def __init__(self, name: str, raw_dir: str | os.PathLike | None = None, *, download: bool = True,
                 mirror: str | None = None, verify: bool = True, progress: bool | None = None,
                 transform: Callable[[Any], Any] | None = None, reverse_edge: bool = True) -> None:
        if name not in SHA256:
            raise nwerr.ValueError(f"TUDataset: name must be one of {sorted(SHA256)}, got {name!r}")
        self.name = name
        self.reverse_edge = flag(reverse_edge, "reverse_edge", type(self).__name__)
        self.files = tu_files(name)
        super().__init__(raw_dir, download=download, mirror=mirror, verify=verify, progress=progress,
                         transform=transform)

    def _file(self, kind: str):
        return self.raw_path(f"tu/{self.name}/{self.name}_{kind}.txt")

    def _ints(self, kind: str, ncols: int = 1) -> tuple[np.ndarray, Any]:
        p = self._file(kind)
        arr = int_table(read_bytes(p), p, ncols)
        return (arr if ncols > 1 else arr.ravel()), p

    def _load(self) -> None:
        kinds = SHA256[self.name]
        gi, gi_path = self._ints("graph_indicator")
        glab, glab_path = self._ints("graph_labels")
        n, num_graphs = len(gi), len(glab)
        if n == 0 or num_graphs == 0:
            raise DataFormatError(gi_path if n == 0 else glab_path, "file is empty")
        step = np.diff(gi, prepend=1)
        bad = np.flatnonzero((step < 0) | (step > 1) | (gi < 1))
        if bad.size or gi[0] != 1:
            r = int(bad[0]) if bad.size else 0
            raise DataFormatError(gi_path, f"graph id {int(gi[r])} breaks the order: ids must start at 1 and "
                                  "never decrease or skip a graph", line=r + 1)
        if gi[-1] != num_graphs:
            raise DataFormatError(gi_path, f"names {int(gi[-1])} graphs but {glab_path.name} has {num_graphs} labels")
        gid = gi - 1
        counts = np.bincount(gid, minlength=num_graphs)
        self._node_off = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

        edges, a_path = self._ints("A", 2)
        if edges.size and (edges.min() < 1 or edges.max() > n):
            row = int(np.flatnonzero((edges < 1).any(1) | (edges > n).any(1))[0])
            raise DataFormatError(a_path, f"node id outside 1..{n}: {edges[row].tolist()}", line=row + 1)
        src, dst = edges[:, 0] - 1, edges[:, 1] - 1
        cross = np.flatnonzero(gid[src] != gid[dst])
        if cross.size:
            r = int(cross[0])
            raise DataFormatError(a_path, f"edge {edges[r].tolist()} joins graphs {int(gid[src[r]]) + 1} and "
                                  f"{int(gid[dst[r]]) + 1}", line=r + 1)
        listed = len(edges)
        keep = np.ones(listed, dtype=bool) if self.reverse_edge else once_per_pair(src, dst)
        src, dst = src[keep], dst[keep]
        egraph = gid[src]
        order = np.argsort(egraph, kind="stable")  # group edges by graph, keeping file order within each
        self._edge_order = order
        self._src, self._dst = src[order], dst[order]
        ecounts = np.bincount(egraph, minlength=num_graphs)
        self._edge_off = np.concatenate([[0], np.cumsum(ecounts)]).astype(np.int64)

        nlab, nl_path = self._ints("node_labels")
        if len(nlab) != n:
            raise DataFormatError(nl_path, f"has {len(nlab)} lines, {gi_path.name} has {n}")
        self._node_label_min = int(nlab.min())
        nlab = nlab - self._node_label_min
        feats = [_one_hot(nlab, int(nlab.max()) + 1)]
        if "node_attributes" in kinds:
            p = self._file("node_attributes")
            attr = float_table(read_bytes(p), p)
            if len(attr) != n:
                raise DataFormatError(p, f"has {len(attr)} lines, {gi_path.name} has {n}")
            feats.append(attr.astype(np.float32))
        self._feat = np.concatenate(feats, axis=1)
        self._node_label = nlab
        self._edge_label = None
        if "edge_labels" in kinds:
            elab, el_path = self._ints("edge_labels")
            if len(elab) != listed:
                raise DataFormatError(el_path, f"has {len(elab)} lines, {a_path.name} has {listed}")
            elab = elab - elab.min()
            self._edge_width = int(elab.max()) + 1  # of every listed edge, whichever are kept
            self._edge_label = elab[keep][order]

        self.graph_label_values, self.graph_labels = np.unique(glab, return_inverse=True)
        self.graph_labels = self.graph_labels.astype(np.int64).ravel()
        self.num_classes = len(self.graph_label_values)
        self.num_nodes_per_graph = counts.astype(np.int64)
        self.num_edges_per_graph = ecounts.astype(np.int64)
        self._graphs: list[Any] = [None] * num_graphs

    def _build(self, i: int) -> Any:
        import nodeweave as nw

        n0, n1 = self._node_off[i], self._node_off[i + 1]
        e0, e1 = self._edge_off[i], self._edge_off[i + 1]
        g = nw.graph((self._src[e0:e1] - n0, self._dst[e0:e1] - n0), num_nodes=int(n1 - n0))
        g.ndata["feat"] = to_tensor(self._feat[n0:n1])
        g.ndata["node_label"] = to_tensor(self._node_label[n0:n1])
        if self._edge_label is not None:
            lab = self._edge_label[e0:e1]
            g.edata["edge_label"] = to_tensor(lab)
            g.edata["feat"] = to_tensor(_one_hot(lab, self._edge_width))
        return g

    def __len__(self) -> int:
        return len(self.graph_labels)

    def _graph(self, idx: Any) -> tuple[Any, int]:
        """The stored graph ``idx`` (built on first access, before any transform) and its position."""
        if isinstance(idx, bool) or not isinstance(idx, (int, np.integer)):
            raise nwerr.TypeError(f"{type(self).__name__} index must be an int, got {type(idx).__name__}")
        n = len(self)
        if not -n <= idx < n:
            raise nwerr.IndexError(f"{type(self).__name__} {self.name}: index {idx} out of range for {n} graphs")
        i = int(idx) % n
        if self._graphs[i] is None:
            self._graphs[i] = self._build(i)
        return self._graphs[i], i

    def __getitem__(self, idx: int) -> tuple[Any, np.int64]:
        g, i = self._graph(idx)
        return self._transformed(g), self.graph_labels[i]
