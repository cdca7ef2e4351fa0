"""Times one system on one cached graph and prints the results as one JSON line on stdout.

Systems: ``dgl``, ``pyg`` (PyTorch Geometric), ``nodeweave-native``, ``nodeweave-pytorch``. The thread
count is fixed before any library loads: ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS`` and
``OPENBLAS_NUM_THREADS`` are set from ``--threads`` at the top of this file, then
``torch.set_num_threads`` / ``nodeweave.core.set_num_threads`` once the libraries are imported.

Tasks, each the median of ``--reps`` runs after ``--warmup`` runs:

- ``train``: one training epoch (forward, cross-entropy on all nodes, zero_grad, backward, Adam
  step with lr 0.01 and weight decay 5e-4) of GCN, GAT and GraphSAGE (see models_torch.py and
  models_nodeweave.py), in training mode (dropout on).
- ``kernels``: forward only, at each width d of ``--dims``, on standard normal features (seed 1)
  and uniform edge weights (seed 1): copy_u-sum ``out[v] = sum_{u->v} x[u]``, u_mul_e-sum with one
  scalar per edge ``(E, 1)``, and u_dot_v (per-edge dot product of x[src] and x[dst]). PyG has two
  ways for the first two: ``scatter`` of gathered messages (system ``pyg``) and ``torch.sparse.mm``
  with a CSR adjacency (reported as system ``pyg-spmm``). Every kernel record carries checksums
  (the float64 sum and sum of absolute values of its output) so that the driver can check that
  all systems computed the same.
- ``udf`` rows (among the kernels, DGL and both nodeweave backends; PyG has no user-defined
  functions on a graph object): forward **and backward** of user-defined message passing written
  once in DGL's API — ``udf_update_all``: ``update_all`` with the message lambda
  ``edges.src['h'] * edges.data['w']`` and the mailbox reduce ``nodes.mailbox['m'].amax(1)``;
  ``udf_apply_edges``: ``apply_edges`` with ``(edges.src['h'] * edges.dst['h']).sum(-1)``; then
  ``out.sum().backward()``. Their checksum covers the output and the gradient of ``h``.

Run:  python bench/peers/worker.py --system dgl --graph bench/peers/.cache/cora.v1.npz [--threads 2]
"""

from __future__ import annotations

import os
import sys


def _pin_threads() -> int:
    """Sets the thread-count variables from ``--threads`` before NumPy, torch or nodeweave load."""
    n = "1"
    for i, a in enumerate(sys.argv):
        if a == "--threads" and i + 1 < len(sys.argv):
            n = sys.argv[i + 1]
        elif a.startswith("--threads="):
            n = a.split("=", 1)[1]
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = n
    os.environ.setdefault("DGLBACKEND", "pytorch")
    return int(n)


_pin_threads()

import abc  # noqa: E402
import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import graphs  # noqa: E402

Thunks = dict[tuple[str, str], Callable[[], Any]]  # {(kernel, system label): zero-argument call}
SYSTEMS = ("dgl", "pyg", "nodeweave-native", "nodeweave-pytorch")
MODELS = ("GCN", "GAT", "GraphSAGE")
KERNELS = ("copy_u_sum", "u_mul_e_sum", "u_dot_v", "udf_update_all", "udf_apply_edges")


def udf_thunks(label: str, g: Any, x: Any, w: Any, cat: Callable[[list], Any]) -> Thunks:
    """The two UDF rows for a graph with DGL's message-passing API (DGL and nodeweave alike):
    forward and backward, returning the flattened output and gradient of ``h`` (one checksum)."""

    def run(step: Callable[[Any], Any]) -> Any:
        h, we = x.detach().requires_grad_(), w.detach().requires_grad_()
        g.ndata["h"], g.edata["w"] = h, we
        out = step(g)
        out.sum().backward()
        return cat([out.detach().reshape(-1), h.grad.reshape(-1)])

    def update_all(g: Any) -> Any:
        g.update_all(lambda e: {"m": e.src["h"] * e.data["w"]}, lambda n: {"o": n.mailbox["m"].amax(1)})
        return g.ndata["o"]

    def apply_edges(g: Any) -> Any:
        g.apply_edges(lambda e: {"s": (e.src["h"] * e.dst["h"]).sum(-1)})
        return g.edata["s"]

    return {("udf_update_all", label): lambda: run(update_all),
            ("udf_apply_edges", label): lambda: run(apply_edges)}


