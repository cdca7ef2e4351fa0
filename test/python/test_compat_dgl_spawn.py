"""The DGL alias reaches processes started with the spawn method (torch.multiprocessing.spawn, as
DGL's DDP scripts use): `import dgl` there is nodeweave, on the parent's backend, and uninstall()
takes the placeholder path and the backend variable away again."""

import multiprocessing
import os
import sys

import nodeweave
from nodeweave.compat import dgl as compat


def _child_imports_dgl(queue):
    import dgl
    import nodeweave as nw

    queue.put((dgl.graph is nw.graph, nw.backend.current().name, int(dgl.graph(([0, 1], [1, 2])).num_edges())))


def test_a_spawned_process_gets_the_alias(monkeypatch):
    monkeypatch.delenv("NODEWEAVE_BACKEND", raising=False)
    compat.install()
    try:
        assert os.environ["NODEWEAVE_BACKEND"] == "pytorch"
        ctx = multiprocessing.get_context("spawn")
        queue = ctx.Queue()
        proc = ctx.Process(target=_child_imports_dgl, args=(queue,))
        proc.start()
        got = queue.get(timeout=180)
        proc.join(60)
        assert got == (True, "pytorch", 2) and proc.exitcode == 0
    finally:
        compat.uninstall()
        nodeweave.set_backend("native")
    assert "NODEWEAVE_BACKEND" not in os.environ
    assert not any(p.endswith(os.path.join("compat", "_spawn")) for p in sys.path)
