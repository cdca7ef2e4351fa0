"""What GNNExplainer and HeteroGNNExplainer share: argument checks, DGL's regulariser (the masks'
size and entropy terms), the mask initialisation spread and the Adam loop over the masks."""

from __future__ import annotations

import contextlib
import math
import numbers
from typing import Any, Callable, Iterator, List, Sequence

from .._ns import T, nn
from nodeweave import errors as nwerr

__all__ = ["ExplainerBase", "all_rows", "check_feat", "check_logits", "checked_node_id", "edge_mask_std", "eval_mode",
           "predicted", "prediction_nll"]

_EPS = 1e-15   # inside the entropies' logs, as DGL


def _number(value: Any, name: str, cls: str, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) \
            or (positive and value <= 0) or value < 0:
        raise nwerr.ValueError(f"{cls}: {name} must be a {'positive' if positive else 'non-negative'} number, "
                               f"got {value!r}")
    return float(value)


def _entropy(m: Any) -> Any:
    return -m * T.log(m + _EPS) - (1 - m) * T.log(1 - m + _EPS)


def edge_mask_std(num_src: int, num_dst: int) -> float:
    """DGL's initial spread of an edge mask: ReLU's gain times sqrt(2 / (source + destination nodes))."""
    gain = nn.init.calculate_gain("relu")
    return gain * math.sqrt(2.0 / (num_src + num_dst)) if num_src + num_dst > 0 else gain


def check_feat(cls: str, name: str, feat: Any, rows: int) -> None:
    if not isinstance(feat, T.Tensor) or feat.dim() != 2 or not feat.is_floating_point():
        got = f"shape {tuple(feat.shape)}, dtype {feat.dtype}" if isinstance(feat, T.Tensor) else type(feat).__name__
        raise nwerr.ValueError(f"{cls}: {name} must be a floating point (num_nodes, D) tensor, got {got}")
    if feat.shape[0] != rows:
        raise nwerr.ValueError(f"{cls}: {name} has {feat.shape[0]} rows but the graph has {rows} such nodes")


def check_hetero_feat(cls: str, graph: Any, feat: Any) -> None:
    """``feat`` must be ``{node type: (num_nodes, D) float tensor}`` covering every node type."""
    if not isinstance(feat, dict):
        raise nwerr.TypeError(f"{cls}: feat must be a dict {{node type: features}}, got {type(feat).__name__}")
    missing = [nt for nt in graph.ntypes if nt not in feat]
    if missing:
        raise nwerr.ValueError(f"{cls}: feat has no features for the node types {missing}")
    for nt in graph.ntypes:
        check_feat(cls, f"feat[{nt!r}]", feat[nt], graph.num_nodes(nt))


def checked_node_id(cls: str, node_id: Any, count: int) -> int:
    if isinstance(node_id, T.Tensor):
        if node_id.numel() != 1:
            raise nwerr.ValueError(f"{cls}: node_id must be one node, got {node_id.numel()} ids")
        node_id = node_id.reshape(-1)[0].item()
    if isinstance(node_id, bool) or not isinstance(node_id, numbers.Integral) or not 0 <= node_id < count:
        raise nwerr.ValueError(f"{cls}: node_id must be a node of the graph (0..{count - 1}), got {node_id!r}")
    return int(node_id)


def check_logits(cls: str, logits: Any) -> None:
    if not isinstance(logits, T.Tensor) or logits.dim() != 2:
        got = tuple(logits.shape) if isinstance(logits, T.Tensor) else type(logits).__name__
        raise nwerr.ValueError(f"{cls}: the model must return 2-D logits (one row per node or graph), got {got}")


@contextlib.contextmanager
def eval_mode(model: Any) -> Iterator[None]:
    """The model in eval mode for the explanation, back in its former mode afterwards."""
    was_training = bool(getattr(model, "training", False))
    if hasattr(model, "eval"):
        model.eval()
    try:
        yield
    finally:
        if hasattr(model, "train"):
            model.train(was_training)


class _Bar:
    """A tqdm progress bar over the epochs when ``log`` and tqdm is installed (it is optional)."""

    def __init__(self, total: int, desc: str, log: bool) -> None:
        self.bar = None
        if log:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                return
            self.bar = tqdm(total=total, desc=desc, leave=False)

    def update(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class ExplainerBase(nn.Module):
    """What both explainers share: their settings, DGL's regulariser and the Adam loop."""

    def __init__(self, model: Any, num_hops: int, lr: float, num_epochs: int, alpha1: float, alpha2: float,
                 beta1: float, beta2: float, log: bool) -> None:
        super().__init__()
        cls = type(self).__name__
        if not callable(model):
            raise nwerr.TypeError(f"{cls}: model must be a callable module, got {type(model).__name__}")
        for name, value in (("num_hops", num_hops), ("num_epochs", num_epochs)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise nwerr.ValueError(f"{cls}: {name} must be a non-negative int, got {value!r}")
        self.model = model
        self.num_hops, self.num_epochs = int(num_hops), int(num_epochs)
        self.lr = _number(lr, "lr", cls, positive=True)
        self.alpha1, self.alpha2 = _number(alpha1, "alpha1", cls), _number(alpha2, "alpha2", cls)
        self.beta1, self.beta2 = _number(beta1, "beta1", cls), _number(beta2, "beta2", cls)
        self.log = bool(log)

    def _regularize(self, loss: Any, feat_masks: Sequence[Any], edge_masks: Sequence[Any]) -> Any:
        for logits in edge_masks:
            m = T.sigmoid(logits)
            loss = loss + self.alpha1 * m.sum()
            if m.numel():                     # the mean over no edges would be NaN
                loss = loss + self.alpha2 * _entropy(m).mean()
        for logits in feat_masks:
            f = T.sigmoid(logits)
            loss = loss + self.beta1 * f.mean() + self.beta2 * _entropy(f).mean()
        return loss

    def _optimise(self, masks: List[Any], loss_of: Callable[[], Any], desc: str) -> None:
        """``num_epochs`` Adam steps on ``masks`` (Parameters) minimising ``loss_of()``. Gradients are
        taken for the masks only, so the model's own ``.grad`` stay as they were."""
        opt = T.optim.Adam(masks, lr=self.lr)
        bar = _Bar(self.num_epochs, desc, self.log)
        for _ in range(self.num_epochs):
            grads = T.autograd.grad(loss_of(), masks, allow_unused=True)
            for p, g in zip(masks, grads):
                p.grad = T.zeros_like(p) if g is None else g
            opt.step()
            bar.update()
        bar.close()


def prediction_nll(logits: Any, rows: Any, target: Any) -> Any:
    """The negative log-likelihood of the classes ``target`` in the logit rows ``rows``."""
    return -T.log_softmax(logits, dim=-1).index_select(0, rows).gather(1, target).sum()


def predicted(logits: Any, rows: Any) -> Any:
    return logits.argmax(dim=-1).index_select(0, rows).unsqueeze(1)


def all_rows(logits: Any) -> Any:
    return T.arange(logits.shape[0], device=logits.device)