def median_ms(fn: Callable[[], Any], reps: int, warmup: int) -> tuple[float, list[float], Any]:
    """Median wall time of ``fn()`` in ms over ``reps`` calls after ``warmup`` calls, the times,
    and the last result."""
    out = None
    for _ in range(warmup):
        out = fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), times, out


class System(abc.ABC):
    """One system's way to build a graph, tensors, models and kernels. Subclasses fill it in."""

    name = ""
    F: Any = None      # functional namespace (cross_entropy)
    optim: Any = None  # optimizers

    def __init__(self, threads: int) -> None:
        self.threads = threads

    @abc.abstractmethod
    def versions(self) -> dict[str, Any]:
        ...

    @abc.abstractmethod
    def tensor(self, a: np.ndarray) -> Any:
        ...

    @abc.abstractmethod
    def to_numpy(self, t: Any) -> np.ndarray:
        ...

    @abc.abstractmethod
    def graph(self, src: np.ndarray, dst: np.ndarray, n: int) -> Any:
        ...

    @abc.abstractmethod
    def model(self, name: str, in_feats: int, n_classes: int) -> Any:
        ...

    @abc.abstractmethod
    def kernels(self, g: Any, data: dict[str, Any], x: Any, w: Any) -> Thunks:
        """``{(kernel, system label): thunk}``; a system may time several ways of one kernel."""
        ...

    @abc.abstractmethod
    def seed(self, s: int) -> None:
        ...


class TorchSystem(System):
    def __init__(self, threads: int) -> None:
        super().__init__(threads)
        import torch

        torch.set_num_threads(threads)
        self.torch = torch
        self.F, self.optim = torch.nn.functional, torch.optim

    def versions(self) -> dict[str, Any]:
        return {"torch": self.torch.__version__, "torch_threads": self.torch.get_num_threads()}

    def tensor(self, a: np.ndarray) -> Any:
        return self.torch.from_numpy(np.ascontiguousarray(a))

    def to_numpy(self, t: Any) -> np.ndarray:
        return t.detach().numpy()

    def seed(self, s: int) -> None:
        self.torch.manual_seed(s)


class DGLSystem(TorchSystem):
    name = "dgl"

    def __init__(self, threads: int) -> None:
        super().__init__(threads)
        import dgl

        self.dgl = dgl

    def versions(self) -> dict[str, Any]:
        return {**super().versions(), "dgl": self.dgl.__version__}

    def graph(self, src: np.ndarray, dst: np.ndarray, n: int) -> Any:
        return self.dgl.graph((self.tensor(src), self.tensor(dst)), num_nodes=n)

    def model(self, name: str, in_feats: int, n_classes: int) -> Any:
        import models_torch

        return models_torch.build("dgl", name, in_feats, n_classes)

    def kernels(self, g: Any, data: dict[str, Any], x: Any, w: Any) -> Thunks:
        ops = self.dgl.ops
        return {("copy_u_sum", "dgl"): lambda: ops.copy_u_sum(g, x),
                ("u_mul_e_sum", "dgl"): lambda: ops.u_mul_e_sum(g, x, w),
                ("u_dot_v", "dgl"): lambda: ops.u_dot_v(g, x, x),
                **udf_thunks("dgl", g, x, w, self.torch.cat)}


