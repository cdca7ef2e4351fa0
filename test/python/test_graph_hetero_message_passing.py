"""Message passing across edge types, as DGL 2.x: update_all / apply_edges without etype= on a graph
with several edge types, multi_update_all (per-type apply functions, stack order, max/min with
nodes a type does not reach), edge_softmax of a dict of per-type logits; values against NumPy
references and float64 finite-difference gradients, on both backends."""

import itertools

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
import nodeweave.function as fn
from conftest import np_of

# user -follows-> user, user -plays-> game, dev -makes-> game; game 2 gets nothing, dev gets nothing.
EDGES = {("user", "follows", "user"): ([0, 1, 2, 2], [1, 2, 0, 1]),
         ("user", "plays", "game"): ([0, 1, 2, 1], [0, 0, 1, 1]),
         ("dev", "makes", "game"): ([0, 1, 1], [1, 1, 3])}
COUNTS = {"dev": 2, "game": 4, "user": 3}
NP_OP = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


def _graph():
    return nw.heterograph(EDGES, num_nodes_dict=COUNTS)


def _feats(rng):
    """Distinct values away from 0 (no max ties, safe division)."""
    n = {nt: rng.permutation(np.arange(COUNTS[nt] * 2)).reshape(COUNTS[nt], 2) * 0.37 + 1.3
         for nt in COUNTS}
    e = {ct: rng.permutation(np.arange(len(EDGES[ct][0]) * 2)).reshape(-1, 2) * 0.29 + 0.7 for ct in EDGES}
    return n, e


def _leaf(a):
    T = nwb.current()
    t = T.from_numpy(np.asarray(a, np.float64))
    return t.requires_grad_(True)


def _operand(target, ct, ids, n, e):
    if target == "e":
        return e[ct]
    return n[ct[0]][ids[0]] if target == "u" else n[ct[2]][ids[1]]


def _ref_update_all(msg, reduce, n, e):
    """Per destination type: every message of every edge type arriving at a node, reduced."""
    out = {}
    for ct, (s, d) in EDGES.items():
        s, d = np.array(s), np.array(d)
        lhs, rhs = msg
        if rhs is None:
            m = _operand(lhs[0], ct, (s, d), n, e)
        else:
            a, b = _operand(lhs[0], ct, (s, d), n, e), _operand(rhs[0], ct, (s, d), n, e)
            m = (a * b).sum(-1, keepdims=True) if lhs[1] == "dot" else NP_OP[lhs[1]](a, b)
        for i, v in enumerate(d):
            out.setdefault(ct[2], {}).setdefault(int(v), []).append(m[i])
    res = {}
    for nt, per_node in out.items():
        width = len(next(iter(per_node.values()))[0])
        r = np.zeros((COUNTS[nt], width))
        for v, ms in per_node.items():
            r[v] = getattr(np, {"sum": "sum", "max": "max", "min": "min"}[reduce])(np.stack(ms), 0)
        res[nt] = r
    return res


MESSAGES = {  # builtin name -> ((lhs target, op), (rhs target,)) for the reference
    "copy_u": (("u", None), None), "copy_e": (("e", None), None),
    "u_mul_e": (("u", "mul"), ("e",)), "e_sub_u": (("e", "sub"), ("u",)),
    "u_add_v": (("u", "add"), ("v",)), "e_div_v": (("e", "div"), ("v",)),
    "u_dot_v": (("u", "dot"), ("v",)),
}


@pytest.mark.parametrize("msg,reduce", list(itertools.product(MESSAGES, ["sum", "max", "min"])))
def test_update_all_over_every_edge_type(backend_name, msg, reduce):
    rng = np.random.default_rng(0)
    n, e = _feats(rng)
    g = _graph()
    T = nwb.current()
    for nt in COUNTS:
        g.nodes[nt].data["h"] = T.from_numpy(n[nt])
    for ct in EDGES:
        g.edges[ct].data["h"] = T.from_numpy(e[ct])
    names = {"copy_u": ("h",), "copy_e": ("h",)}
    builtin = getattr(fn, msg)(*names.get(msg, ("h", "h")), "m")
    g.update_all(builtin, getattr(fn, reduce)("m", "y"))
    want = _ref_update_all(MESSAGES[msg], reduce, n, e)
    assert set(want) == {"game", "user"}
    for nt, ref in want.items():
        np.testing.assert_allclose(np_of(g.nodes[nt].data["y"]), ref, rtol=1e-12)
    assert "y" not in g.nodes["dev"].data  # no edge type ends at dev


