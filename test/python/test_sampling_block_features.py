"""Sampled blocks carry every feature of the graph they come from, as DGL's do: node features on both
sides (rows of the block's ``srcdata[NID]`` / ``dstdata[NID]``), edge features (rows of ``edata[EID]``),
checked against NumPy indexing of the graph's features on both backends, through the sampler and the
DataLoader, on a homogeneous graph (as DGL's R-GCN mini-batch example reads ``edata[dgl.ETYPE]``) and a
heterograph. They are gathered when first read (Frame.set_lazy): tested for subframes, device moves,
pickling and bad arguments."""

import pickle

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
from nodeweave.graph.frame import Frame
from conftest import np_of


def _graph(rng):
    g = nw.graph((rng.integers(0, 40, 300), rng.integers(0, 40, 300)), num_nodes=40)
    B = nwb.current()
    g.ndata["feat"] = B.from_numpy(rng.standard_normal((40, 3)).astype(np.float32))
    g.ndata["label"] = B.from_numpy(rng.integers(0, 5, 40))
    g.ndata[nw.NTYPE] = B.from_numpy(rng.integers(0, 2, 40))
    g.edata[nw.ETYPE] = B.from_numpy(rng.integers(0, 7, 300))
    g.edata["w"] = B.from_numpy(rng.random((300, 2)).astype(np.float32))
    return g


def _check_block(b, g, skip=()):
    for side, frame_of in (("src", b.srcdata), ("dst", b.dstdata)):
        ids = np_of(frame_of[nw.NID])
        assert sorted(frame_of) == sorted(set(g.ndata) | {nw.NID})
        for name in g.ndata:
            if name not in skip:
                np.testing.assert_array_equal(np_of(frame_of[name]), np_of(g.ndata[name])[ids], err_msg=name)
    eids = np_of(b.edata[nw.EID])
    assert sorted(b.edata) == sorted(set(g.edata) | {nw.EID})
    for name in g.edata:
        np.testing.assert_array_equal(np_of(b.edata[name]), np_of(g.edata[name])[eids], err_msg=name)


def test_sampler_blocks_carry_every_feature(backend_name, rng):
    g = _graph(rng)
    _, _, blocks = nw.dataloading.NeighborSampler([4, 3]).sample(g, [0, 5, 9], random_seed=1)
    for b in blocks:
        _check_block(b, g)
    # the graph's own columns are untouched (the block's _ID columns are the ids, not g's features)
    assert nw.NID not in g.ndata and nw.EID not in g.edata


