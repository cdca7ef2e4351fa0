"""The exceptions nodeweave raises: one base class, :class:`NodeweaveError`, under every error the
library raises itself, Python or C++; and the one warning class, :class:`NodeweaveWarning`, of every
warning it emits (through :func:`warn`).

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

Warnings work the same way: :class:`NodeweaveWarning` is a ``UserWarning``, so existing filters keep
working, and ``warnings.simplefilter("ignore", nodeweave.NodeweaveWarning)`` silences the library
alone (DGL's ``DGLWarning``).

>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     warn("lambda_max not given, using 2")
>>> caught[0].category is NodeweaveWarning, issubclass(NodeweaveWarning, UserWarning)
(True, True)

The classes here shadow the built-in names on purpose; library code raises them as
``nwerr.ValueError(...)`` after ``from nodeweave import errors as nwerr``.
"""

from __future__ import annotations

import builtins
import warnings

__all__ = ["NodeweaveError", "DGLError", "NodeweaveWarning", "warn", "ValueError", "TypeError", "IndexError", "KeyError",
           "NotImplementedError", "RuntimeError", "AttributeError", "ImportError", "FileNotFoundError",
           "OSError", "TracingError", "GuardFailure"]


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


class TracingError(RuntimeError):
    """Traced code did something a static program cannot replay (``nodeweave.core.jit``): read a
    traced value into Python, or wrote a leaf's ``.grad``."""


class GuardFailure(TracingError):
    """A traced program's guard failed: a value the traced code read into Python changed, so the
    program does not apply to this call (``nodeweave.core.jit`` traces again)."""


class AttributeError(NodeweaveError, builtins.AttributeError):  # noqa: A001
    """A missing attribute (still an AttributeError, so ``hasattr`` and ``getattr`` defaults work)."""


class ImportError(NodeweaveError, builtins.ImportError):  # noqa: A001
    """An optional dependency is missing."""


class OSError(NodeweaveError, builtins.OSError):  # noqa: A001
    """A file or network operation failed."""


class FileNotFoundError(OSError, builtins.FileNotFoundError):  # noqa: A001
    """A file the call needs is not there."""


class NodeweaveWarning(UserWarning):
    """Category of every warning nodeweave emits (DGL's ``DGLWarning``)."""


def warn(message: str, category: type[Warning] = NodeweaveWarning, stacklevel: int = 2) -> None:
    """Emit ``message`` as a :class:`NodeweaveWarning` (or ``category``, which must be a Warning).

    ``stacklevel`` means what it means for :func:`warnings.warn` called in place of this function:
    the default, 2, attributes the warning to the line that called the function calling ``warn``
    (the user's code, when a library function warns). DGL's ``dgl_warning``.
    """
    if not (isinstance(category, type) and issubclass(category, Warning)):
        raise TypeError(f"category must be a Warning subclass, got {category!r}")
    if isinstance(stacklevel, bool) or not isinstance(stacklevel, int) or stacklevel < 1:
        raise ValueError(f"stacklevel must be a positive int, got {stacklevel!r}")
    warnings.warn(message, category, stacklevel=stacklevel + 1)  # + 1: this function's own frame
