"""Knowledge-graph edge scores TransE and TransR, DGL's ``dgl.nn.TransE`` and ``dgl.nn.TransR``:
a score per (head, relation, tail) triple from the head and tail representations and a learned
embedding of the relation."""

from __future__ import annotations

from typing import Any

from .._ns import T, nn
from .._checks import positive_int
from nodeweave import errors as nwerr

__all__ = ["TransE", "TransR"]


def _check_triples(cls: str, h_head: Any, h_tail: Any, rels: Any, feats: int) -> None:
    for name, t in (("h_head", h_head), ("h_tail", h_tail)):
        if not isinstance(t, T.Tensor):
            raise nwerr.TypeError(f"{cls}: {name} must be a tensor, got {type(t).__name__}")
        if t.dim() != 2 or t.shape[1] != feats:
            raise nwerr.ValueError(f"{cls}: {name} must have shape (num_triples, {feats}), got {tuple(t.shape)}")
    if tuple(h_head.shape) != tuple(h_tail.shape):
        raise nwerr.ValueError(f"{cls}: h_head {tuple(h_head.shape)} and h_tail {tuple(h_tail.shape)} must "
                               "have the same shape (one row per triple)")
    if not isinstance(rels, T.Tensor) or rels.dim() != 1 or rels.shape[0] != h_head.shape[0]:
        got = tuple(rels.shape) if isinstance(rels, T.Tensor) else type(rels).__name__
        raise nwerr.ValueError(f"{cls}: rels must be a 1-D tensor of {h_head.shape[0]} relation ids (one per "
                               f"triple), got {got}")


def _check_p(p: Any, cls: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p <= 0:
        raise nwerr.ValueError(f"{cls}: p must be a positive number (the norm's order), got {p!r}")
    return p


class TransE(nn.Module):
    r"""TransE score :math:`-\lVert h + r - t\rVert_p` of each triple (head :math:`h`, relation
    :math:`r`, tail :math:`t`), :math:`r` a learned ``feats``-wide embedding of the relation id
    (``rel_emb``, an ``Embedding(num_rels, feats)``).

    ``forward(h_head, h_tail, rels)``: ``(E, feats)`` head and tail representations and ``E``
    relation ids; returns ``E`` scores (higher: more plausible).

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import TransE
    >>> score = TransE(num_rels=2, feats=3)
    >>> tuple(score(nc.ones(4, 3), nc.zeros(4, 3), nc.tensor([0, 1, 1, 0])).shape)
    (4,)
    """

    def __init__(self, num_rels: int, feats: int, p: float = 1) -> None:
        super().__init__()
        self.num_rels = positive_int(num_rels, "num_rels", "TransE")
        self.feats = positive_int(feats, "feats", "TransE")
        self.p = _check_p(p, "TransE")
        self.rel_emb = nn.Embedding(num_rels, feats)

    def reset_parameters(self) -> None:
        """Reinitialises the relation embeddings."""
        self.rel_emb.reset_parameters()

    def forward(self, h_head: Any, h_tail: Any, rels: Any) -> Any:
        _check_triples("TransE", h_head, h_tail, rels, self.feats)
        return -T.norm(h_head + self.rel_emb(rels) - h_tail, p=self.p, dim=-1)

    def extra_repr(self) -> str:
        return f"num_rels={self.num_rels}, feats={self.feats}, p={self.p}"


class TransR(nn.Module):
    r"""TransR score :math:`-\lVert h M_r + r - t M_r\rVert_p`: head and tail (``nfeats`` wide) are
    projected into the relation's ``rfeats``-wide space by a learned ``nfeats x rfeats`` matrix
    :math:`M_r` per relation (``rel_project``, an ``Embedding(num_rels, nfeats * rfeats)``), then
    scored as :class:`TransE` with the relation embedding :math:`r` (``rel_emb``).

    ``forward(h_head, h_tail, rels)``: ``(E, nfeats)`` head and tail representations and ``E``
    relation ids; returns ``E`` scores.

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import TransR
    >>> score = TransR(num_rels=2, rfeats=2, nfeats=3)
    >>> tuple(score(nc.ones(4, 3), nc.zeros(4, 3), nc.tensor([0, 1, 1, 0])).shape)
    (4,)
    """

    def __init__(self, num_rels: int, rfeats: int, nfeats: int, p: float = 1) -> None:
        super().__init__()
        self.num_rels = positive_int(num_rels, "num_rels", "TransR")
        self.rfeats = positive_int(rfeats, "rfeats", "TransR")
        self.nfeats = positive_int(nfeats, "nfeats", "TransR")
        self.p = _check_p(p, "TransR")
        self.rel_emb = nn.Embedding(num_rels, rfeats)
        self.rel_project = nn.Embedding(num_rels, nfeats * rfeats)

    def reset_parameters(self) -> None:
        """Reinitialises the relation embeddings and projections."""
        self.rel_emb.reset_parameters()
        self.rel_project.reset_parameters()

    def forward(self, h_head: Any, h_tail: Any, rels: Any) -> Any:
        _check_triples("TransR", h_head, h_tail, rels, self.nfeats)
        proj = self.rel_project(rels).reshape(-1, self.nfeats, self.rfeats)
        head = T.matmul(h_head.unsqueeze(1), proj).squeeze(1)
        tail = T.matmul(h_tail.unsqueeze(1), proj).squeeze(1)
        return -T.norm(head + self.rel_emb(rels) - tail, p=self.p, dim=-1)

    def extra_repr(self) -> str:
        return f"num_rels={self.num_rels}, rfeats={self.rfeats}, nfeats={self.nfeats}, p={self.p}"
