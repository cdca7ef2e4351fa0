"""The exceptions nodeweave raises: one base class, :class:`NodeweaveError`, under every error the
library raises itself, Python or C++.

Each concrete class is also the built-in exception it stands for, so existing ``except ValueError``
code keeps working while ``except nodeweave.NodeweaveError`` catches everything from the library.
Code ported from DGL can keep ``except dgl.DGLError``: ``nodeweave.DGLError`` is the same class.

>>> import nodeweave as nw
>>> try:
...     nw.graph(([0, 1], [1]))          # two sources, one destination
... except nw.NodeweaveError as e:
...     print(type(e).__name__, isinstance(e, ValueError))
ValueError True

Errors raised by other libraries pass through unchanged (a ``torch`` error inside a model on the
pytorch backend is torch's), and so do pybind11's own argument-conversion ``TypeError``\\ s for a
call into ``nodeweave._C`` with arguments of the wrong Python type.

The classes here shadow the built-in names on purpose; library code raises them as
``nwerr.ValueError(...)`` after ``from nodeweave import errors as nwerr``.
"""

from __future__ import annotations

import builtins

__all__ = ["NodeweaveError", "DGLError", "ValueError", "TypeError", "IndexError", "KeyError",
           "NotImplementedError", "RuntimeError", "AttributeError", "ImportError", "FileNotFoundError",
           "OSError"]


class NodeweaveError(Exception):
    """Base class of every exception nodeweave raises (DGL's ``DGLError``)."""


DGLError = NodeweaveError


class ValueError(NodeweaveError, builtins.ValueError):  # noqa: A001
    """An argument has the right type but a wrong value."""


class TypeError(NodeweaveError, builtins.TypeError):  # noqa: A001
    """An argument has the wrong type or dtype."""


class IndexError(NodeweaveError, builtins.IndexError):  # noqa: A001
    """An id or index is out of range."""


class KeyError(NodeweaveError, builtins.KeyError):  # noqa: A001
    """A name (feature, node or edge type) is not there."""


class NotImplementedError(NodeweaveError, builtins.NotImplementedError):  # noqa: A001
    """A supported call on a combination nodeweave does not (yet) implement."""


class RuntimeError(NodeweaveError, builtins.RuntimeError):  # noqa: A001
    """A failure of state rather than of an argument."""


class AttributeError(NodeweaveError, builtins.AttributeError):  # noqa: A001
    """A missing attribute (still an AttributeError, so ``hasattr`` and ``getattr`` defaults work)."""


class ImportError(NodeweaveError, builtins.ImportError):  # noqa: A001
    """An optional dependency is missing."""


class OSError(NodeweaveError, builtins.OSError):  # noqa: A001
    """A file or network operation failed."""


class FileNotFoundError(OSError, builtins.FileNotFoundError):  # noqa: A001
    """A file the call needs is not there."""
