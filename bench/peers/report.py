"""Turns the driver's results.json into results.md (a Markdown table with a machine header) and
results.png (grouped bar chart, log-scale time).

Rows are (graph, model) for training epochs and (graph, kernel, width) for kernels; columns the
median time in ms of each system, then ratios nodeweave / peer (below 1: nodeweave is faster). For
kernels the PyG ratio is taken against the faster of PyG's two ways (scatter, torch.sparse.mm).
A system that could not run shows ``n/a`` with the reason in a numbered footnote.

Run:  python bench/peers/report.py bench/peers/results/results.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from pathlib import Path
from typing import Any

# Report columns: (system key as the worker labels it, column title).
COLUMNS = [("dgl", "DGL"), ("pyg", "PyG"), ("pyg-spmm", "PyG sparse.mm"),
           ("nodeweave-native", "nw native"), ("nodeweave-pytorch", "nw pytorch")]
RATIOS = [("nodeweave-native", "dgl", "native/DGL"), ("nodeweave-native", "pyg", "native/PyG"),
          ("nodeweave-pytorch", "dgl", "pytorch/DGL"), ("nodeweave-pytorch", "pyg", "pytorch/PyG")]
# The worker that produces each column (pyg-spmm comes from the pyg worker).
WORKER = {"pyg-spmm": "pyg"}
COLORS = {"dgl": "tab:blue", "pyg": "tab:orange", "pyg-spmm": "tab:olive",
          "nodeweave-native": "tab:red", "nodeweave-pytorch": "tab:purple"}
KERNEL_TITLES = {"copy_u_sum": "copy_u-sum", "u_mul_e_sum": "u_mul_e-sum", "u_dot_v": "u_dot_v",
                 "udf_update_all": "UDF update_all, fwd+bwd", "udf_apply_edges": "UDF apply_edges, fwd+bwd"}
UDF_TASKS = ("udf_update_all", "udf_apply_edges")  # PyG has no graph object for user functions
TOLERANCE = 1e-3  # relative, on the sum of |output|: float32 sums in different orders differ a little


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


class Footnotes:
    """Numbered footnotes, one per distinct reason."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def mark(self, text: str) -> str:
        text = " ".join(text.split())
        if text not in self.notes:
            self.notes.append(text)
        return f"[{self.notes.index(text) + 1}]"


def rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One dict per table row: key, kind, title, and per column the record or a failure."""
    runs = results["runs"]
    order: list[tuple] = []
    table: dict[tuple, dict[str, Any]] = {}
    graph_order = {g: i for i, g in enumerate(results["graphs"])}
    for run in runs:
        for rec in run.get("records", []):
            kind = rec["kind"]
            key = (rec["graph"], kind, rec["task"], rec.get("dim"))
            if key not in table:
                table[key] = {"graph": rec["graph"], "kind": kind, "task": rec["task"],
                              "dim": rec.get("dim"), "cells": {}}
                order.append(key)
            table[key]["cells"][rec["system"]] = rec
    kind_rank = {"train": 0, "kernel": 1}
    task_rank = {t: i for i, t in enumerate(["GCN", "GAT", "GraphSAGE", *KERNEL_TITLES])}
    order.sort(key=lambda k: (graph_order.get(k[0], 99), kind_rank[k[1]], task_rank.get(k[2], 99), k[3] or 0))
    return [table[k] for k in order]


def failure(results: dict[str, Any], graph: str, system: str) -> str | None:
    """Why ``system``'s worker produced nothing on ``graph`` (None if it ran)."""
    for run in results["runs"]:
        if run["system"] == WORKER.get(system, system) and run["graph"] == graph and "error" in run:
            return run["error"]
    return None


def applicable(kind: str, task: str, system: str) -> bool:
    if task in UDF_TASKS and system in ("pyg", "pyg-spmm"):
        return False
    return system != "pyg-spmm" or (kind == "kernel" and task in ("copy_u_sum", "u_mul_e_sum"))


def fmt_ms(ms: float) -> str:
    return f"{ms:.2f}" if ms < 10 else f"{ms:.1f}" if ms < 100 else f"{ms:.0f}"


def best_ms(cells: dict[str, Any], system: str, kind: str) -> float | None:
    names = [system] + (["pyg-spmm"] if system == "pyg" and kind == "kernel" else [])
    times = [cells[s]["ms"] for s in names if s in cells and "ms" in cells[s]]
    return min(times) if times else None


