"""The transform interface: :class:`BaseTransform` (a callable ``graph -> graph``) and
:class:`Compose`, which chains transforms.

A transform never changes the graph it is given: it returns a new graph object (sharing whatever
structure and feature tensors it leaves unchanged), so one graph can be transformed many times, as
a dataset's ``transform=`` does on every access.

>>> import nodeweave as nw
>>> from nodeweave.transforms import Compose, AddSelfLoop, AddReverse
>>> t = Compose([AddSelfLoop(), AddReverse()])
>>> t
Compose([
  AddSelfLoop(allow_duplicate=False, new_etypes=False, edge_feat_names=None, fill_data=1.0),
  AddReverse(copy_edata=False, sym_new_etype=False)
])
>>> [x.tolist() for x in t(nw.graph(([0], [1]))).edges()]
[[0, 0, 1, 1, 0, 1], [1, 0, 1, 0, 0, 1]]
"""

from __future__ import annotations

import abc
from typing import Any, Callable, Sequence
from nodeweave import errors as nwerr

__all__ = ["BaseTransform", "Compose"]


class BaseTransform(abc.ABC):
    """Base of the transforms: subclasses implement ``__call__(g)`` returning the transformed graph.

    ``repr`` shows the constructor arguments, read from the attributes of the same names.

    >>> import nodeweave as nw
    >>> class Reverse(BaseTransform):
    ...     def __call__(self, g):
    ...         return nw.reverse(g)
    >>> Reverse()
    Reverse()
    >>> Reverse()(nw.graph(([0], [1]))).edges()[0].tolist()
    [1]
    """

    #: Constructor arguments shown by ``repr``, in order (attributes of the same names).
    _repr_args: Sequence[str] = ()

    @abc.abstractmethod
    def __call__(self, g: Any) -> Any:
        """The transformed graph (a new graph object; ``g`` is left unchanged)."""

    def __repr__(self) -> str:
        args = ", ".join(f"{a}={getattr(self, a)!r}" for a in self._repr_args)
        return f"{type(self).__name__}({args})"


class Compose(BaseTransform):
    """Applies ``transforms`` in order: ``Compose([f, g])(x) == g(f(x))``.

    Parameters
    ----------
    transforms : list of callables
        Transform objects, or any callables taking and returning a graph.
    """

    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        if isinstance(transforms, (str, bytes)) or not isinstance(transforms, Sequence):
            raise nwerr.TypeError(f"Compose: transforms must be a list of callables, got {type(transforms).__name__}")
        for i, t in enumerate(transforms):
            if not callable(t):
                raise nwerr.TypeError(f"Compose: transforms[{i}] is not callable: {t!r}")
        self.transforms = list(transforms)

    def __call__(self, g: Any) -> Any:
        for t in self.transforms:
            g = t(g)
        return g

    def __repr__(self) -> str:
        inner = ",\n".join(f"  {t!r}" for t in self.transforms)
        return f"Compose([\n{inner}\n])"
