"""``Embedding``: a lookup table of learnable rows, with ``padding_idx`` and row-sparse gradients."""

from __future__ import annotations

from typing import Any, Optional

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave.core.autograd import no_grad
from nodeweave.core.nn import functional as F
from nodeweave.core.nn import init
from nodeweave.core.nn.linear import _dtype_arg, _positive_int
from nodeweave.core.nn.module import Module
from nodeweave.core.nn.parameter import Parameter
from nodeweave import errors as nwerr


class Embedding(Module):
    """Maps integer ids of any shape to rows of ``weight`` (``num_embeddings x embedding_dim``).

    * ``weight`` starts as N(0, 1), like torch; the ``padding_idx`` row starts at zero and receives
      no gradient.
    * ``max_norm``: rows about to be looked up are first rescaled in place to at most that norm.
    * ``sparse=True``: ``weight.grad`` is still the dense gradient, and the rows that were looked up
      are recorded so that SGD (no momentum/decay), Adagrad (no decay) and SparseAdam update only
      those rows (the lookup table of a knowledge-graph model can have millions of rows).

    >>> import nodeweave.core as nc
    >>> emb = nc.nn.Embedding(10, 3, padding_idx=0)
    >>> emb
    Embedding(10, 3, padding_idx=0)
    >>> out = emb(nc.tensor([[0, 2], [4, 0]]))
    >>> tuple(out.shape), out[0, 0].tolist()
    ((2, 2, 3), [0.0, 0.0, 0.0])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: Optional[int] = None,
                 max_norm: Optional[float] = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Optional[Tensor] = None, _freeze: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = _positive_int("num_embeddings", num_embeddings, "Embedding")
        self.embedding_dim = _positive_int("embedding_dim", embedding_dim, "Embedding")
        if padding_idx is not None:
            if isinstance(padding_idx, bool) or not isinstance(padding_idx, int):
                raise nwerr.TypeError(f"Embedding: padding_idx must be an int or None, got {type(padding_idx).__name__}")
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise nwerr.ValueError(f"Embedding: padding_idx must be within num_embeddings ({num_embeddings}), "
                                       f"got {padding_idx}")
            if padding_idx < 0:
                padding_idx += num_embeddings
        if scale_grad_by_freq:
            raise nwerr.NotImplementedError("Embedding: scale_grad_by_freq=True is not supported")
        if max_norm is not None and not max_norm > 0:
            raise nwerr.ValueError(f"Embedding: max_norm must be positive, got {max_norm}")
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.sparse = bool(sparse)
        if _weight is None:
            self.weight = Parameter(_C.empty(num_embeddings, embedding_dim, dtype=_dtype_arg(dtype), device=device),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise nwerr.ValueError(f"Embedding: _weight must have shape ({num_embeddings}, {embedding_dim}), "
                                       f"got {tuple(_weight.shape)}")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: Optional[int] = None,
                        max_norm: Optional[float] = None, norm_type: float = 2.0,
                        sparse: bool = False) -> "Embedding":
        """An Embedding whose weight is (a view of) ``embeddings``, frozen by default."""
        if not isinstance(embeddings, Tensor) or embeddings.dim() != 2:
            raise nwerr.ValueError("Embedding.from_pretrained: embeddings must be a 2-D Tensor")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type, sparse=sparse,
                   _weight=embeddings, _freeze=freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight.select(0, self.padding_idx).fill_(0.0)

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.sparse:
            s += ", sparse=True"
        return s
