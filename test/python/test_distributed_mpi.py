"""The MPI job (nodeweave.distributed.init / all_reduce / all_to_all / barrier) under a real
launcher: `mpirun` (Open MPI, installed by scripts/setup.sh) starts 2 and 4 ranks on this machine,
oversubscribed, and every rank prints what it received; the test checks it against the values
each rank must have sent."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import nodeweave.distributed as dist
from nodeweave import errors as nwerr

MPIRUN = shutil.which("mpirun")
pytestmark = pytest.mark.skipif(MPIRUN is None, reason="mpirun not installed (scripts/setup.sh installs Open MPI)")

SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import nodeweave.distributed as dist
    rank, size = dist.init()
    assert (dist.rank(), dist.world_size()) == (rank, size)
    f = dist.all_reduce(np.arange(5, dtype=np.float64) * (rank + 1))
    i = dist.all_reduce(np.full(3, rank, dtype=np.int64))
    # rank r sends r + 1 rows of [r, dst, k] to every rank dst
    blocks = [np.array([[rank, dst, k] for k in range(rank + 1)], dtype=np.int32) for dst in range(size)]
    got = dist.all_to_all(blocks)
    empty = dist.all_to_all([np.zeros((0, 2), np.float32) for _ in range(size)])
    dist.barrier()
    with open(f"{sys.argv[1]}.{rank}", "w") as out:   # one file per rank: stdout lines interleave
        json.dump({"rank": rank, "size": size, "f": f.tolist(), "i": i.tolist(),
                   "got": [g.tolist() for g in got], "empty": [e.shape for e in empty]}, out)
""")


