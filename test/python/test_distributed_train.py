"""examples/dist/train_sage.py under mpirun, on a small SBM graph (4,096 nodes, 16 communities, from
examples/dist/partition.py):

- the first steps' losses with 2 and 4 ranks, on both backends, equal (to 1e-5) those of one
  process training on the whole graph (in the partitioned numbering) with the ordinary
  NeighborSampler, on the union of the ranks' batches, from the same initial weights;
- kill -9 of one rank mid-run ends the job within 60 s naming it, and ``--resume`` from the last
  checkpoint finishes with exactly the accuracy of an uninterrupted run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import nodeweave as nw
from nodeweave.distributed import partition_graph
from test_distributed_mpi import MPIRUN, mpirun
from test_distributed_sampling import whole_graph_renumbered

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "examples" / "dist" / "train_sage.py"
pytestmark = pytest.mark.skipif(MPIRUN is None, reason="mpirun not installed (scripts/setup.sh installs Open MPI)")


def sbm_graph(n: int):
    spec = importlib.util.spec_from_file_location("dist_partition", ROOT / "examples" / "dist" / "partition.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.sbm_graph(n, 0)


def make_parts(out: Path, k: int, n: int = 4096):
    g = sbm_graph(n)
    nid_map, eid_map = partition_graph(g, k, str(out), graph_name="sbm", balance_ntypes=g.ndata["train_mask"],
                                       return_mapping=True)
    return g, nid_map, eid_map


# One process, the whole graph, the ordinary sampler: the steps the ranks' union batches take.
REFERENCE = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from _common import F, optim, set_seed
    from sage_minibatch import SAGE
    import numpy as np
    import nodeweave as nw
    from nodeweave import _C
    g = nw.load_graphs(sys.argv[2])[0][0]
    steps, seed = json.loads(open(sys.argv[3]).read()), int(sys.argv[4])
    set_seed(seed)
    model = SAGE(16, 64, 16, "mean", 0.0)
    opt = optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    sampler = nw.dataloading.NeighborSampler([10, 5])
    losses = []
    for epoch, batch, seeds in steps:
        key = _C.sampling.derive_key(_C.sampling.derive_key(seed, epoch), batch)
        inp, out, blocks = sampler.sample(g, np.array(seeds), random_seed=key)
        logits = model(blocks, g.ndata["feat"][inp])
        loss = F.cross_entropy(logits, g.ndata["label"][out])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    print(json.dumps(losses))
""")


def run_train(n, manifest, *args, timeout=300, backend="native"):
    return mpirun(n, TRAIN, "--part-config", str(manifest), "--backend", backend, "--quiet", *args, timeout=timeout)