@pytest.mark.parametrize("num_workers", [0, 1])
def test_loader_blocks_carry_every_feature_next_to_the_prefetched_ones(backend_name, rng, num_workers):
    g = _graph(rng)
    sampler = nw.dataloading.NeighborSampler([5, 5], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loader = nw.dataloading.DataLoader(g, np.arange(12), sampler, batch_size=5, num_workers=num_workers)
    batches = 0
    for input_nodes, output_nodes, blocks in loader:
        batches += 1
        for b in blocks:
            _check_block(b, g)
        np.testing.assert_array_equal(np_of(blocks[0].srcdata["feat"]), np_of(g.ndata["feat"])[np_of(input_nodes)])
    assert batches == 3


def test_heterograph_blocks(backend_name, rng):
    B = nwb.current()
    g = nw.heterograph({("user", "buys", "item"): (rng.integers(0, 6, 20), rng.integers(0, 5, 20)),
                        ("item", "bought-by", "user"): (rng.integers(0, 5, 20), rng.integers(0, 6, 20))})
    g.nodes["user"].data["age"] = B.from_numpy(rng.integers(10, 90, 6))
    g.nodes["item"].data["price"] = B.from_numpy(rng.random(5).astype(np.float32))
    g.edges["buys"].data["when"] = B.from_numpy(rng.integers(0, 100, 20))
    _, _, blocks = nw.dataloading.NeighborSampler([2, 2]).sample(g, {"user": [0, 1]}, random_seed=3)
    for b in blocks:
        for nt, name in (("user", "age"), ("item", "price")):
            for side in ("src", "dst"):
                frame = b.srcnodes[nt].data if side == "src" else b.dstnodes[nt].data
                np.testing.assert_array_equal(np_of(frame[name]),
                                              np_of(g.nodes[nt].data[name])[np_of(frame[nw.NID])])
        eids = np_of(b.edges["buys"].data[nw.EID])
        np.testing.assert_array_equal(np_of(b.edges["buys"].data["when"]), np_of(g.edges["buys"].data["when"])[eids])
        assert "when" not in b.edges["bought-by"].data


def test_rgcn_minibatch_reads_edge_types_from_blocks(backend_name, rng):
    """DGL's R-GCN mini-batch example: edge types and a norm on every block of a homogeneous graph."""
    het = nw.heterograph({("a", "r", "b"): (rng.integers(0, 8, 30), rng.integers(0, 8, 30)),
                          ("b", "s", "a"): (rng.integers(0, 8, 30), rng.integers(0, 8, 30))})
    g = nw.to_homogeneous(het)
    etype = np_of(g.edata[nw.ETYPE])
    loader = nw.dataloading.DataLoader(g, np.arange(6), nw.dataloading.MultiLayerNeighborSampler([4, 4]), batch_size=3)
    for _, _, blocks in loader:
        for b in blocks:
            b.edata["norm"] = nw.norm_by_dst(b)
            np.testing.assert_array_equal(np_of(b.edata[nw.ETYPE]), etype[np_of(b.edata[nw.EID])])


# ------------------------------------------------------------------------------ Frame.set_lazy


def test_lazy_column_reads_like_its_rows(backend_name, rng):
    B = nwb.current()
    src = B.from_numpy(rng.standard_normal((10, 2, 3)))
    f = Frame(4, name="srcdata", row_name="node")
    f.set_lazy("h", src, [9, 0, 9, 4])
    want = np_of(src)[[9, 0, 9, 4]]
    assert f.schemes["h"].shape == (2, 3) and "h" in f and len(f) == 1
    sub = f.subframe([3, 0])  # picked from the row ids, still not gathered
    np.testing.assert_array_equal(np_of(sub["h"]), want[[3, 0]])
    np.testing.assert_array_equal(np_of(f["h"]), want)
    assert f["h"] is f["h"]  # gathered once, then an ordinary column
    g = Frame(4)
    g.set_lazy("h", src, [1, 2, 3, 4])
    back = pickle.loads(pickle.dumps(g))  # pickled with its rows, not the source tensor
    np.testing.assert_array_equal(np_of(back["h"]), np_of(src)[1:5])
    moved = g.to("cpu")
    np.testing.assert_array_equal(np_of(moved["h"]), np_of(src)[1:5])


def test_pickled_block_keeps_its_features(rng):
    g = _graph(rng)
    _, _, blocks = nw.dataloading.NeighborSampler([3]).sample(g, [1, 2], random_seed=0)
    b2 = pickle.loads(pickle.dumps(blocks[0]))
    _check_block(b2, g)


def test_lazy_column_bad_arguments():
    import nodeweave.core as nc

    f = Frame(2, name="srcdata", row_name="node")
    with pytest.raises(ValueError, match=r"srcdata\['h'\]: expected 2 row ids \(one per node\), got 3"):
        f.set_lazy("h", nc.zeros(5), [0, 1, 2])
    with pytest.raises(IndexError, match=r"srcdata\['h'\]: row ids must lie in \[0, 5\)"):
        f.set_lazy("h", nc.zeros(5), [0, 5])
    with pytest.raises(TypeError, match="expected a tensor"):
        f.set_lazy("h", [1, 2], [0, 1])
    with pytest.raises(TypeError, match="feature names must be strings"):
        f.set_lazy(3, nc.zeros(5), [0, 1])
