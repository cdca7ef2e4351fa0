"""``nw.seed`` (DGL's ``dgl.seed``) on both backends: after the same seed, everything nodeweave draws
without an explicit seed repeats -- neighbour sampling, random walks, the loader's shuffling and
sampling, the random graph generators, native random tensors -- and a different seed changes it;
it seeds the generator ``nodeweave.core.manual_seed`` seeds, leaves NumPy's and torch's global
generators alone, and rejects what is not an int in [0, 2**64). Also the top-level feature names
``nw.NTYPE`` / ``nw.ETYPE`` are the ones the transforms write."""

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.backend as nwb
import nodeweave.core as nc
from conftest import np_of


def draws(g):
    """One of each random thing nodeweave does without being given a seed, as NumPy arrays."""
    frontier = nw.sampling.sample_neighbors(g, np.arange(0, 60, 3), 2)
    walks = nw.sampling.random_walk(g, np.arange(10), length=5)[0]
    loader = nw.dataloading.DataLoader(g, np.arange(40), nw.dataloading.NeighborSampler([3]),
                                       batch_size=16, shuffle=True)
    out = [np_of(frontier.edata[nw.EID]), np_of(walks)]
    for input_nodes, output_nodes, _ in loader:
        out += [np_of(input_nodes), np_of(output_nodes)]
    out += [np_of(nw.rand_graph(30, 90).edges()[0]), nc.rand(5).numpy()]
    return out


def same(a, b):
    return len(a) == len(b) and all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a, b))


def test_same_seed_same_draws_other_seed_other_draws(backend_name):
    g = nw.rand_graph(60, 600, seed=0)  # an explicit seed: the graph itself is fixed
    nw.seed(123)
    first = draws(g)
    nw.seed(123)
    assert same(draws(g), first)
    nw.seed(124)
    other = draws(g)
    # Each kind of draw changes with the seed (not only one of them).
    assert len(other) == len(first)
    assert not any(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(first, other))


def test_seeds_the_generator_manual_seed_seeds():
    nw.seed(7)
    a = nc.rand(4).numpy()
    nc.manual_seed(7)
    np.testing.assert_array_equal(nc.rand(4).numpy(), a)
    nw.seed(np.uint64(2**64 - 1))  # NumPy ints and the largest seed are accepted
    b = nc.rand(4).numpy()
    nc.manual_seed(2**64 - 1)
    np.testing.assert_array_equal(nc.rand(4).numpy(), b)


def test_leaves_numpy_and_torch_generators_alone():
    np.random.seed(5)
    torch.manual_seed(5)
    want_np, want_torch = np.random.rand(3), torch.rand(3)
    np.random.seed(5)
    torch.manual_seed(5)
    nw.seed(99)
    np.testing.assert_array_equal(np.random.rand(3), want_np)
    assert torch.equal(torch.rand(3), want_torch)


@pytest.mark.parametrize("bad,err,msg", [(1.5, TypeError, "seed must be an int, got float"),
                                         ("3", TypeError, "seed must be an int, got str"),
                                         (True, TypeError, "seed must be an int, got bool"),
                                         (None, TypeError, "seed must be an int, got NoneType"),
                                         (-1, ValueError, r"seed must be an int in \[0, 2\*\*64\)"),
                                         (2**64, ValueError, r"seed must be an int in \[0, 2\*\*64\)")])
def test_bad_seed_raises(bad, err, msg):
    with pytest.raises(err, match=msg):
        nw.seed(bad)


def test_top_level_type_and_id_names_are_what_the_transforms_write(backend_name):
    assert (nw.NTYPE, nw.ETYPE, nw.NID, nw.EID) == ("_TYPE", "_TYPE", "_ID", "_ID")  # DGL's values
    g = nw.heterograph({("user", "plays", "game"): ([0, 1], [1, 0]), ("user", "follows", "user"): ([1], [0])})
    h = nw.to_homogeneous(g)
    ntid = {nt: i for i, nt in enumerate(g.ntypes)}
    etid = {ct: i for i, ct in enumerate(g.canonical_etypes)}
    want_ntype = np.repeat([ntid[nt] for nt in g.ntypes], [g.num_nodes(nt) for nt in g.ntypes])
    want_etype = np.repeat([etid[ct] for ct in g.canonical_etypes],
                           [g.num_edges(ct) for ct in g.canonical_etypes])
    np.testing.assert_array_equal(np_of(h.ndata[nw.NTYPE]), want_ntype)
    np.testing.assert_array_equal(np_of(h.edata[nw.ETYPE]), want_etype)


def test_torch_thread_setting_does_not_cap_nodeweave():
    """torch and nodeweave may share one libgomp: torch.set_num_threads must not change how many
    threads nodeweave's kernels use (each library has its own setting)."""
    import torch

    import nodeweave.core as nc

    before, tb = nc.get_num_threads(), torch.get_num_threads()
    try:
        nc.set_num_threads(2)
        torch.set_num_threads(1)
        assert nc.get_num_threads() == 2
    finally:
        torch.set_num_threads(tb)
        nc.set_num_threads(before)
