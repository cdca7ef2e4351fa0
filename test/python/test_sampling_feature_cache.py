"""The DataLoader's feature cache (``cache_size=``): batches are byte-identical with and without it,
the cache holds exactly the rows most often gathered in the first epoch (checked against counts
made here from the first epoch's input nodes), its hit count matches those rows' later
occurrences, and a replaced feature gets a fresh cache. Both backends; bad sizes raise."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
from nodeweave.dataloading import DataLoader, NeighborSampler


def _np(t):
    return nwb.of(t).to_numpy(t)


def _graph(n=400, e=5000, seed=0):
    rng = np.random.default_rng(seed)
    src = np.where(rng.random(e) < 0.3, rng.integers(0, 8, e), rng.integers(0, n, e))  # hot sources
    dst = rng.integers(0, n, e)
    g = nw.graph((src, dst), num_nodes=n)
    T = nwb.current()
    g.ndata["feat"] = T.from_numpy(rng.standard_normal((n, 5)).astype(np.float32))
    g.ndata["label"] = T.from_numpy(rng.integers(0, 3, n))
    return g


def _epochs(loader, count):
    out = []
    for _ in range(count):
        out.append([(_np(inp), _np(blocks[0].srcdata["feat"]), _np(blocks[-1].dstdata["label"]))
                    for inp, _, blocks in loader])
    return out


def test_cache_changes_no_batch_and_holds_the_hottest_rows(backend_name):
    g = _graph()
    sampler = lambda: NeighborSampler([4, 3], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    seeds = np.arange(400)
    plain = DataLoader(g, seeds, sampler(), batch_size=50, shuffle=True, seed=3, num_workers=2)
    cached = DataLoader(g, seeds, sampler(), batch_size=50, shuffle=True, seed=3, num_workers=2,
                        cache_size=40)
    want, got = _epochs(plain, 3), _epochs(cached, 3)
    for ew, eg in zip(want, got):
        for (iw, fw, lw), (ig, fg, lg) in zip(ew, eg):
            np.testing.assert_array_equal(ig, iw)
            np.testing.assert_array_equal(fg, fw)
            np.testing.assert_array_equal(lg, lw)
    feat = _np(g.ndata["feat"])
    for batch in got[0] + got[1]:
        np.testing.assert_array_equal(batch[1], feat[batch[0]])  # rows are the graph's rows
    # Reference: how often each node's feature row was gathered in epoch 1, top 40 (ties: lower id).
    counts = np.bincount(np.concatenate([inp for inp, _, _ in got[0]]), minlength=400)
    order = np.lexsort((np.arange(400), -counts))
    hot = set(order[:40].tolist())
    info = cached.cache_info()
    feat_info = info[("src", "_N", "feat")]
    assert feat_info["rows"] == 40
    later = np.concatenate([inp for e in got[1:] for inp, _, _ in e])
    assert feat_info["lookups"] == sum(len(inp) for e in got for inp, _, _ in e)
    assert feat_info["hits"] == int(np.isin(later, list(hot)).sum())
    assert feat_info["hits"] > 0.1 * len(later)  # more than the cached share of the rows: hubs
    assert info[("dst", "_N", "label")]["rows"] == 40


def test_a_replaced_feature_gets_a_new_cache(backend_name):
    g = _graph(seed=1)
    loader = DataLoader(g, np.arange(400), NeighborSampler([3], prefetch_node_feats=["feat"]),
                        batch_size=100, num_workers=1, cache_size=0.5)
    for _ in range(2):
        list(loader)
    assert loader.cache_info()[("src", "_N", "feat")]["rows"] > 0
    T = nwb.current()
    new = np.arange(400 * 5, dtype=np.float32).reshape(400, 5)
    g.ndata["feat"] = T.from_numpy(new)
    for inp, _, blocks in loader:  # a fresh cache: counts again, reads the new rows
        np.testing.assert_array_equal(_np(blocks[0].srcdata["feat"]), new[_np(inp)])
    assert loader.cache_info()[("src", "_N", "feat")]["rows"] == 0
    for inp, _, blocks in loader:
        np.testing.assert_array_equal(_np(blocks[0].srcdata["feat"]), new[_np(inp)])
    assert loader.cache_info()[("src", "_N", "feat")]["rows"] == 200


def test_bad_cache_size():
    g = _graph()
    s = NeighborSampler([2], prefetch_node_feats=["feat"])
    with pytest.raises(ValueError, match="cache_size"):
        DataLoader(g, np.arange(10), s, cache_size=-1, num_workers=1)
    with pytest.raises(ValueError, match="cache_size"):
        DataLoader(g, np.arange(10), s, cache_size=1.5, num_workers=1)
    with pytest.raises(TypeError, match="cache_size"):
        DataLoader(g, np.arange(10), s, cache_size="big", num_workers=1)
    with pytest.raises(ValueError, match="cache_size needs the C\\+\\+ loader"):
        DataLoader(g, np.arange(10), s, cache_size=10, num_workers=0)


def test_use_ddp_is_refused_not_ignored():
    """DGL's use_ddp shards the seeds per rank: ignoring it would train every rank on every seed, so
    without an initialized process group it is refused (the sharding is tested in
    test_dataloading_dgl_additions.py)."""
    g = _graph()
    with pytest.raises(ValueError, match="use_ddp=True needs torch.distributed"):
        DataLoader(g, np.arange(10), NeighborSampler([2]), use_ddp=True)
    DataLoader(g, np.arange(10), NeighborSampler([2]), use_ddp=False, persistent_workers=True)  # hints


def test_a_peek_at_the_first_batch_does_not_freeze_the_cache():
    """The cache is built from a whole epoch's counts: an abandoned first iterator (next(iter(dl)))
    counts a few batches only and must not decide the cached rows."""
    g = _graph(seed=2)
    loader = DataLoader(g, np.arange(400), NeighborSampler([4, 3], prefetch_node_feats=["feat"]),
                        batch_size=50, shuffle=True, seed=5, num_workers=1, prefetch_depth=1, cache_size=40)
    next(iter(loader))
    assert loader.cache_info()[("src", "_N", "feat")]["rows"] == 0
    first = [_np(inp) for inp, _, _ in loader]  # a whole epoch: the first one that counts fully
    assert loader.cache_info()[("src", "_N", "feat")]["rows"] == 0  # built when the next loader starts
    for _ in loader:
        pass
    assert loader.cache_info()[("src", "_N", "feat")]["rows"] == 40
    assert len(first) == 8


def test_a_tiny_share_is_no_cache():
    g = _graph()
    loader = DataLoader(g, np.arange(400), NeighborSampler([3], prefetch_node_feats=["feat"]),
                        batch_size=100, num_workers=1, cache_size=1e-9)
    for _ in range(2):
        for _ in loader:
            pass
    assert loader.cache_info() == {}
