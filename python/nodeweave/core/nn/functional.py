"""Functional forms of the layers (``nodeweave.core.nn.functional``, imported as ``F``), with
torch.nn.functional's names and signatures. Most forward to the native ops of ``nodeweave._C``;
``layer_norm``, ``batch_norm`` and the embedding gradient rules for ``padding_idx``/``sparse`` are
composed here from native ops.

>>> import nodeweave.core as nc
>>> import nodeweave.core.nn.functional as F
>>> F.relu(nc.tensor([-1.0, 2.0])).tolist()
[0.0, 2.0]
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple, Union

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave.core.autograd import no_grad
from nodeweave.core.nn import _row_sparse
from nodeweave import errors as nwerr

__all__ = [
    "relu", "leaky_relu", "elu", "gelu", "sigmoid", "silu", "tanh", "softplus", "logsigmoid", "softmax",
    "log_softmax", "dropout", "linear", "embedding", "one_hot", "layer_norm", "batch_norm", "normalize",
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy_with_logits", "margin_ranking_loss",
]


def _check_tensor(name: str, value: object, fn: str) -> None:
    if not isinstance(value, Tensor):
        raise nwerr.TypeError(f"{fn}: {name} must be a Tensor, got {type(value).__name__}")


# ---- activations ----
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        input.relu_()
        return input
    return _C.relu(input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    out = _C.leaky_relu(input, negative_slope)
    if inplace:
        input.copy_(out)
        return input
    return out


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    out = _C.elu(input, alpha)
    if inplace:
        input.copy_(out)
        return input
    return out


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return _C.gelu(input, approximate)


def sigmoid(input: Tensor) -> Tensor:
    return _C.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    return _C.tanh(input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (swish), composed of engine ops; ``inplace`` is accepted for torch's
    signature and ignored (the result is always a new tensor)."""
    return input * _C.sigmoid(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return _C.softplus(input, beta, threshold)


def logsigmoid(input: Tensor) -> Tensor:
    return _C.logsigmoid(input)


def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    return _C.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    return _C.log_softmax(input, dim, dtype)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes elements with probability ``p`` and scales the rest by ``1/(1-p)`` when training."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise nwerr.ValueError(f"dropout probability has to be between 0 and 1, but got {p!r}")
    out = _C.dropout(input, float(p), bool(training))
    if inplace:
        input.copy_(out)
        return input
    return out


# ---- linear and embedding ----
def linear(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """``input @ weight.T + bias``."""
    return _C.linear(input, weight, bias)


def embedding(input: Tensor, weight: Tensor, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at the integer ids ``input``: shape ``input.shape + weight.shape[1:]``.

    ``padding_idx``: that row receives no gradient. ``max_norm``: looked-up rows whose ``norm_type``-norm
    exceeds it are first rescaled in place to norm ``max_norm`` (as torch does). ``sparse``: besides the
    dense ``weight.grad``, the lookup's gradient is recorded by rows so that SGD/Adagrad/SparseAdam
    update only the rows used (see ``nodeweave.core.nn._row_sparse``).

    >>> import nodeweave.core as nc
    >>> w = nc.tensor([[0.0, 0.0], [1.0, 2.0]])
    >>> nc.nn.functional.embedding(nc.tensor([1, 1, 0]), w).tolist()
    [[1.0, 2.0], [1.0, 2.0], [0.0, 0.0]]
    """
    _check_tensor("input", input, "embedding")
    _check_tensor("weight", weight, "embedding")
    if weight.dim() != 2:
        raise nwerr.ValueError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got shape "
                               f"{tuple(weight.shape)}")
    if padding_idx is not None:
        n = weight.shape[0]
        if not -n <= padding_idx < n:
            raise nwerr.ValueError(f"embedding: padding_idx must be within num_embeddings ({n}), got {padding_idx}")
        padding_idx = padding_idx + n if padding_idx < 0 else padding_idx
    if max_norm is not None:
        _renorm_rows(weight, input, float(max_norm), float(norm_type))
    out = _C.embedding(weight, input)
    if not out.requires_grad or (padding_idx is None and not sparse):
        return out
    st = _row_sparse.attach(weight) if sparse and weight.is_leaf else None
    mask = None
    if padding_idx is not None:
        with no_grad():
            mask = input.ne(padding_idx).unsqueeze(-1).to(out.dtype)
    skip = -1 if padding_idx is None else padding_idx

    def on_grad(grad: Tensor) -> Optional[Tensor]:
        if mask is not None:
            grad = grad * mask
        if st is not None:
            _row_sparse.record(st, input, grad, skip)
        return grad if mask is not None else None

    out.register_hook(on_grad)
    return out


def _renorm_rows(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    # A row looked up twice is written twice with the same values, so duplicates are harmless.
    if not max_norm > 0:
        raise nwerr.ValueError(f"embedding: max_norm must be positive, got {max_norm}")
    with no_grad():
        flat = input.reshape([-1])
        rows = weight.index_select(0, flat)
        norms = rows.norm(norm_type, 1, True)
        scale = _C.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight.index_copy_(0, flat, rows * scale)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    return _C.one_hot(tensor, num_classes)


# ---- normalization ----
def _check_affine(name: str, t: Optional[Tensor], shape: Tuple[int, ...], fn: str) -> None:
    if t is not None:
        _check_tensor(name, t, fn)
        if tuple(t.shape) != shape:
            raise nwerr.ValueError(f"{fn}: {name} must have shape {shape}, got {tuple(t.shape)}")


def layer_norm(input: Tensor, normalized_shape: Union[int, Sequence[int]], weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-5) -> Tensor:
    """Normalizes over the trailing ``normalized_shape`` dims (biased variance), then scales and shifts.

    >>> import nodeweave.core as nc
    >>> y = nc.nn.functional.layer_norm(nc.tensor([[1.0, 3.0]]), [2])
    >>> [round(v, 4) for v in y[0].tolist()]
    [-1.0, 1.0]
    """
    _check_tensor("input", input, "layer_norm")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or input.dim() < k or tuple(input.shape[input.dim() - k:]) != shape:
        raise nwerr.ValueError(f"layer_norm: input of shape {tuple(input.shape)} does not end with normalized_shape "
                               f"{shape}")
    _check_affine("weight", weight, shape, "layer_norm")
    _check_affine("bias", bias, shape, "layer_norm")
    dims = list(range(input.dim() - k, input.dim()))
    centered = input - input.mean(dims, keepdim=True)
    var = (centered * centered).mean(dims, keepdim=True)
    out = centered * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """``input`` divided by its ``p``-norm along ``dim``, the norm clamped to at least ``eps`` (so a
    zero vector stays zero), as torch's ``F.normalize``.

    >>> import nodeweave.core as nc
    >>> nc.nn.functional.normalize(nc.tensor([[3.0, 4.0], [0.0, 0.0]], dtype=nc.float64)).tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    """
    _check_tensor("input", input, "normalize")
    return input / input.norm(p, dim, True).clamp(min=eps)


def batch_norm(input: Tensor, running_mean: Optional[Tensor], running_var: Optional[Tensor],
               weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalizes each channel (dim 1) of ``(N, C)`` or ``(N, C, L)`` input.

    Training uses the batch statistics and, when given, updates the running ones in place
    (``running = (1 - momentum) * running + momentum * batch``, unbiased variance); evaluation uses
    the running statistics.

    >>> import nodeweave.core as nc
    >>> y = nc.nn.functional.batch_norm(nc.tensor([[1.0], [3.0]]), None, None, training=True)
    >>> [round(v, 4) for v in y[:, 0].tolist()]
    [-1.0, 1.0]
    """
    _check_tensor("input", input, "batch_norm")
    if input.dim() < 2:
        raise nwerr.ValueError(f"batch_norm: expected input of shape (N, C) or (N, C, L), got {tuple(input.shape)}")
    c = input.shape[1]
    stat_shape = [1, c] + [1] * (input.dim() - 2)
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        _check_affine(name, t, (c,), "batch_norm")
    _check_affine("weight", weight, (c,), "batch_norm")
    _check_affine("bias", bias, (c,), "batch_norm")
    dims = [0] + list(range(2, input.dim()))
    if training:
        n = input.numel() // c if c else 0
        if n <= 1:
            raise nwerr.ValueError(f"batch_norm: expected more than 1 value per channel when training, got input "
                                   f"of shape {tuple(input.shape)}")
        mean = input.mean(dims, keepdim=True)
        centered = input - mean
        var = (centered * centered).mean(dims, keepdim=True)
        if running_mean is not None or running_var is not None:
            with no_grad():
                if running_mean is not None:
                    running_mean.copy_(running_mean * (1 - momentum) + mean.reshape([c]) * momentum)
                if running_var is not None:
                    unbiased = var.reshape([c]) * (n / (n - 1))
                    running_var.copy_(running_var * (1 - momentum) + unbiased * momentum)
    else:
        if running_mean is None or running_var is None:
            raise nwerr.ValueError("batch_norm: running_mean and running_var are required when not training")
        mean, var = running_mean.reshape(stat_shape), running_var.reshape(stat_shape)
        centered = input - mean
    out = centered * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight.reshape(stat_shape)
    if bias is not None:
        out = out + bias.reshape(stat_shape)
    return out


# ---- losses ----
def cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    return _C.cross_entropy(input, target, weight, ignore_index=ignore_index, reduction=reduction,
                            label_smoothing=label_smoothing)


def nll_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    return _C.nll_loss(input, target, weight, ignore_index=ignore_index, reduction=reduction)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    return _C.mse_loss(input, target, reduction=reduction)


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    return _C.l1_loss(input, target, reduction=reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                                     reduction: str = "mean", pos_weight: Optional[Tensor] = None) -> Tensor:
    return _C.binary_cross_entropy_with_logits(input, target, weight, reduction=reduction, pos_weight=pos_weight)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``: the ranking loss of knowledge-graph embeddings."""
    return _C.margin_ranking_loss(input1, input2, target, margin, reduction=reduction)
