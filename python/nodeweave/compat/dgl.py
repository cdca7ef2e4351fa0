"""Run a DGL script unchanged on nodeweave: ``import dgl`` and every ``dgl.<module>`` resolve to
nodeweave's module of the same name.

Two ways in::

    python -m nodeweave.compat.dgl train.py --epochs 10     # runs train.py with the alias installed

or, at the top of a script or a notebook, before anything imports ``dgl``::

    import nodeweave.compat.dgl
    nodeweave.compat.dgl.install()

After :func:`install`, ``import dgl`` gives a module that reads every attribute from ``nodeweave``
and adds DGL's names for two classes (``dgl.DGLGraph`` is :class:`nodeweave.HeteroGraph`,
``dgl.DGLError`` is :class:`nodeweave.NodeweaveError`); ``import dgl.nn.pytorch as dglnn``,
``from dgl.data import CoraGraphDataset``, ``import dgl.function as fn`` and the like give
nodeweave's modules themselves (``dgl.nn is nodeweave.nn``). A DGL module nodeweave does not have
raises ``ModuleNotFoundError`` naming both. DGL scripts compute on PyTorch tensors, so
:func:`install` also selects the pytorch backend unless ``NODEWEAVE_BACKEND`` is set.

The alias lives in this process: worker processes started with the ``spawn`` or ``forkserver``
method re-import the script without it (``fork``, Linux's default, keeps it). Call :func:`install`
at the top of the script for those.

It is an alias, not an emulation: where nodeweave differs from DGL (``docs/migrating_from_dgl.md``
lists every difference) the script sees nodeweave's behaviour.

>>> import sys
>>> from nodeweave.compat import dgl as compat
>>> compat.install()
>>> import dgl, dgl.function as fn
>>> from dgl.nn import GraphConv
>>> import nodeweave
>>> dgl.graph is nodeweave.graph, fn is nodeweave.function, GraphConv is nodeweave.nn.GraphConv
(True, True, True)
>>> dgl.DGLGraph is nodeweave.HeteroGraph
True
>>> compat.uninstall(); "dgl" in sys.modules
False
>>> _ = nodeweave.set_backend("native")  # install() chose pytorch
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import runpy
import sys
import types
from typing import Any

from nodeweave import errors as nwerr

ALIAS, TARGET = "dgl", "nodeweave"
# DGL names of nodeweave classes; resolved lazily so that importing this module stays cheap.
_EXTRA_NAMES = {"DGLGraph": "HeteroGraph", "DGLHeteroGraph": "HeteroGraph", "DGLError": "NodeweaveError"}


class _TopLevel(types.ModuleType):
    """The ``dgl`` module: nodeweave's attributes plus DGL's names for its classes."""

    def __getattr__(self, name: str) -> Any:
        import nodeweave

        try:
            return getattr(nodeweave, _EXTRA_NAMES.get(name, name))
        except AttributeError:
            raise nwerr.AttributeError(f"module 'dgl' (aliased to nodeweave by nodeweave.compat.dgl) has no "
                                       f"attribute {name!r}: nodeweave has no counterpart; see "
                                       f"docs/migrating_from_dgl.md") from None

    def __dir__(self) -> list[str]:
        import nodeweave

        return sorted(set(dir(nodeweave)) | set(_EXTRA_NAMES))


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``dgl`` and ``dgl.<x>`` and loads them as the nodeweave modules they name."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        is_package = True
        if fullname != ALIAS:
            real = TARGET + fullname[len(ALIAS):]
            try:
                found = importlib.util.find_spec(real)
            except ModuleNotFoundError:
                found = None
            if found is None:
                raise ModuleNotFoundError(f"No module named {fullname!r}: nodeweave has no {real!r} "
                                          f"(nodeweave.compat.dgl aliases dgl.* to nodeweave.*)",
                                          name=fullname)
            # Mirror the real module's kind, so that no __path__ is stamped onto a plain module.
            is_package = found.submodule_search_locations is not None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=is_package)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name == ALIAS:
            module = _TopLevel(ALIAS, "nodeweave under DGL's name (nodeweave.compat.dgl)")
            module.__path__ = []  # a package, so that `import dgl.nn` looks for submodules
            return module
        real = importlib.import_module(TARGET + spec.name[len(ALIAS):])
        # The import system stamps the spec it found onto the module it gets; keep nodeweave's.
        self._specs[id(real)] = real.__spec__
        return real

    def exec_module(self, module: types.ModuleType) -> None:
        if id(module) in self._specs:
            module.__spec__ = self._specs.pop(id(module))

    def __init__(self) -> None:
        self._specs: dict[int, Any] = {}


def installed() -> bool:
    """Whether :func:`install` is in effect."""
    return any(isinstance(f, _AliasFinder) for f in sys.meta_path)


def install(backend: str | None = None) -> None:
    """Make ``import dgl`` resolve to nodeweave (idempotent). ``backend`` (default: ``"pytorch"``
    unless ``NODEWEAVE_BACKEND`` is set) is selected with :func:`nodeweave.set_backend`.

    A real DGL already imported in this process is left alone: mixing the two would give objects of
    both libraries, so that raises ``RuntimeError``.
    """
    import nodeweave

    mod = sys.modules.get(ALIAS)
    if mod is not None and not isinstance(mod, _TopLevel):
        raise nwerr.RuntimeError("nodeweave.compat.dgl.install(): the real dgl is already imported in "
                                 "this process; install the alias before anything imports dgl")
    if not installed():
        sys.meta_path.insert(0, _AliasFinder())
    choice = backend or os.environ.get("NODEWEAVE_BACKEND") or "pytorch"
    nodeweave.set_backend(choice)


def uninstall() -> None:
    """Remove the alias and the ``dgl`` entries it put in ``sys.modules``."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _AliasFinder)]
    for name in [n for n in sys.modules if n == ALIAS or n.startswith(ALIAS + ".")]:
        del sys.modules[name]


def main(argv: list[str] | None = None) -> None:
    """``python -m nodeweave.compat.dgl SCRIPT [ARGS...]``: run SCRIPT with the alias installed."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m nodeweave.compat.dgl",
                                     description="Run a DGL script on nodeweave (import dgl -> nodeweave).")
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    parser.add_argument("--backend", choices=["pytorch", "native"], default=None,
                        help="nodeweave backend (default: pytorch, or $NODEWEAVE_BACKEND)")
    ns = parser.parse_args(argv)
    if not os.path.isfile(ns.script):
        parser.error(f"script: {ns.script!r} is not a file")
    install(ns.backend)
    sys.argv = [ns.script, *ns.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(ns.script)))
    runpy.run_path(ns.script, run_name="__main__")


if __name__ == "__main__":
    # Run through the imported module, not this __main__ copy: a script that imports
    # nodeweave.compat.dgl must see the finder install() put in place (one set of classes).
    from nodeweave.compat.dgl import main as _main

    _main()