def mpirun(n, script_path, *args, timeout=120):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1", OMPI_MCA_btl="self,vader,tcp", OMPI_MCA_btl_vader_single_copy_mechanism="none")
    return subprocess.run([MPIRUN, "--oversubscribe", "-np", str(n), sys.executable, str(script_path), *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.parametrize("n", [2, 4])
def test_collectives_under_mpirun(tmp_path, n):
    script = tmp_path / "collectives.py"
    script.write_text(SCRIPT)
    out = mpirun(n, script, str(tmp_path / "out"))
    assert out.returncode == 0, out.stderr[-3000:]
    recs = [json.loads((tmp_path / f"out.{r}").read_text()) for r in range(n)]
    assert [r["rank"] for r in recs] == list(range(n))
    tri = n * (n + 1) / 2
    for r in recs:
        assert r["size"] == n
        assert r["f"] == (np.arange(5) * tri).tolist()
        assert r["i"] == [n * (n - 1) // 2] * 3
        # from every source rank s: s + 1 rows addressed to this rank
        assert r["got"] == [[[s, r["rank"], k] for k in range(s + 1)] for s in range(n)]
        assert r["empty"] == [[0, 2]] * n


def test_single_process_job_and_bad_input():
    assert dist.init() == (0, 1)
    assert dist.init() == (0, 1)                        # idempotent
    x = np.arange(4, dtype=np.float32)
    y = dist.all_reduce(x)
    assert y is not x and y.tolist() == x.tolist()
    assert [a.tolist() for a in dist.all_to_all([np.arange(6).reshape(3, 2)])] == [[[0, 1], [2, 3], [4, 5]]]
    with pytest.raises(nwerr.ValueError, match="one block per rank"):
        dist.all_to_all([np.zeros(1), np.zeros(1)])
    with pytest.raises(nwerr.TypeError, match="float32, float64, int32 or int64"):
        dist.all_reduce(np.zeros(2, np.float16))
    with pytest.raises(nwerr.TypeError, match="NumPy array"):
        dist.all_reduce([1.0, 2.0])
    dist.barrier()


KILL_SCRIPT = textwrap.dedent("""
    import os, signal
    import numpy as np
    import nodeweave.distributed as dist
    rank, size = dist.init()
    dist.barrier()
    if rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    dist.all_reduce(np.ones(3))        # the other ranks wait here for the dead one
    open(f"{__import__('sys').argv[1]}.{rank}", "w").write("finished")
""")


def test_a_killed_rank_ends_the_job_naming_it(tmp_path):
    """kill -9 of one rank: the job ends (the launcher stops the ranks waiting on it) within 60 s,
    non-zero, and says which rank died; nobody carries on past the collective."""
    import time

    script = tmp_path / "kill.py"
    script.write_text(KILL_SCRIPT)
    t0 = time.monotonic()
    out = mpirun(3, script, str(tmp_path / "done"), timeout=90)
    assert time.monotonic() - t0 < 60
    assert out.returncode != 0
    assert "rank 1" in out.stdout + out.stderr
    assert not list(tmp_path.glob("done.*"))


GRAD_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import nodeweave.distributed as dist
    rank, size = dist.init()
    backend = sys.argv[2]
    rng = np.random.default_rng(0)                     # the same data on every rank
    X = rng.standard_normal((12, 4))
    Y = rng.standard_normal((12, 2))
    W0 = rng.standard_normal((4, 2))
    if backend == "torch":
        import torch
        T = lambda a, g=False: torch.tensor(a, requires_grad=g)
    else:
        import nodeweave.core as nc
        T = lambda a, g=False: nc.tensor(a, requires_grad=g)

    def grads(rows, with_u):
        W, b, u = T(W0, True), T(np.zeros(2), True), T(np.ones(3), True)
        d = T(X[rows]) @ W + b - T(Y[rows])
        loss = (d * d).sum() / len(rows)
        if with_u:
            loss = loss + u.sum()          # u is used on rank 0 only
        loss.backward()
        return [W, b, u]

    params = grads(np.arange(rank, 12, size), rank == 0)
    dist.all_reduce_gradients(params, bucket_bytes=40)   # small buckets: several all-reduces
    full = grads(np.arange(12), False)
    out = {"W": np.asarray(params[0].grad).tolist(), "b": np.asarray(params[1].grad).tolist(),
           "u": np.asarray(params[2].grad).tolist(),
           "W_full": np.asarray(full[0].grad).tolist(), "b_full": np.asarray(full[1].grad).tolist()}
    with open(f"{sys.argv[1]}.{rank}", "w") as f:
        json.dump(out, f)
""")


@pytest.mark.parametrize("backend", ["native", "torch"])
@pytest.mark.parametrize("n", [2, 3])
def test_averaged_gradients_equal_the_global_batch_gradient(tmp_path, n, backend):
    """Each rank backpropagates its shard of a batch; after all_reduce_gradients every rank holds
    the gradient of the whole batch's loss (float64, to 1e-12), and a parameter only rank 0 used
    gets rank 0's gradient divided by the number of ranks."""
    if backend == "torch":
        pytest.importorskip("torch")
    script = tmp_path / "grads.py"
    script.write_text(GRAD_SCRIPT)
    out = mpirun(n, script, str(tmp_path / "out"), backend)
    assert out.returncode == 0, out.stderr[-3000:]
    for r in range(n):
        rec = json.loads((tmp_path / f"out.{r}").read_text())
        np.testing.assert_allclose(rec["W"], rec["W_full"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rec["b"], rec["b_full"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rec["u"], np.ones(3) / n, rtol=1e-12)


def test_all_reduce_gradients_bad_input():
    dist.init()
    with pytest.raises(nwerr.ValueError, match="bucket_bytes"):
        dist.all_reduce_gradients([], bucket_bytes=0)
    with pytest.raises(nwerr.TypeError, match="parameter 0"):
        dist.all_reduce_gradients([np.zeros(2)])


RAISE_SCRIPT = textwrap.dedent("""
    import numpy as np
    import nodeweave.distributed as dist
    rank, size = dist.init()
    if rank == 1:
        raise ValueError("bad batch on rank 1")
    dist.all_reduce(np.ones(3))        # rank 0 waits here for rank 1
""")


def test_an_exception_on_one_rank_ends_the_job(tmp_path):
    """A Python exception on one rank ends the job (MPI_Abort after its traceback) instead of
    leaving it to wait for MPI_Finalize while the others wait in a collective."""
    import time

    script = tmp_path / "raise.py"
    script.write_text(RAISE_SCRIPT)
    t0 = time.monotonic()
    out = mpirun(2, script, timeout=90)
    assert time.monotonic() - t0 < 60
    assert out.returncode != 0
    assert "bad batch on rank 1" in out.stderr and "rank 1 failed" in out.stderr