@pytest.mark.parametrize("reduce", ["sum", "max"])
def test_update_all_over_every_edge_type_gradients(backend_name, reduce):
    rng = np.random.default_rng(1)
    n, e = _feats(rng)
    g = _graph()

    def run(xu, xd, w_plays):
        g.nodes["user"].data["h"], g.nodes["dev"].data["h"] = xu, xd
        g.edges["plays"].data["w"] = w_plays
        g.edges["follows"].data["w"] = nwb.of(xu).from_numpy(e[("user", "follows", "user")])
        g.edges["makes"].data["w"] = nwb.of(xu).from_numpy(e[("dev", "makes", "game")])
        g.update_all(fn.u_mul_e("h", "w", "m"), getattr(fn, reduce)("m", "y"))
        B = nwb.of(xu)
        return B.cat([g.nodes["game"].data["y"], g.nodes["user"].data["y"]], 0)

    inputs = [_leaf(n["user"]), _leaf(n["dev"]), _leaf(e[("user", "plays", "game")])]
    if backend_name == "native":
        from nodeweave.core.autograd import gradcheck
    else:
        from torch.autograd import gradcheck
    assert gradcheck(run, inputs, eps=1e-6, atol=1e-6)


def test_update_all_over_types_rejects_what_it_cannot_combine(backend_name):
    g = _graph()
    T = nwb.current()
    g.nodes["user"].data["h"] = T.from_numpy(np.ones((3, 1)))
    with pytest.raises(TypeError, match="pass etype="):
        g.update_all(lambda edges: {"m": edges.src["h"]}, fn.sum("m", "y"))
    with pytest.raises(TypeError, match="builtin"):
        g.update_all({"plays": (fn.copy_u("h", "m"), fn.sum("m", "y"))}, "sum")
    with pytest.raises(NotImplementedError, match="multi_update_all"):
        g.update_all(fn.copy_u("h", "m"), fn.mean("m", "y"))
    with pytest.raises(KeyError, match=r"nodes\['dev'\]\.data has no field 'h'"):
        g.update_all(fn.copy_u("h", "m"), fn.sum("m", "y"))
    with pytest.raises(ValueError, match="etype"):                # one relation only: ambiguous
        g.send_and_recv([0], fn.copy_u("h", "m"), fn.sum("m", "y"))
    with pytest.raises(nw.NodeweaveError):
        g.pull(0, fn.copy_u("h", "m"), fn.sum("m", "y"))


def test_apply_edges_over_every_edge_type(backend_name):
    rng = np.random.default_rng(2)
    n, _ = _feats(rng)
    g = _graph()
    T = nwb.current()
    for nt in COUNTS:
        g.nodes[nt].data["h"] = T.from_numpy(n[nt])
    g.apply_edges(fn.u_sub_v("h", "h", "d"))
    for ct, (s, d) in EDGES.items():
        np.testing.assert_allclose(np_of(g.edges[ct].data["d"]), n[ct[0]][s] - n[ct[2]][d])
    with pytest.raises(TypeError, match="builtin"):
        g.apply_edges(lambda edges: {"x": edges.src["h"]})
    with pytest.raises(ValueError, match="etype="):
        g.apply_edges(fn.copy_u("h", "c"), [0])