@pytest.mark.parametrize("backend", ["native", "pytorch"])
@pytest.mark.parametrize("k", [2, 4])
def test_first_steps_equal_single_process(tmp_path, k, backend):
    if backend == "pytorch":
        pytest.importorskip("torch")
    g, nid_map, eid_map = make_parts(tmp_path / "parts", k)
    steps = 4
    out = run_train(k, tmp_path / "parts" / "sbm.json", "--dropout", "0", "--batch-size", "64", "--max-steps",
                    str(steps), "--epochs", "1", "--seed", "3", "--log-json", str(tmp_path / "log"), backend=backend)
    assert out.returncode == 0, out.stderr[-4000:]
    logs = [json.loads((tmp_path / f"log.{r}").read_text())["steps"] for r in range(k)]
    assert all(len(s) == steps for s in logs)
    # Equal batches on every rank (256 training nodes, 64 per step): the mean of the ranks' mean
    # losses is the loss of the union batch.
    assert all(len(log[i]["seeds"]) == 64 // k for log in logs for i in range(steps))
    dist_losses = [np.mean([log[i]["loss"] for log in logs]) for i in range(steps)]
    union = [[logs[0][i]["epoch"], logs[0][i]["batch"], sum((log[i]["seeds"] for log in logs), [])]
             for i in range(steps)]
    whole, _ = whole_graph_renumbered(g, nid_map, eid_map)
    B = nw.backend.current()
    feat, label = (B.to_numpy(g.ndata[name])[B.to_numpy(nid_map)] for name in ("feat", "label"))
    whole.ndata["feat"], whole.ndata["label"] = B.from_numpy(feat), B.from_numpy(label)
    nw.save_graphs(str(tmp_path / "whole.nwg"), [whole])
    (tmp_path / "steps.json").write_text(json.dumps(union))
    script = tmp_path / "reference.py"
    script.write_text(REFERENCE)
    env = {k_: v for k_, v in os.environ.items() if k_ != "NODEWEAVE_BACKEND"}
    ref = subprocess.run([sys.executable, str(script), str(ROOT / "examples"), str(tmp_path / "whole.nwg"),
                          str(tmp_path / "steps.json"), "3", "--backend", backend],
                         capture_output=True, text=True, timeout=300, env=env)
    assert ref.returncode == 0, ref.stderr[-4000:]
    ref_losses = json.loads(ref.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(dist_losses, ref_losses, rtol=0, atol=1e-5)
    assert ref_losses[0] > ref_losses[-1]   # it learns: the steps are not all the same no-op


def rank_pids(marker: str) -> dict[int, int]:
    """{MPI rank: pid} of the python processes whose command line holds ``marker``."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in b" ".join(cmd) and cmd[0].endswith(b"python"):
            for e in env:
                if e.startswith(b"OMPI_COMM_WORLD_RANK="):
                    out[int(e.split(b"=")[1])] = int(pid)
    return out


def test_kill_a_rank_then_resume(tmp_path):
    make_parts(tmp_path / "parts", 2)
    manifest = tmp_path / "parts" / "sbm.json"
    common = ["--epochs", "60", "--batch-size", "16", "--seed", "5", "--checkpoint-every", "7"]
    full = run_train(2, manifest, *common, "--checkpoint", str(tmp_path / "full.ckpt"))
    assert full.returncode == 0, full.stderr[-4000:]
    want = full.stdout.strip().splitlines()[-1]
    assert want.startswith("Test accuracy: ")

    ckpt = tmp_path / "job.ckpt"
    from test_distributed_mpi import MPIRUN as launcher
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1",
               OMPI_MCA_btl="self,vader,tcp", OMPI_MCA_btl_vader_single_copy_mechanism="none")
    cmd = [launcher, "--oversubscribe", "-np", "2", sys.executable, str(TRAIN), "--part-config", str(manifest),
           "--quiet", *common, "--checkpoint", str(ckpt)]
    job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while not ckpt.exists() and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ckpt.exists() and job.poll() is None, "the job ended before its first checkpoint"
    pids = rank_pids(str(ckpt))
    assert sorted(pids) == [0, 1], pids
    os.kill(pids[1], signal.SIGKILL)
    t0 = time.monotonic()
    stdout, stderr = job.communicate(timeout=90)
    assert time.monotonic() - t0 < 60
    assert job.returncode != 0
    assert "rank 1" in stdout + stderr
    assert "Test accuracy" not in stdout

    resumed = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, env=env, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    assert "resumed from" in resumed.stdout
    assert resumed.stdout.strip().splitlines()[-1] == want


def test_resume_refuses_another_jobs_checkpoint(tmp_path):
    make_parts(tmp_path / "parts", 2)
    manifest = tmp_path / "parts" / "sbm.json"
    ckpt = tmp_path / "job.ckpt"
    first = run_train(2, manifest, "--epochs", "1", "--batch-size", "32", "--checkpoint", str(ckpt))
    assert first.returncode == 0, first.stderr[-4000:]
    again = run_train(2, manifest, "--epochs", "2", "--batch-size", "64", "--checkpoint", str(ckpt), "--resume")
    assert again.returncode == 2
    assert "batch_size 32 there, 64 now" in again.stderr
