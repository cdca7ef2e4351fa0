"""Placeholder ``dgl`` package that :func:`nodeweave.compat.dgl.install` puts on ``sys.path``.

A process started with the ``spawn`` method (``torch.multiprocessing.spawn``, DataLoader workers
on macOS/Windows) starts without the alias but with a copy of its parent's ``sys.path``; when it
runs ``import dgl`` (unpickling a function of a DGL script, say), this module is found, installs
the alias and hands the import over to it. The installing process never imports this module: its
alias finder answers ``import dgl`` first.
"""

import importlib
import sys

from nodeweave.compat import dgl as _compat

del sys.modules[__name__]  # install() refuses a foreign ``dgl`` module
_compat.install()
sys.modules[__name__] = importlib.import_module(__name__)  # what ``import dgl`` returns