def test_multi_update_all_per_type_apply_stack_order_and_isolated_nodes(backend_name):
    rng = np.random.default_rng(3)
    n, _ = _feats(rng)
    g = _graph()
    T = nwb.current()
    for nt in COUNTS:
        g.nodes[nt].data["h"] = T.from_numpy(-n[nt])  # negative: a padded 0 would win a max
    plays, makes = ("user", "plays", "game"), ("dev", "makes", "game")
    per = {}
    for ct in (plays, makes):
        s, d = (np.array(a) for a in EDGES[ct])
        per[ct] = np.full((4, 2), np.nan)
        for v in np.unique(d):
            per[ct][v] = (-n[ct[0]][s[d == v]]).max(0)
    # max across types skips the nodes a type sends nothing to; game 2 is reached by none: 0.
    g.multi_update_all({"makes": (fn.copy_u("h", "m"), fn.max("m", "y")),
                        "plays": (fn.copy_u("h", "m"), fn.max("m", "y"))}, "max")
    want = np.nan_to_num(np.fmax(per[plays], per[makes]), nan=0.0)
    np.testing.assert_allclose(np_of(g.nodes["game"].data["y"]), want)
    # stack: in the graph's edge type order (makes before plays), whatever the dict order.
    g.multi_update_all({"plays": (fn.copy_u("h", "m"), fn.max("m", "y")),
                        "makes": (fn.copy_u("h", "m"), fn.max("m", "y"))}, "stack")
    stacked = np.stack([np.nan_to_num(per[makes]), np.nan_to_num(per[plays])], 1)
    np.testing.assert_allclose(np_of(g.nodes["game"].data["y"]), stacked)
    # A per-type apply function runs before the types are combined, the last one after.
    g.multi_update_all({"plays": (fn.copy_u("h", "m"), fn.max("m", "y"), lambda nb: {"y": nb.data["y"] + 1}),
                        "makes": (fn.copy_u("h", "m"), fn.max("m", "y"))}, "sum",
                       lambda nb: {"y": nb.data["y"] * 10})
    summed = np.nan_to_num(per[plays]) + 1 + np.nan_to_num(per[makes])
    np.testing.assert_allclose(np_of(g.nodes["game"].data["y"]), summed * 10)
    with pytest.raises(TypeError, match=r"etype_dict\['plays'\]"):
        g.multi_update_all({"plays": fn.copy_u("h", "m")}, "sum")
    with pytest.raises(ValueError, match="cross_reducer"):
        g.multi_update_all({"plays": (fn.copy_u("h", "m"), fn.sum("m", "y"))}, "prod")


def _ref_softmax(logits, norm_by):
    """Softmax over each node's edges of every type: groups by (node type, node id)."""
    groups = {}
    for ct, (s, d) in EDGES.items():
        for i, (u, v) in enumerate(zip(s, d)):
            key = (ct[2], v) if norm_by == "dst" else (ct[0], u)
            groups.setdefault(key, []).append((ct, i))
    out = {ct: np.zeros_like(x) for ct, x in logits.items()}
    for members in groups.values():
        vals = np.stack([logits[ct][i] for ct, i in members])
        p = np.exp(vals - vals.max(0))
        p /= p.sum(0)
        for (ct, i), row in zip(members, p):
            out[ct][i] = row
    return out


@pytest.mark.parametrize("norm_by", ["dst", "src"])
def test_edge_softmax_of_a_dict_normalises_across_types(backend_name, norm_by):
    rng = np.random.default_rng(4)
    g = _graph()
    logits = {ct: rng.standard_normal((len(EDGES[ct][0]), 2)) for ct in EDGES}
    T = nwb.current()
    by_name = {ct[1]: T.from_numpy(x) for ct, x in logits.items()}  # plain names are accepted
    out = nw.ops.edge_softmax(g, by_name, norm_by=norm_by)
    want = _ref_softmax(logits, norm_by)
    assert set(out) == set(EDGES)
    for ct in EDGES:
        np.testing.assert_allclose(np_of(out[ct]), want[ct], rtol=1e-12)

    cts = list(EDGES)

    def run(*xs):
        res = nw.ops.edge_softmax(g, dict(zip(cts, xs)), norm_by=norm_by)
        return nwb.of(xs[0]).cat([res[ct] for ct in cts], 0) * nwb.of(xs[0]).from_numpy(
            np.linspace(0.5, 2.0, 22).reshape(11, 2))

    inputs = [_leaf(logits[ct]) for ct in cts]
    if backend_name == "native":
        from nodeweave.core.autograd import gradcheck
    else:
        from torch.autograd import gradcheck
    assert gradcheck(run, inputs, eps=1e-6, atol=1e-6)


def test_edge_softmax_dict_errors(backend_name):
    g = _graph()
    T = nwb.current()
    with pytest.raises(ValueError, match="eids= and etype= cannot be given"):
        nw.ops.edge_softmax(g, {"plays": T.from_numpy(np.zeros(4))}, eids=[0])
    with pytest.raises(ValueError, match="one row per edge"):
        nw.ops.edge_softmax(g, {"plays": T.from_numpy(np.zeros(3))})
    with pytest.raises(ValueError, match="given twice"):
        nw.ops.edge_softmax(g, {"plays": T.from_numpy(np.zeros(4)),
                                ("user", "plays", "game"): T.from_numpy(np.zeros(4))})
    # A subset of the edge types: the softmax runs over those alone.
    out = nw.ops.edge_softmax(g, {"makes": T.from_numpy(np.zeros(3))})
    np.testing.assert_allclose(np_of(out[("dev", "makes", "game")]), [0.5, 0.5, 1.0])