def markdown(results: dict[str, Any]) -> str:
    notes = Footnotes()
    systems = results["systems"]
    cols = [(s, t) for s, t in COLUMNS if WORKER.get(s, s) in systems]
    ratios = [r for r in RATIOS if r[0] in systems and r[1] in systems]
    v = results.get("versions", {})
    lines = ["# nodeweave vs DGL vs PyG (CPU)", ""]
    lines += [f"- CPU: {results.get('cpu', cpu_model())}, {results.get('cores', os.cpu_count())} cores; "
              f"every system runs with **{results['threads']} thread(s)** "
              "(OMP/MKL/OPENBLAS_NUM_THREADS, torch.set_num_threads, nodeweave.core.set_num_threads)",
              f"- Python {v.get('python', '?')}, torch {v.get('torch', '?')}, "
              f"DGL {v.get('dgl', 'n/a')}, PyG {v.get('torch_geometric', 'n/a')}, "
              f"nodeweave {v.get('nodeweave', 'n/a')}",
              f"- nodeweave's interpreter: {results.get('nodeweave_python', 'n/a')}",
              f"- Each time: median of {results['reps']} runs after {results['warmup']} warm-up run(s), "
              "in ms. Training: one epoch (forward, cross-entropy on all nodes, backward, Adam step). "
              "Kernels: forward only, float32, d = feature width; the UDF rows forward and backward.",
              "- Ratios are nodeweave time / peer time: below 1 means nodeweave is faster. For kernels "
              "the PyG ratio uses the faster of PyG's two ways (scatter, torch.sparse.mm).",
              "- `—`: not applicable; `n/a [k]`: could not run, see note k.",
              "- torch's allocator: " + ("**THP_MEM_ALLOC_ENABLE=1** for every system (blocks of 2 MiB and "
                                        "more on huge pages)" if results.get("torch_huge_pages") else
                                        "default (4 KiB pages; THP_MEM_ALLOC_ENABLE unset)")]
    load = results.get("load_at_start")
    if load is not None:
        busy = " — **the machine was busy: timings are noisy**" if load > 0.5 else ""
        lines.append(f"- 1-minute load average before the run: {load:.2f}{busy}")
    lines.append("")
    head = ["graph", "task"] + [t for _, t in cols] + [t for _, _, t in ratios]
    lines += ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    mismatches, compared = [], 0
    for row in rows(results):
        cells, kind, task = row["cells"], row["kind"], row["task"]
        title = task if kind == "train" else f"{KERNEL_TITLES.get(task, task)} d={row['dim']}"
        out = [row["graph"], title]
        for sys_key, _ in cols:
            rec = cells.get(sys_key)
            if not applicable(kind, task, sys_key):
                out.append("—")
            elif rec is not None and "ms" in rec:
                out.append(fmt_ms(rec["ms"]))
            else:
                reason = (rec or {}).get("error") or failure(results, row["graph"], sys_key) or "not run"
                out.append("n/a " + notes.mark(f"{sys_key}: {reason}"))
        for a, b, _ in ratios:
            ta, tb = best_ms(cells, a, kind), best_ms(cells, b, kind)
            out.append(f"{ta / tb:.2f}" if ta and tb else "—")
        lines.append("| " + " | ".join(out) + " |")
        sums = {s: r["abssum"] for s, r in cells.items() if "abssum" in r}
        if len(sums) > 1:
            compared += 1
            lo, hi = min(sums.values()), max(sums.values())
            if hi - lo > TOLERANCE * max(abs(hi), 1.0):
                per_system = ", ".join(f"{s} {x:.6g}" for s, x in sums.items())
                mismatches.append(f"{row['graph']} {title}: {per_system}")
    lines.append("")
    if mismatches:
        lines += ["**Kernel outputs disagree** (sum of |output| per system):", ""]
        lines += [f"- {m}" for m in mismatches] + [""]
    elif compared:
        lines += ["All kernel outputs agree across systems (sum of |output| within "
                  f"{TOLERANCE:g} relative).", ""]
    if results.get("notes"):
        lines += ["Notes:", ""] + [f"- {n}" for n in results["notes"]] + [""]
    if notes.notes:
        lines += ["Why a system could not run:", ""]
        lines += [f"{i}. {n}" for i, n in enumerate(notes.notes, 1)] + [""]
    return "\n".join(lines)


def chart(results: dict[str, Any], path: Path) -> None:
    """Grouped bars, one group per row, log-scale time; training and kernels in separate panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    all_rows = rows(results)
    cols = [(s, t) for s, t in COLUMNS if WORKER.get(s, s) in results["systems"]]
    panels = [(k, [r for r in all_rows if r["kind"] == k]) for k in ("train", "kernel")]
    panels = [(k, rs) for k, rs in panels if rs]
    if not panels:
        return
    groups = max(len(rs) for _, rs in panels)
    fig, axes = plt.subplots(len(panels), 1, figsize=(max(8, 1.1 * groups), 4.5 * len(panels)), squeeze=False)
    for ax, (kind, rs) in zip(axes[:, 0], panels):
        here = [(k, t) for k, t in cols if any("ms" in r["cells"].get(k, {}) for r in rs)]
        width = 0.8 / max(1, len(here))
        for j, (sys_key, title) in enumerate(here):
            xs, ys = [], []
            for i, r in enumerate(rs):
                rec = r["cells"].get(sys_key)
                if rec and "ms" in rec and rec["ms"] > 0:
                    xs.append(i - 0.4 + width * (j + 0.5))
                    ys.append(rec["ms"])
            ax.bar(xs, ys, width, label=title, color=COLORS.get(sys_key))
        labels = [f"{r['graph']}\n{r['task'] if kind == 'train' else KERNEL_TITLES.get(r['task'], r['task'])}"
                  + ("" if kind == "train" else f" d={r['dim']}") for r in rs]
        ax.set_xticks(range(len(rs)))
        ax.set_xticklabels(labels, fontsize=8, rotation=30, ha="right")
        ax.set_yscale("log")
        ax.set_ylabel("ms (log scale)")
        ax.set_title(("Training epoch" if kind == "train" else "Kernels, forward")
                     + f" — {results['threads']} thread(s), median of {results['reps']}")
        ax.grid(axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, path)
    plt.close(fig)


def write(results: dict[str, Any], out_dir: Path) -> tuple[Path, Path | None]:
    """Writes results.md and (if matplotlib imports) results.png into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / "results.md"
    md.write_text(markdown(results))
    png: Path | None = out_dir / "results.png"
    try:
        chart(results, png)
    except ImportError as e:
        print(f"no chart: {e}")
        png = None
    return md, png


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results", type=Path, help="results.json written by run.py")
    p.add_argument("--out", type=Path, default=None, help="folder (default: beside results.json)")
    p.add_argument("--quiet", action="store_true", help="do not print the table")
    args = p.parse_args()
    results = json.loads(args.results.read_text())
    md, png = write(results, args.out or args.results.parent)
    if not args.quiet:
        print(md.read_text())
        print(f"wrote {md}" + (f" and {png}" if png else ""))


if __name__ == "__main__":
    main()
