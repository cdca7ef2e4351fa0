"""``TypedLinear``: a linear map chosen per row by the row's type, with R-GCN's basis and
block-diagonal regularizers (DGL's ``dgl.nn.TypedLinear``), computed by ``gather_mm`` or, for rows
sorted by type, ``segment_mm``.

>>> import nodeweave.core as nc
>>> from nodeweave.nn import TypedLinear
>>> lin = TypedLinear(4, 2, num_types=3, regularizer="basis", num_bases=2)
>>> tuple(lin(nc.ones(5, 4), nc.tensor([0, 2, 1, 1, 0])).shape)
(5, 2)
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from nodeweave import ops

from ._ns import T, nn
from ._checks import id_tensor, positive_int, to_numpy_ids
from nodeweave import errors as nwerr

__all__ = ["TypedLinear"]

_REGULARIZERS = (None, "basis", "bdd")


class TypedLinear(nn.Module):
    r"""``y_i = x_i @ W_{t_i}`` for a row ``x_i`` of type ``t_i``.

    Regularizers (Schlichtkrull et al., 2018):

    - ``None``: ``W`` is ``(num_types, in_size, out_size)``;
    - ``'basis'``: ``W_t = sum_b coeff[t, b] V_b`` with ``W`` = V of shape
      ``(num_bases, in_size, out_size)`` and ``coeff`` of shape ``(num_types, num_bases)``;
    - ``'bdd'``: ``W_t`` is block diagonal with ``num_bases`` blocks of
      ``(in_size / num_bases, out_size / num_bases)``; ``W`` is ``(num_types, num_bases * block size)``.

    Initialization follows DGL: U(-1/sqrt(in), 1/sqrt(in)) (per block input size for ``bdd``) and
    Xavier-uniform (ReLU gain) ``coeff``.

    ``forward(x, x_type, sorted_by_type=False)``; with ``sorted_by_type=True`` the rows must be
    grouped by ascending type and one ``segment_mm`` does the work.

    >>> import nodeweave.core as nc
    >>> lin = TypedLinear(4, 6, num_types=2, regularizer="bdd", num_bases=2)
    >>> tuple(lin.W.shape)
    (2, 12)
    >>> tuple(lin(nc.ones(3, 4), nc.tensor([0, 0, 1]), sorted_by_type=True).shape)
    (3, 6)
    """

    def __init__(self, in_size: int, out_size: int, num_types: int, regularizer: Optional[str] = None,
                 num_bases: Optional[int] = None) -> None:
        super().__init__()
        self.in_size = positive_int(in_size, "in_size", "TypedLinear")
        self.out_size = positive_int(out_size, "out_size", "TypedLinear")
        self.num_types = positive_int(num_types, "num_types", "TypedLinear")
        if regularizer not in _REGULARIZERS:
            raise nwerr.ValueError(f"TypedLinear: regularizer must be None, 'basis' or 'bdd', got {regularizer!r}")
        self.regularizer = regularizer
        if regularizer is None:
            self.W = nn.Parameter(T.zeros((num_types, in_size, out_size)))
            return self.reset_parameters()
        if num_bases is None:
            raise nwerr.ValueError(f"TypedLinear: num_bases is required with regularizer={regularizer!r}")
        self.num_bases = positive_int(num_bases, "num_bases", "TypedLinear")
        if regularizer == "basis":
            self.W = nn.Parameter(T.zeros((num_bases, in_size, out_size)))
            self.coeff = nn.Parameter(T.zeros((num_types, num_bases)))
        else:
            if in_size % num_bases or out_size % num_bases:
                raise nwerr.ValueError(f"TypedLinear: with regularizer='bdd', num_bases ({num_bases}) must divide "
                                       f"in_size ({in_size}) and out_size ({out_size})")
            self.submat_in = in_size // num_bases
            self.submat_out = out_size // num_bases
            self.W = nn.Parameter(T.zeros((num_types, num_bases * self.submat_in * self.submat_out)))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """U(-1/sqrt(fan_in), 1/sqrt(fan_in)) ``W``; Xavier-uniform (ReLU gain) ``coeff``."""
        fan_in = self.submat_in if self.regularizer == "bdd" else self.in_size
        bound = 1.0 / math.sqrt(fan_in)
        nn.init.uniform_(self.W, -bound, bound)
        if self.regularizer == "basis":
            nn.init.xavier_uniform_(self.coeff, gain=nn.init.calculate_gain("relu"))

    def get_weight(self) -> Any:
        """The per-type weights: ``(num_types, in_size, out_size)``; for ``bdd`` the raw blocks
        ``(num_types, num_bases * block size)``.

        >>> tuple(TypedLinear(4, 2, 3, "basis", 2).get_weight().shape)
        (3, 4, 2)
        """
        if self.regularizer == "basis":
            bases = self.W.reshape(self.num_bases, self.in_size * self.out_size)
            return (self.coeff @ bases).reshape(self.num_types, self.in_size, self.out_size)
        return self.W

    def dense_weight(self) -> Any:
        """``(num_types, in_size, out_size)`` for every regularizer (``bdd`` blocks laid out on the
        diagonal); meant for inspection and tests, the forward never builds it for ``bdd``.

        >>> w = TypedLinear(4, 4, 1, "bdd", 2).dense_weight()
        >>> w[0, :2, 2:].abs().sum().item()
        0.0
        """
        if self.regularizer != "bdd":
            return self.get_weight()
        nb, si, so = self.num_bases, self.submat_in, self.submat_out
        blocks = self.W.reshape(self.num_types, nb, si, so)
        rows = []
        for b in range(nb):
            parts = [blocks[:, b] if c == b else T.zeros((self.num_types, si, so), dtype=self.W.dtype,
                                                          device=self.W.device) for c in range(nb)]
            rows.append(T.cat(parts, 2))
        return T.cat(rows, 1)

    def check_types(self, x_type: Any, rows: int, name: str = "x_type", what: str = "row") -> np.ndarray:
        """``x_type`` as a NumPy array after checking its length (one per ``what``) and range;
        errors name ``name``.

        >>> TypedLinear(2, 2, 3).check_types([0, 2], 2).tolist()
        [0, 2]
        """
        t = to_numpy_ids(x_type, name)
        if len(t) != rows:
            raise nwerr.ValueError(f"{name} must have one entry per {what} ({rows}), got {len(t)}")
        if t.size and (t.min() < 0 or t.max() >= self.num_types):
            raise nwerr.ValueError(f"{name} must be in [0, {self.num_types}) (the number of types), got values "
                                   f"{int(t.min())}..{int(t.max())}")
        return t

    @staticmethod
    def check_sorted(types: np.ndarray, name: str = "x_type", flag: str = "sorted_by_type") -> None:
        """Raises ValueError naming ``name`` and ``flag`` unless ``types`` is non-decreasing.

        >>> import numpy as np
        >>> TypedLinear.check_sorted(np.array([0, 1, 0]), "etypes", "presorted")
        Traceback (most recent call last):
        ...
        nodeweave.errors.ValueError: presorted=True but etypes is not sorted: etypes[2] = 0 comes after 1; ...
        """
        bad = np.flatnonzero(np.diff(types) < 0) if types.size else types
        if bad.size:
            i = int(bad[0]) + 1
            raise nwerr.ValueError(f"{flag}=True but {name} is not sorted: {name}[{i}] = {int(types[i])} comes after "
                                   f"{int(types[i - 1])}; sort by type or pass {flag}=False")

    def typed_rows(self, x: Any, types: np.ndarray, rows: Optional[Any] = None, sorted_by_type: bool = False) -> Any:
        """``x[rows[i]] @ W_{types[i]}`` for every ``i`` (``rows`` None: ``x``'s own rows).

        Without sorting, one ``gather_mm`` reads the rows of ``x`` in place; with
        ``sorted_by_type`` the rows are gathered once and one ``segment_mm`` runs per type segment.

        >>> import numpy as np, nodeweave.core as nc
        >>> lin = TypedLinear(2, 3, 2)
        >>> tuple(lin.typed_rows(nc.ones(4, 2), np.array([1, 0, 0]), rows=nc.tensor([3, 3, 0])).shape)
        (3, 3)
        """
        if sorted_by_type:
            self.check_sorted(types)
        type_t = id_tensor(types, x)
        if self.regularizer == "bdd":
            nb, si, so = self.num_bases, self.submat_in, self.submat_out
            # Row i, block b multiplies x[rows[i], b*si:(b+1)*si] by block (types[i], b).
            blocks = self.W.reshape(self.num_types * nb, si, so)
            offs = T.arange(nb, device=x.device).reshape(1, nb)
            base = rows if rows is not None else T.arange(x.shape[0], device=x.device)
            idx_a = (base.reshape(-1, 1) * nb + offs).reshape(-1)
            idx_b = (type_t.reshape(-1, 1) * nb + offs).reshape(-1)
            out = ops.gather_mm(x.reshape(x.shape[0] * nb, si), blocks, idx_a=idx_a, idx_b=idx_b)
            return out.reshape(len(types), self.out_size)
        w = self.get_weight()
        if sorted_by_type:
            seglen = np.bincount(types, minlength=self.num_types)
            a = x if rows is None else x.index_select(0, rows)
            return ops.segment_mm(a, w, seglen.tolist())
        return ops.gather_mm(x, w, idx_a=rows, idx_b=type_t)

    def typed_weight_rows(self, ids: Any, types: np.ndarray) -> Any:
        """``W_{types[i]}[ids[i]]`` for every ``i``: the product of a one-hot row (``ids[i]`` of
        ``in_size`` categories) with ``W_{types[i]}``, read as a row lookup instead of a matmul.

        ``ids`` is an int64 tensor of values in ``[0, in_size)`` (checked by the caller). ``bdd``
        has no one-hot form (its blocks see slices of the input) and raises ValueError.

        >>> import numpy as np, nodeweave.core as nc
        >>> lin = TypedLinear(5, 3, 2)
        >>> rows = lin.typed_weight_rows(nc.tensor([4, 0]), np.array([1, 0]))
        >>> bool((rows[0] == lin.W[1, 4]).all().item())
        True
        """
        if self.regularizer == "bdd":
            raise nwerr.ValueError("TypedLinear: regularizer='bdd' cannot take node-id (one-hot) input; "
                                   "use None or 'basis', or pass dense features")
        table = self.get_weight().reshape(self.num_types * self.in_size, self.out_size)
        return table.index_select(0, id_tensor(types, ids) * self.in_size + ids)

    def forward(self, x: Any, x_type: Any, sorted_by_type: bool = False) -> Any:
        if x.dim() != 2 or x.shape[1] != self.in_size:
            raise nwerr.ValueError(f"TypedLinear: x must have shape (N, {self.in_size}), got {tuple(x.shape)}")
        types = self.check_types(x_type, x.shape[0])
        return self.typed_rows(x, types, None, sorted_by_type)

    def extra_repr(self) -> str:
        s = f"in_size={self.in_size}, out_size={self.out_size}, num_types={self.num_types}"
        if self.regularizer is not None:
            s += f", regularizer={self.regularizer!r}, num_bases={self.num_bases}"
        return s