class PyGSystem(TorchSystem):
    name = "pyg"

    def __init__(self, threads: int) -> None:
        super().__init__(threads)
        import torch_geometric
        from torch_geometric.utils import scatter

        self.pyg, self.scatter = torch_geometric, scatter

    def versions(self) -> dict[str, Any]:
        return {**super().versions(), "torch_geometric": self.pyg.__version__}

    def graph(self, src: np.ndarray, dst: np.ndarray, n: int) -> Any:
        return self.torch.stack([self.tensor(src), self.tensor(dst)])  # edge_index, source row first

    def model(self, name: str, in_feats: int, n_classes: int) -> Any:
        import models_torch

        return models_torch.build("pyg", name, in_feats, n_classes)

    def kernels(self, g: Any, data: dict[str, Any], x: Any, w: Any) -> Thunks:
        torch, scatter = self.torch, self.scatter
        src, dst, n = g[0], g[1], data["num_nodes"]
        # CSR of A[dst, src] for torch.sparse.mm, built once (as a cached adjacency would be). int32
        # indices: MKL's sparse routines are LP64, so int64 indices would be converted on every call.
        # Duplicate edges (R-MAT has some) stay as repeated entries; they add up, as in scatter.
        s, d = data["src"], data["dst"]
        order = np.lexsort((s, d))
        idx = np.int32 if max(n, s.size) < 2**31 else np.int64
        crow = np.zeros(n + 1, dtype=idx)
        np.cumsum(np.bincount(d, minlength=n), out=crow[1:])
        crow_t, col_t = torch.from_numpy(crow), torch.from_numpy(s[order].astype(idx))
        perm = torch.from_numpy(order)
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        ones = torch.sparse_csr_tensor(crow_t, col_t, torch.ones(s.size), size=(n, n))

        def spmm_weighted() -> Any:
            # The edge weights change from call to call in a model, so putting them into CSR order
            # (one gather) is part of the timed work.
            a = torch.sparse_csr_tensor(crow_t, col_t, w.view(-1)[perm], size=(n, n))
            return torch.sparse.mm(a, x)

        return {("copy_u_sum", "pyg"): lambda: scatter(x[src], dst, dim=0, dim_size=n, reduce="sum"),
                ("copy_u_sum", "pyg-spmm"): lambda: torch.sparse.mm(ones, x),
                ("u_mul_e_sum", "pyg"): lambda: scatter(x[src] * w, dst, dim=0, dim_size=n, reduce="sum"),
                ("u_mul_e_sum", "pyg-spmm"): spmm_weighted,
                ("u_dot_v", "pyg"): lambda: (x[src] * x[dst]).sum(-1)}


class NodeweaveSystem(System):
    """Both nodeweave backends, through one tensor namespace (models_nodeweave.Namespace)."""

    def __init__(self, name: str, threads: int) -> None:
        super().__init__(threads)
        import models_nodeweave

        self.name = name
        self.ns = models_nodeweave.namespace(name, threads)
        self.F, self.optim = self.ns.F, self.ns.optim
        import nodeweave

        self.nw = nodeweave

    def versions(self) -> dict[str, Any]:
        import nodeweave.core as nc

        out: dict[str, Any] = {"nodeweave": self.nw.__version__, "nodeweave_threads": nc.get_num_threads(),
                               "nodeweave_path": str(Path(self.nw.__file__).parent)}
        if self.name == "nodeweave-pytorch":
            out.update(torch=self.ns.T.__version__, torch_threads=self.ns.T.get_num_threads())
        return out

    def tensor(self, a: np.ndarray) -> Any:
        return self.ns.tensor(np.ascontiguousarray(a))

    def to_numpy(self, t: Any) -> np.ndarray:
        return self.ns.to_numpy(t)

    def graph(self, src: np.ndarray, dst: np.ndarray, n: int) -> Any:
        return self.nw.graph((self.tensor(src), self.tensor(dst)), num_nodes=n)

    def model(self, name: str, in_feats: int, n_classes: int) -> Any:
        import models_nodeweave

        return models_nodeweave.build(self.ns, name, in_feats, n_classes)

    def kernels(self, g: Any, data: dict[str, Any], x: Any, w: Any) -> Thunks:
        ops = self.nw.ops
        return {("copy_u_sum", self.name): lambda: ops.copy_u_sum(g, x),
                ("u_mul_e_sum", self.name): lambda: ops.u_mul_e_sum(g, x, w),
                ("u_dot_v", self.name): lambda: ops.u_dot_v(g, x, x),
                **udf_thunks(self.name, g, x, w, self.ns.T.cat)}

    def seed(self, s: int) -> None:
        self.ns.manual_seed(s)


