"""Run a DGL script unchanged on nodeweave: ``import dgl`` and every ``dgl.<module>`` resolve to
nodeweave's module of the same name.

Two ways in::

    python -m nodeweave.compat.dgl train.py --epochs 10     # runs train.py with the alias installed

or, at the top of a script or a notebook, before anything imports ``dgl``::

    import nodeweave.compat.dgl
    nodeweave.compat.dgl.install()

After :func:`install`, ``import dgl`` gives a module that reads every attribute from ``nodeweave``
and adds DGL's names for its classes (``dgl.DGLGraph`` is :class:`nodeweave.HeteroGraph`,
``dgl.DGLError`` is :class:`nodeweave.NodeweaveError`, ``dgl.DGLWarning`` is
:class:`nodeweave.NodeweaveWarning`); ``import dgl.nn.pytorch as dglnn``,
``from dgl.data import CoraGraphDataset``, ``import dgl.function as fn`` and the like give
nodeweave's modules themselves (``dgl.nn is nodeweave.nn``). Two DGL modules differ:

- ``dgl.base`` reads from :mod:`nodeweave.base` and adds DGL's names there (``DGLError``,
  ``DGLWarning``, ``dgl_warning``);
- ``dgl.backend`` (and ``dgl.backend.pytorch``) is :mod:`nodeweave.compat.dgl_backend`: DGL's tensor
  API (``F.tensor``, ``F.copy_to``, ``F.backend_name`` ...) on nodeweave's backends, falling back to
  :mod:`nodeweave.backend`'s own names.

A DGL module nodeweave does not have raises ``ModuleNotFoundError`` naming both. DGL scripts compute
on PyTorch tensors, so :func:`install` also selects the pytorch backend unless ``NODEWEAVE_BACKEND``
is set.

The alias reaches the processes this one starts: ``fork`` (Linux's default) copies it, and a
process started with ``spawn`` or ``forkserver`` (``torch.multiprocessing.spawn`` for DDP training,
say) inherits ``sys.path``, where :func:`install` puts a placeholder ``dgl`` package that installs
the alias there on the first ``import dgl`` (same backend: :func:`install` also sets
``NODEWEAVE_BACKEND`` when it is unset). A process started by other means (``subprocess``) needs
the runner or :func:`install` itself.

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
>>> dgl.DGLGraph is nodeweave.HeteroGraph, dgl.base.DGLWarning is nodeweave.NodeweaveWarning
(True, True)
>>> dgl.backend.backend_name, dgl.backend.tensor([1, 2]).dtype
('pytorch', torch.int64)
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
_EXTRA_NAMES = {"DGLGraph": "HeteroGraph", "DGLHeteroGraph": "HeteroGraph", "DGLError": "NodeweaveError",
                "DGLWarning": "NodeweaveWarning"}
# The same for dgl submodules, which then read from their nodeweave module through a _Proxy.
_SUBMODULE_EXTRA_NAMES = {
    "base": {"DGLError": "NodeweaveError", "DGLWarning": "NodeweaveWarning", "dgl_warning": "warn"},
}
# dgl submodules whose nodeweave counterpart has another name: dgl.<key>[.x] -> nodeweave.<value>[.x]
_REDIRECTS = {"backend": "compat.dgl_backend"}
# Holds the placeholder `dgl` package that installs the alias in spawned processes.
_SPAWN_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_spawn")
_ENV_SET: list[str] = []  # the NODEWEAVE_BACKEND value install() set (uninstall() removes it)


def _target(fullname: str) -> str:
    """The nodeweave module a dgl module name stands for."""
    rest = fullname[len(ALIAS) + 1:]
    head, dot, tail = rest.partition(".")
    return f"{TARGET}.{_REDIRECTS.get(head, head)}{dot}{tail}"


class _Proxy(types.ModuleType):
    """A dgl module that reads every attribute from its nodeweave module, plus DGL's names for some."""

    def __init__(self, name: str, target: str, extra: dict[str, str]) -> None:
        super().__init__(name, f"{target} under DGL's name (nodeweave.compat.dgl)")
        self._nw_target, self._nw_extra = target, extra

    def __getattr__(self, name: str) -> Any:
        target = importlib.import_module(self._nw_target)
        try:
            if name == "__all__":  # `from dgl.base import *` gets DGL's names too
                return [*target.__all__, *self._nw_extra]
            return getattr(target, self._nw_extra.get(name, name))
        except AttributeError:
            raise nwerr.AttributeError(f"module {self.__name__!r} (aliased to {self._nw_target} by "
                                       f"nodeweave.compat.dgl) has no attribute {name!r}: nodeweave has no "
                                       f"counterpart; see docs/migrating_from_dgl.md") from None

    def __dir__(self) -> list[str]:
        return sorted(set(dir(importlib.import_module(self._nw_target))) | set(self._nw_extra))


class _TopLevel(_Proxy):
    """The ``dgl`` module: nodeweave's attributes plus DGL's names for its classes."""

    def __init__(self) -> None:
        super().__init__(ALIAS, TARGET, _EXTRA_NAMES)

    def __getattr__(self, name: str) -> Any:
        if name in _REDIRECTS or name in _SUBMODULE_EXTRA_NAMES:
            # `dgl.backend` without `import dgl.backend` is the aliased module too, not nodeweave.backend
            return importlib.import_module(f"{ALIAS}.{name}")
        return super().__getattr__(name)


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``dgl`` and ``dgl.<x>`` and loads them as the nodeweave modules they name."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        is_package = True
        if fullname != ALIAS:
            real = _target(fullname)
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
            module: types.ModuleType = _TopLevel()
            module.__path__ = []  # a package, so that `import dgl.nn` looks for submodules
            return module
        extra = _SUBMODULE_EXTRA_NAMES.get(spec.name[len(ALIAS) + 1:])
        if extra is not None:
            module = _Proxy(spec.name, _target(spec.name), extra)
            if spec.submodule_search_locations is not None:
                module.__path__ = []
            return module
        real = importlib.import_module(_target(spec.name))
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
    if _SPAWN_PATH not in sys.path:
        sys.path.insert(0, _SPAWN_PATH)  # for spawned processes: see the module docstring
    choice = backend or os.environ.get("NODEWEAVE_BACKEND") or "pytorch"
    if "NODEWEAVE_BACKEND" not in os.environ:  # spawned processes choose the same backend
        os.environ["NODEWEAVE_BACKEND"] = choice
        _ENV_SET.append(choice)
    nodeweave.set_backend(choice)


def uninstall() -> None:
    """Remove the alias and the ``dgl`` entries it put in ``sys.modules``."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _AliasFinder)]
    sys.path[:] = [p for p in sys.path if p != _SPAWN_PATH]
    if _ENV_SET and os.environ.get("NODEWEAVE_BACKEND") == _ENV_SET[0]:
        del os.environ["NODEWEAVE_BACKEND"]
    _ENV_SET.clear()
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
