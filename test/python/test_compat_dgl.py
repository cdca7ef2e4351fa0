"""nodeweave.compat.dgl: `import dgl` (and dgl.<module>) resolves to nodeweave after install(); a
DGL-style script runs unchanged under `python -m nodeweave.compat.dgl` and computes the right
values; a missing module, a missing attribute, a missing script and an already imported real dgl
give clear errors; uninstall() removes every trace."""

import subprocess
import sys
import textwrap
import types

import pytest

import nodeweave
from nodeweave.compat import dgl as compat


@pytest.fixture
def alias():
    compat.install()
    yield
    compat.uninstall()
    nodeweave.set_backend("native")


def test_modules_and_names_resolve_to_nodeweave(alias):
    import dgl
    import dgl.function as fn
    import dgl.nn.pytorch as dglnn
    from dgl.data import CoraGraphDataset
    from dgl.dataloading import DataLoader, NeighborSampler

    assert fn is nodeweave.function and dglnn is nodeweave.nn.pytorch
    assert CoraGraphDataset is nodeweave.data.CoraGraphDataset
    assert (DataLoader, NeighborSampler) == (nodeweave.dataloading.DataLoader,
                                             nodeweave.dataloading.NeighborSampler)
    assert dgl.DGLGraph is nodeweave.HeteroGraph and dgl.DGLError is nodeweave.NodeweaveError
    assert dgl.to_block is nodeweave.to_block
    # nodeweave's own modules keep their identity (no spec or __path__ stamped on them)
    assert nodeweave.function.__spec__.name == "nodeweave.function"
    assert not hasattr(nodeweave.function, "__path__")
    assert nodeweave.backend.current().name == "pytorch"


def test_missing_pieces_name_what_is_missing(alias):
    import dgl

    with pytest.raises(ModuleNotFoundError, match="dgl.nonexistent.*nodeweave.nonexistent"):
        import dgl.nonexistent  # noqa: F401
    with pytest.raises(AttributeError, match="no attribute 'not_a_dgl_name'"):
        dgl.not_a_dgl_name  # noqa: B018


def test_uninstall_removes_the_alias():
    compat.install()
    import dgl  # noqa: F401

    compat.uninstall()
    nodeweave.set_backend("native")
    assert not compat.installed()
    assert not [m for m in sys.modules if m == "dgl" or m.startswith("dgl.")]


def test_a_real_dgl_already_imported_is_refused(monkeypatch):
    monkeypatch.setitem(sys.modules, "dgl", types.ModuleType("dgl"))
    with pytest.raises(nodeweave.NodeweaveError, match="real dgl is already imported"):
        compat.install()
    assert not compat.installed()


SCRIPT = """
import argparse
import numpy as np
import torch
import dgl
import dgl.function as fn
from dgl.nn import GraphConv

p = argparse.ArgumentParser()
p.add_argument("--feat", type=int)
args = p.parse_args()
g = dgl.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
g = dgl.add_self_loop(g)
assert isinstance(g, dgl.DGLGraph)
g.ndata["h"] = torch.arange(4 * args.feat, dtype=torch.float32).reshape(4, args.feat)
g.update_all(fn.copy_u("h", "m"), fn.sum("m", "s"))
conv = GraphConv(args.feat, 2, norm="none", weight=False)
out = conv(g, g.ndata["h"])
print("sum", g.ndata["s"].tolist())
print("conv", torch.equal(out, g.ndata["s"]), type(out).__module__)
"""


def test_runner_runs_an_unchanged_dgl_script(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT))
    p = subprocess.run([sys.executable, "-m", "nodeweave.compat.dgl", str(script), "--feat", "2"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    # Each node sums itself and its one in-neighbour (the cycle 3->0->1->2->3 plus self-loops).
    h = [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]
    want = [[h[v][j] + h[(v - 1) % 4][j] for j in range(2)] for v in range(4)]
    assert f"sum {want}" in p.stdout
    assert "conv True torch" in p.stdout


def test_runner_rejects_a_missing_script(tmp_path):
    p = subprocess.run([sys.executable, "-m", "nodeweave.compat.dgl", str(tmp_path / "nope.py")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "is not a file" in p.stderr


def test_runner_and_the_scripts_own_install_agree(tmp_path):
    """A script run by the runner that also calls install() itself sees one alias, not a second copy."""
    script = tmp_path / "s.py"
    script.write_text("import dgl\nimport nodeweave.compat.dgl as c\nc.install()\nprint('ok', c.installed())\n")
    p = subprocess.run([sys.executable, "-m", "nodeweave.compat.dgl", str(script)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "ok True" in p.stdout


def test_load_data_and_graph_loader_where_dgl_scripts_look(tmp_path):
    import argparse

    import nodeweave as nw
    from nodeweave import data, dataloading

    assert dataloading.GraphDataLoader is data.GraphDataLoader
    cora = data.load_data(argparse.Namespace(dataset="Cora"))
    assert cora[0].num_nodes() == 2708 and cora.num_classes == 7
    with pytest.raises(nw.NodeweaveError, match="args.dataset"):
        data.load_data(argparse.Namespace())
    with pytest.raises(ValueError, match="'reddit' is not one nodeweave serves"):
        data.load_data(argparse.Namespace(dataset="reddit"))


def test_register_data_args_adds_the_option_load_data_reads(capsys):
    import argparse

    import nodeweave as nw
    from nodeweave import data

    parser = argparse.ArgumentParser(prog="train.py")
    parser.add_argument("--n-epochs", type=int, default=200)
    assert data.register_data_args(parser) is None  # changes the parser in place, as DGL's
    args = parser.parse_args(["--dataset", "citeseer", "--n-epochs", "20"])
    assert (args.dataset, args.n_epochs) == ("citeseer", 20)
    assert parser.parse_args([]).dataset is None  # optional, as in DGL: the script checks it
    ds = data.load_data(parser.parse_args(["--dataset", "cora"]))
    assert ds[0].num_nodes() == 2708
    parser.print_help()
    assert "--dataset" in capsys.readouterr().out
    with pytest.raises(nw.NodeweaveError, match="register_data_args: parser must be an argparse.ArgumentParser"):
        data.register_data_args({"dataset": "cora"})
    with pytest.raises(argparse.ArgumentError):
        data.register_data_args(parser)  # a second --dataset: argparse's own conflict error


def test_names_the_dgl_examples_import(alias):
    """The imports DGL's APPNP, SGC, TAGCN, GATv2, MoNet and DGI examples (register_data_args), its
    R-GCN examples (the RDF sets, norm_by_dst) and its link example (GraphDataLoader) start with."""
    import dgl
    from dgl.data import load_data, register_data_args
    from dgl.data.rdf import AIFBDataset, AMDataset, BGSDataset, MUTAGDataset
    from dgl.dataloading import GraphDataLoader

    assert (register_data_args, load_data) == (nodeweave.data.register_data_args, nodeweave.data.load_data)
    assert (AIFBDataset, MUTAGDataset, BGSDataset, AMDataset) == (
        nodeweave.data.AIFBDataset, nodeweave.data.MUTAGDataset, nodeweave.data.BGSDataset, nodeweave.data.AMDataset)
    assert dgl.norm_by_dst is nodeweave.norm_by_dst and GraphDataLoader is nodeweave.data.GraphDataLoader
