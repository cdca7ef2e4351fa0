"""Pickle support for graphs: the C++ relation graphs travel as their arrays.

A graph object pickles its Python state (types, counts, feature frames, batch counts) without its
query cache (derived data, rebuilt on demand; see :func:`install`), and each
``nodeweave._C.RelationGraph`` through the reducer registered here with :mod:`copyreg`. A relation
is stored as one format it has already built -- COO if it has it (the smallest), else out-CSR, else
in-CSC -- with its id type, the formats it may build, the formats it had built and its device;
loading rebuilds it through the same validating constructors as any other relation (``from_coo`` /
``from_csr``), so a damaged pickle raises instead of making a broken graph, then builds the other
formats it had built (as DGL, whose pickles carry every created format: ``create_formats_()``
before handing a graph to spawned workers means the workers find them built). Nothing is computed
that was not built before.

Features pickle as whatever tensors they are (``torch.Tensor`` natively, ``nodeweave.core.Tensor``
through :mod:`nodeweave.core.pickling`), so ``pickle``, ``copy.deepcopy``, ``torch.save`` and the
argument passing of ``multiprocessing`` all work on graphs.

>>> import pickle, nodeweave as nw, nodeweave.core as nc
>>> g = nw.graph(([0, 1, 2], [1, 2, 0]), idtype="int32")
>>> g.ndata["h"] = nc.tensor([1.0, 2.0, 3.0])
>>> g2 = pickle.loads(pickle.dumps(g))
>>> [t.tolist() for t in g2.edges()], g2.ndata["h"].tolist(), g2.idtype
([[0, 1, 2], [1, 2, 0]], [1.0, 2.0, 3.0], nodeweave.core.int32)
"""

from __future__ import annotations

import copyreg
from typing import Any, Callable

from nodeweave._C import RelationGraph
from nodeweave import errors as nwerr

__all__ = ["install"]

_SWAP = {"coo": "coo", "csr": "csc", "csc": "csr"}


def _rebuild_relation(num_src: int, num_dst: int, idtype: str, fmt: str, arrays: tuple,
                      allowed: list[str], device: str, created: list[str] | None = None) -> RelationGraph:
    """The inverse of :func:`_reduce_relation` (module level so that pickle can name it).
    ``created``: the formats to build after loading (absent from pickles of older versions)."""
    if fmt == "coo":
        rel = RelationGraph.from_coo(num_src, num_dst, arrays[0], arrays[1], idtype, allowed)
    elif fmt == "csr":
        rel = RelationGraph.from_csr(num_src, num_dst, arrays[0], arrays[1], arrays[2], idtype, allowed)
    elif fmt == "csc":
        # The in-CSC of a relation is the out-CSR of its reverse; reversing swaps the formats back.
        rev = RelationGraph.from_csr(num_dst, num_src, arrays[0], arrays[1], arrays[2], idtype,
                                     [_SWAP[f] for f in allowed])
        rel = rev.reverse()
    else:
        raise nwerr.ValueError(f"unpickling a relation graph: unknown format {fmt!r}")
    for f in created or ():
        if f in ("coo", "csr", "csc") and f in rel.allowed_formats:
            getattr(rel, f)()
    return rel if device == "cpu" else rel.to(device)


def _reduce_relation(rel: RelationGraph) -> tuple[Callable[..., Any], tuple]:
    host = rel if rel.device == "cpu" else rel.to("cpu")
    created = host.created_formats
    fmt = next(f for f in ("coo", "csr", "csc") if f in created)
    arrays = tuple(getattr(host, fmt)())
    return _rebuild_relation, (host.num_src, host.num_dst, host.idtype, fmt, arrays,
                               list(host.allowed_formats), rel.device, [f for f in created if f != fmt])


copyreg.pickle(RelationGraph, _reduce_relation)


def _graph_state(g: Any) -> dict[str, Any]:
    """A graph's ``__getstate__``: its attributes with an empty query cache."""
    state = dict(g.__dict__)
    state["_cache"] = {}
    return state


def install(cls: type) -> None:
    """Makes instances of the graph class ``cls`` (and its subclasses, such as blocks) pickle
    without their query cache; unpickling restores the attributes as they were."""
    cls.__getstate__ = _graph_state