def make_system(name: str, threads: int) -> System:
    if name == "dgl":
        return DGLSystem(threads)
    if name == "pyg":
        return PyGSystem(threads)
    if name in ("nodeweave-native", "nodeweave-pytorch"):
        return NodeweaveSystem(name, threads)
    raise ValueError(f"unknown system {name!r} (choose from {', '.join(SYSTEMS)})")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def time_training(system: System, g: Any, data: dict[str, Any], models: list[str], reps: int,
                  warmup: int) -> list[dict[str, Any]]:
    x, y = system.tensor(data["feat"]), system.tensor(data["label"])
    n_classes = int(data["label"].max()) + 1
    F = system.F
    records = []
    for name in models:
        rec: dict[str, Any] = {"kind": "train", "task": name, "system": system.name}
        try:
            system.seed(0)
            model = system.model(name, data["feat"].shape[1], n_classes)
            model.train()
            opt = system.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)

            def epoch() -> Any:
                loss = F.cross_entropy(model(g, x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                return loss

            ms, times, loss = median_ms(epoch, reps, warmup)
            rec.update(ms=ms, times_ms=times, loss=float(system.to_numpy(loss)))
            log(f"  {system.name} {data['name']} {name}: {ms:.1f} ms/epoch")
        except Exception as e:  # noqa: BLE001 - one failing model must not hide the others
            rec["error"] = f"{type(e).__name__}: {e}"
            log(f"  {system.name} {data['name']} {name}: FAILED {rec['error']}\n{traceback.format_exc()}")
        records.append(rec)
    return records


def time_kernels(system: System, g: Any, data: dict[str, Any], kernels: list[str], dims: list[int],
                 reps: int, warmup: int) -> list[dict[str, Any]]:
    records = []
    n, e = data["num_nodes"], data["src"].size
    for d in dims:
        rng = np.random.default_rng(1)
        x = system.tensor(rng.standard_normal((n, d), dtype=np.float32))
        w = system.tensor(rng.random((e, 1), dtype=np.float32))
        try:
            thunks = system.kernels(g, data, x, w)
        except Exception as e:  # noqa: BLE001
            err = f"{type(e).__name__}: {e}"
            records += [{"kind": "kernel", "task": k, "dim": d, "system": system.name, "error": err}
                        for k in kernels]
            continue
        for (kernel, label), fn in thunks.items():
            if kernel not in kernels:
                continue
            rec: dict[str, Any] = {"kind": "kernel", "task": kernel, "dim": d, "system": label}
            try:
                ms, times, out = median_ms(fn, reps, warmup)
                arr = system.to_numpy(out).astype(np.float64)
                rec.update(ms=ms, times_ms=times, checksum=float(arr.sum()),
                           abssum=float(np.abs(arr).sum()))
                log(f"  {label} {data['name']} {kernel} d={d}: {ms:.2f} ms")
            except Exception as e:  # noqa: BLE001
                rec["error"] = f"{type(e).__name__}: {e}"
                log(f"  {label} {data['name']} {kernel} d={d}: FAILED {rec['error']}")
            records.append(rec)
    return records


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--system", required=True, choices=SYSTEMS)
    p.add_argument("--graph", required=True, type=Path, help="a cache file written by graphs.py")
    p.add_argument("--threads", type=int, default=1, help="thread count of every pool (default 1)")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--tasks", default="train,kernels")
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--kernels", default=",".join(KERNELS))
    p.add_argument("--dims", default="64", help="feature widths of the kernels, e.g. 16,64,256")
    args = p.parse_args()

    data = graphs.load(args.graph)
    system = make_system(args.system, args.threads)
    g = system.graph(data["src"], data["dst"], data["num_nodes"])
    tasks = args.tasks.split(",")
    records: list[dict[str, Any]] = []
    if "train" in tasks:
        records += time_training(system, g, data, args.models.split(","), args.reps, args.warmup)
    if "kernels" in tasks:
        records += time_kernels(system, g, data, args.kernels.split(","),
                                [int(d) for d in args.dims.split(",")], args.reps, args.warmup)
    for r in records:
        r["graph"] = data["name"]
    out = {"system": args.system, "graph": data["name"], "num_nodes": data["num_nodes"],
           "num_edges": int(data["src"].size), "threads": args.threads, "reps": args.reps,
           "warmup": args.warmup, "python": platform.python_version(), "executable": sys.executable,
           "versions": system.versions(), "records": records}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
