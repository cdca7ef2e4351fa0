"""JumpingKnowledge: combining every layer's node representations, from Xu et al.,
"Representation Learning on Graphs with Jumping Knowledge Networks" (ICML 2018)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ._ns import T, nn
from ._checks import positive_int
from nodeweave import errors as nwerr

__all__ = ["JumpingKnowledge"]

_MODES = ("cat", "max", "lstm")


class JumpingKnowledge(nn.Module):
    r"""Combines a list of per-layer node features :math:`h^{(1)}, \dots, h^{(L)}`:

    - ``'cat'``: :math:`[h^{(1)} \Vert \dots \Vert h^{(L)}]` (last dimension);
    - ``'max'``: the elementwise maximum over the layers;
    - ``'lstm'``: attention over the layers,
      :math:`\sum_l \alpha_l h^{(l)}` with :math:`\alpha = \operatorname{softmax}_l\, a^\top
      \mathrm{BiLSTM}(h^{(1)}, \dots, h^{(L)})_l + b`, where the bidirectional LSTM reads each
      node's sequence of layers with hidden size ``(num_layers * in_feats) // 2``.

    Parameters
    ----------
    mode : str
        ``'cat'`` (default), ``'max'`` or ``'lstm'``.
    in_feats : int, optional
        Feature size of every layer; required for ``'lstm'``.
    num_layers : int, optional
        Number of layers combined; required for ``'lstm'`` (it sizes the LSTM).

    Sub-modules for ``'lstm'``: ``lstm`` (a bidirectional, batch-first ``LSTM``) and ``att``
    (``Linear(2 * hidden, 1)``), DGL's names.

    ``forward(feat_list)``: a list of ``(N, in_feats)`` tensors (``(N, *)`` for ``'cat'`` and
    ``'max'``, which need no sizes).

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import JumpingKnowledge
    >>> xs = [nc.tensor([[1.0, 5.0]]), nc.tensor([[3.0, 2.0]])]
    >>> JumpingKnowledge("cat")(xs).tolist(), JumpingKnowledge("max")(xs).tolist()
    ([[1.0, 5.0, 3.0, 2.0]], [[3.0, 5.0]])
    >>> JumpingKnowledge("lstm", in_feats=2, num_layers=2)(xs).shape
    (1, 2)
    """

    def __init__(self, mode: str = "cat", in_feats: Optional[int] = None,
                 num_layers: Optional[int] = None) -> None:
        super().__init__()
        name = type(self).__name__
        if mode not in _MODES:
            raise nwerr.ValueError(f"{name}: mode must be 'cat', 'max' or 'lstm', got {mode!r}")
        self.mode = mode
        if mode == "lstm":
            if in_feats is None or num_layers is None:
                raise nwerr.ValueError(f"{name}: mode='lstm' needs in_feats and num_layers")
            in_feats = positive_int(in_feats, "in_feats", name)
            num_layers = positive_int(num_layers, "num_layers", name)
            hidden = (num_layers * in_feats) // 2
            if hidden < 1:
                raise nwerr.ValueError(f"{name}: the LSTM's hidden size (num_layers * in_feats) // 2 is 0; "
                                       "use more layers or features")
            self._in_feats = in_feats
            self.lstm = nn.LSTM(in_feats, hidden, bidirectional=True, batch_first=True)
            self.att = nn.Linear(2 * hidden, 1)

    def reset_parameters(self) -> None:
        """Fresh LSTM and attention weights (``'lstm'``; the other modes have none)."""
        if self.mode == "lstm":
            self.lstm.reset_parameters()
            self.att.reset_parameters()

    def forward(self, feat_list: Sequence[Any]):
        """The combined features: ``(N, L * D)`` for ``'cat'``, ``(N, D)`` otherwise."""
        name = type(self).__name__
        if isinstance(feat_list, T.Tensor) or not isinstance(feat_list, (list, tuple)) or not feat_list:
            raise nwerr.TypeError(f"{name}: feat_list must be a non-empty list of tensors, one per layer")
        for i, feat in enumerate(feat_list):
            if not isinstance(feat, T.Tensor):
                raise nwerr.TypeError(f"{name}: feat_list[{i}] must be a tensor, got {type(feat).__name__}")
        if self.mode == "cat":
            return T.cat(list(feat_list), dim=-1)
        shape = tuple(feat_list[0].shape)
        for i, feat in enumerate(feat_list):
            if tuple(feat.shape) != shape:
                raise nwerr.ValueError(f"{name}: mode={self.mode!r} needs every layer's features to have one "
                                       f"shape; feat_list[0] is {shape}, feat_list[{i}] is {tuple(feat.shape)}")
        if self.mode == "max":
            return T.stack(list(feat_list), dim=-1).max(dim=-1)[0]
        if len(shape) != 2 or shape[1] != self._in_feats:
            raise nwerr.ValueError(f"{name}: mode='lstm' needs (num_nodes, in_feats={self._in_feats}) features, "
                                   f"got {shape}")
        stacked = T.stack(list(feat_list), dim=1)               # (N, L, D): one sequence per node
        alpha = self.att(self.lstm(stacked)[0]).squeeze(-1)    # (N, L)
        alpha = T.softmax(alpha, dim=-1)
        return (stacked * alpha.unsqueeze(-1)).sum(1)
