"""Heterogeneous-graph modules: ``HeteroGraphConv`` (one module per relation, results combined per
destination node type), ``HeteroLinear`` and ``HeteroEmbedding`` (one Linear / Embedding per type),
as DGL's.

>>> import nodeweave as nw, nodeweave.core as nc
>>> from nodeweave.nn import HeteroGraphConv, SAGEConv
>>> g = nw.heterograph({("user", "follows", "user"): ([0, 1], [1, 2]),
...                     ("user", "plays", "game"): ([0, 2], [0, 1])})
>>> conv = HeteroGraphConv({"follows": SAGEConv(4, 2, "mean"), "plays": SAGEConv(4, 2, "mean")})
>>> out = conv(g, {"user": nc.ones(3, 4), "game": nc.ones(2, 4)})
>>> sorted(out), tuple(out["game"].shape)
(['game', 'user'], (2, 2))
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from ._ns import T, nn
from ._checks import is_block, positive_int, relation_graph
from nodeweave import errors as nwerr

__all__ = ["HeteroGraphConv", "HeteroLinear", "HeteroEmbedding"]

Aggregate = Union[str, Callable[[List[Any], str], Any]]
_AGGREGATES = ("sum", "max", "min", "mean", "stack")


class _StackedAggregate:
    """Combines the results of the relations arriving at one node type with ``how`` ('sum',
    'max', 'min', 'mean', or 'stack' along a new dim 1). A module-level class rather than a
    closure, so that a HeteroGraphConv pickles (``torch.save(conv)``, loader workers)."""

    def __init__(self, how: str) -> None:
        self.how = how
        self.__name__ = f"{how}_aggregate"

    def __call__(self, tensors: List[Any], dsttype: str) -> Optional[Any]:
        how = self.how
        if not tensors:
            return None
        if how == "stack":
            return T.stack(tensors, 1)
        if len(tensors) == 1:
            return tensors[0]
        stacked = T.stack(tensors, 0)
        if how == "sum":
            return stacked.sum(0)
        if how == "mean":
            return stacked.mean(0)
        return stacked.amax(0) if how == "max" else stacked.amin(0)

    def __repr__(self) -> str:
        return f"{self.how}_aggregate"


def _is_feature_dict(x: Any) -> bool:
    """A Mapping, or a dict-like container not registered as one: ``torch.nn.ParameterDict`` (DGL's
    heterogeneous R-GCN example passes its learnt node embeddings as one)."""
    return isinstance(x, Mapping) or all(callable(getattr(x, m, None))
                                         for m in ("keys", "items", "__getitem__", "__contains__"))


def _key(k: Any) -> str:
    """ModuleDict key of a type: the name itself, or ``str()`` of a canonical edge type."""
    return k if isinstance(k, str) else str(tuple(k))


class HeteroGraphConv(nn.Module):
    r"""Runs one module per relation of a heterograph and combines, per destination node type,
    the results of the relations that end there::

        h_dst = aggregate_{r = (s, e, dst)} mods[r](g[r], (h_s, h_dst))

    Parameters
    ----------
    mods : dict
        Module per relation, keyed by edge type name (``'follows'``) or canonical edge type
        (``('user', 'follows', 'user')``; takes precedence when both are given). Each is called as
        ``mod(rel_graph, (src_feat, dst_feat), *mod_args[etype], **mod_kwargs[etype])``.
    aggregate : 'sum', 'max', 'min', 'mean', 'stack' or callable
        How results arriving at one node type combine; ``stack`` gives ``(N, num_relations, ...)``.
        A callable gets ``(list_of_tensors, dsttype)``.

    ``forward(g, inputs, mod_args=None, mod_kwargs=None)``: ``inputs`` is ``{ntype: features}``, or
    a ``(src_inputs, dst_inputs)`` pair of dicts; on a block the destination features are the first
    rows of the source ones. Relations whose source type has no input are skipped; node types that
    receive nothing are absent from the output. ``mod_args`` / ``mod_kwargs`` are keyed like
    ``mods``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.heterograph({("a", "x", "b"): ([0], [0]), ("a", "y", "b"): ([1], [0])})
    >>> conv = nw.nn.HeteroGraphConv({"x": nw.nn.SAGEConv((2, 2), 3, "mean"),
    ...                                "y": nw.nn.SAGEConv((2, 2), 3, "mean")}, aggregate="stack")
    >>> tuple(conv(g, {"a": nc.ones(2, 2), "b": nc.ones(1, 2)})["b"].shape)
    (1, 2, 3)
    """

    def __init__(self, mods: Mapping[Any, Any], aggregate: Aggregate = "sum") -> None:
        super().__init__()
        if not isinstance(mods, Mapping) or not mods:
            raise nwerr.ValueError("HeteroGraphConv: mods must be a non-empty dict {edge type: module}")
        self.mod_dict = dict(mods)
        self.mods = nn.ModuleDict({_key(k): v for k, v in mods.items()})
        # As DGL: relation graphs often leave some destination nodes without in-edges.
        for mod in self.mods.values():
            setter = getattr(mod, "set_allow_zero_in_degree", None)
            if callable(setter):
                setter(True)
        if isinstance(aggregate, str):
            if aggregate not in _AGGREGATES:
                raise nwerr.ValueError(f"HeteroGraphConv: aggregate must be one of {', '.join(_AGGREGATES)} or a "
                                       f"callable, got {aggregate!r}")
            self.agg_fn = _StackedAggregate(aggregate)
        elif callable(aggregate):
            self.agg_fn = aggregate
        else:
            raise nwerr.TypeError(f"HeteroGraphConv: aggregate must be a string or a callable, got "
                                  f"{type(aggregate).__name__}")

    def _lookup(self, table: Mapping[Any, Any], cet: Tuple[str, str, str], default: Any) -> Any:
        if cet in table:
            return table[cet]
        if _key(cet) in table:
            return table[_key(cet)]
        return table.get(cet[1], default)

    def _get_module(self, cet: Tuple[str, str, str]) -> Any:
        mods = self.mods
        for key in (_key(cet), cet[1]):
            if key in mods:
                return mods[key]
        raise nwerr.KeyError(f"HeteroGraphConv: no module for edge type {cet}; mods has {sorted(mods.keys())}")

    def forward(self, g: Any, inputs: Any, mod_args: Optional[Mapping[Any, tuple]] = None,
                mod_kwargs: Optional[Mapping[Any, dict]] = None) -> Dict[str, Any]:
        mod_args = mod_args or {}
        mod_kwargs = mod_kwargs or {}
        if isinstance(inputs, tuple):
            if len(inputs) != 2 or not all(_is_feature_dict(d) for d in inputs):
                raise nwerr.TypeError("HeteroGraphConv: inputs must be a dict {ntype: tensor} or a pair of such dicts")
            src_inputs, dst_inputs = inputs
        elif _is_feature_dict(inputs):
            src_inputs = inputs
            if is_block(g):
                dst_inputs = {k: v[:g.num_dst_nodes(k)] for k, v in inputs.items()}
            else:
                dst_inputs = inputs
        else:
            raise nwerr.TypeError(f"HeteroGraphConv: inputs must be a dict {{ntype: tensor}}, got {type(inputs).__name__}")
        outputs: Dict[str, List[Any]] = {}
        for cet in g.canonical_etypes:
            stype, _, dtype = cet
            if stype not in src_inputs:
                continue
            if dtype not in dst_inputs:
                if isinstance(inputs, tuple):
                    continue  # as DGL: a pair of dicts may leave destination types out
                raise nwerr.KeyError(f"HeteroGraphConv: inputs has features for source type {stype!r} of {cet} but "
                                     f"none for its destination type {dtype!r}")
            mod = self._get_module(cet)
            try:
                out = mod(relation_graph(g, cet), (src_inputs[stype], dst_inputs[dtype]),
                          *self._lookup(mod_args, cet, ()), **self._lookup(mod_kwargs, cet, {}))
            except ValueError as e:  # say which relation's inputs were wrong
                raise nwerr.ValueError(f"HeteroGraphConv, relation {cet}: {e}") from e
            outputs.setdefault(dtype, []).append(out)
        result = {}
        for ntype, values in outputs.items():
            agg = self.agg_fn(values, ntype)
            if agg is not None:
                result[ntype] = agg
        return result


class HeteroLinear(nn.Module):
    """One ``nn.Linear(in_size[t], out_size)`` per type ``t`` (node type name or canonical edge
    type), applied to ``feat[t]``: ``forward({t: (N_t, in_size[t])}) -> {t: (N_t, out_size)}``.
    Weights start as torch's Linear init.

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import HeteroLinear
    >>> lin = HeteroLinear({"user": 3, ("user", "plays", "game"): 5}, 2)
    >>> out = lin({"user": nc.ones(4, 3), ("user", "plays", "game"): nc.ones(1, 5)})
    >>> tuple(out["user"].shape), tuple(out[("user", "plays", "game")].shape)
    ((4, 2), (1, 2))
    """

    def __init__(self, in_size: Mapping[Any, int], out_size: int, bias: bool = True) -> None:
        super().__init__()
        if not isinstance(in_size, Mapping) or not in_size:
            raise nwerr.ValueError("HeteroLinear: in_size must be a non-empty dict {type: input size}")
        positive_int(out_size, "out_size", "HeteroLinear")
        self.linears = nn.ModuleDict({_key(t): nn.Linear(n, out_size, bias=bias) for t, n in in_size.items()})

    def reset_parameters(self) -> None:
        """Re-draws every Linear (torch's init)."""
        for lin in self.linears.values():
            lin.reset_parameters()

    def forward(self, feat: Mapping[Any, Any]) -> Dict[Any, Any]:
        out = {}
        for t, x in feat.items():
            if _key(t) not in self.linears:
                raise nwerr.KeyError(f"HeteroLinear: feat has type {t!r} without a Linear (types: "
                                     f"{sorted(self.linears.keys())})")
            out[t] = self.linears[_key(t)](x)
        return out


class HeteroEmbedding(nn.Module):
    """One ``nn.Embedding(num_embeddings[t], embedding_dim)`` per type ``t``:
    ``forward({t: ids}) -> {t: (*ids.shape, embedding_dim)}``. ``weight`` is ``{t: table}``.

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import HeteroEmbedding
    >>> emb = HeteroEmbedding({"user": 4, "game": 2}, 3)
    >>> out = emb({"user": nc.tensor([0, 3]), "game": nc.tensor([1])})
    >>> tuple(out["user"].shape), sorted(emb.weight)
    ((2, 3), ['game', 'user'])
    """

    def __init__(self, num_embeddings: Mapping[Any, int], embedding_dim: int) -> None:
        super().__init__()
        if not isinstance(num_embeddings, Mapping) or not num_embeddings:
            raise nwerr.ValueError("HeteroEmbedding: num_embeddings must be a non-empty dict {type: number of rows}")
        positive_int(embedding_dim, "embedding_dim", "HeteroEmbedding")
        self.embeds = nn.ModuleDict({_key(t): nn.Embedding(n, embedding_dim) for t, n in num_embeddings.items()})
        self.raw_keys = {_key(t): t for t in num_embeddings}

    @property
    def weight(self) -> Dict[Any, Any]:
        """The embedding table of each type."""
        return {self.raw_keys[k]: emb.weight for k, emb in self.embeds.items()}

    def reset_parameters(self) -> None:
        """Re-draws every table from N(0, 1)."""
        for emb in self.embeds.values():
            emb.reset_parameters()

    def forward(self, input_ids: Mapping[Any, Any]) -> Dict[Any, Any]:
        out = {}
        for t, ids in input_ids.items():
            if _key(t) not in self.embeds:
                raise nwerr.KeyError(f"HeteroEmbedding: input_ids has type {t!r} without a table (types: "
                                     f"{sorted(self.embeds.keys())})")
            out[t] = self.embeds[_key(t)](ids)
        return out
