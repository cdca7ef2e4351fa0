"""``nodeweave-run``: runs a saved program (``nodeweave.core.jit.save``) on ``.npy`` inputs and writes
each output as ``.npy`` — inference with no Python model code.

    nodeweave-run model.nwp features.npy --out results/   # writes results/output_0.npy, ...
    nodeweave-run model.nwp --print                        # prints the program's text

Bad input (a missing or corrupt file, inputs of the wrong count, dtype or shape) gives one
``nodeweave-run: error: ...`` line and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from nodeweave import errors as nwerr


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nodeweave-run", description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("program", help="a program file written by nodeweave.core.jit.save")
    p.add_argument("inputs", nargs="*", help="one .npy file per program input, in order")
    p.add_argument("--out", default=".", help="directory for output_<i>.npy (default: .)")
    p.add_argument("--print", dest="show", action="store_true", help="print the program's text and exit")
    p.add_argument("--threads", type=int, default=None, help="thread count (default: the runtime's)")
    return p


def _run(args: argparse.Namespace) -> int:
    import nodeweave.core as nc

    if args.threads is not None:
        if args.threads < 1:
            raise nwerr.ValueError(f"--threads must be >= 1, got {args.threads}")
        nc.set_num_threads(args.threads)
    prog = nc.jit.load(args.program)
    if args.show:
        print(prog.program, end="")
        return 0
    if len(args.inputs) != prog.program.num_inputs:
        raise nwerr.ValueError(f"the program takes {prog.program.num_inputs} inputs, got {len(args.inputs)} .npy files")
    tensors = []
    for path in args.inputs:
        try:
            arr = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise nwerr.ValueError(f"cannot read {path} as a .npy array: {e}") from None
        tensors.append(nc.from_numpy(np.ascontiguousarray(arr)))
    outs = prog(*tensors)
    os.makedirs(args.out, exist_ok=True)
    for i, t in enumerate(outs):
        dest = os.path.join(args.out, f"output_{i}.npy")
        tmp = dest + ".tmp.npy"
        np.save(tmp, t.detach().numpy())
        os.replace(tmp, dest)
        print(f"{dest}: {t.dtype.name}{list(t.shape)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    from nodeweave._cli import run_command

    args = _parser().parse_args(argv)
    return run_command("nodeweave-run", lambda: _run(args))


if __name__ == "__main__":
    sys.exit(main())
