"""Recurrent layers: ``GRUCell``, ``LSTMCell``, ``GRU`` and ``LSTM``, with torch.nn's parameter names,
shapes, gate order and initialization, composed from differentiable engine ops.

Gate order follows torch: GRU rows of ``weight_ih``/``weight_hh`` are ``(r, z, n)``, LSTM rows are
``(i, f, g, o)``. Every weight and bias starts as U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), so a
model loads a PyTorch ``state_dict`` unchanged and the other way round.

The multi-layer modules project the whole input sequence through ``weight_ih`` in one matrix
product per layer and direction; only the ``hidden @ weight_hh`` product runs once per time step.

>>> import nodeweave.core as nc
>>> lstm = nc.nn.LSTM(3, 5, num_layers=2, batch_first=True)
>>> out, (h, c) = lstm(nc.randn(4, 7, 3))
>>> tuple(out.shape), tuple(h.shape), tuple(c.shape)
((4, 7, 5), (2, 4, 5), (2, 4, 5))
>>> tuple(nc.nn.GRUCell(3, 5)(nc.randn(4, 3)).shape)
(4, 5)
"""

from __future__ import annotations

import math
from typing import Any, List, Optional, Tuple

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave.core.nn import functional as F
from nodeweave.core.nn import init
from nodeweave.core.nn.linear import _dtype_arg, _positive_int
from nodeweave.core.nn.module import Module
from nodeweave.core.nn.parameter import Parameter
from nodeweave import errors as nwerr

__all__ = ["GRUCell", "LSTMCell", "GRU", "LSTM"]

_GATES = {"GRU": 3, "LSTM": 4}


# ---------------------------------------------------------------- one step of each cell
def _gru_step(x_proj: Tensor, h: Tensor, w_hh: Tensor, b_hh: Optional[Tensor]) -> Tensor:
    """One GRU step given the input projection ``x_proj = x @ w_ih.T + b_ih`` (batch, 3H)."""
    h_proj = F.linear(h, w_hh, b_hh)
    x_r, x_z, x_n = x_proj.chunk(3, -1)
    h_r, h_z, h_n = h_proj.chunk(3, -1)
    r = (x_r + h_r).sigmoid()
    z = (x_z + h_z).sigmoid()
    n = (x_n + r * h_n).tanh()
    return n + z * (h - n)  # = (1 - z) * n + z * h


def _lstm_step(x_proj: Tensor, h: Tensor, c: Tensor, w_hh: Tensor,
               b_hh: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
    """One LSTM step given the input projection (batch, 4H)."""
    gates = x_proj + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c_new = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c_new.tanh(), c_new


# ---------------------------------------------------------------- cells
class _CellBase(Module):
    def __init__(self, mode: str, input_size: int, hidden_size: int, bias: bool, device: Any,
                 dtype: Any) -> None:
        super().__init__()
        cls = type(self).__name__
        self.input_size = _positive_int("input_size", input_size, cls)
        self.hidden_size = _positive_int("hidden_size", hidden_size, cls, allow_zero=False)
        self.bias = bool(bias)
        g = _GATES[mode] * hidden_size
        dt = _dtype_arg(dtype)
        self.weight_ih = Parameter(_C.empty(g, input_size, dtype=dt, device=device))
        self.weight_hh = Parameter(_C.empty(g, hidden_size, dtype=dt, device=device))
        if bias:
            self.bias_ih = Parameter(_C.empty(g, dtype=dt, device=device))
            self.bias_hh = Parameter(_C.empty(g, dtype=dt, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as torch."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _prepare(self, input: Tensor, hx: Optional[Tensor], name: str = "hx") -> Tuple[Tensor, Tensor, bool]:
        """Checks shapes; returns batched (input, hx) and whether the input was unbatched."""
        cls = type(self).__name__
        if not isinstance(input, Tensor):
            raise nwerr.TypeError(f"{cls}: input must be a Tensor, got {type(input).__name__}")
        if input.dim() not in (1, 2) or input.shape[-1] != self.input_size:
            raise nwerr.ValueError(f"{cls}: input must have shape (batch, {self.input_size}) or "
                                   f"({self.input_size},), got {tuple(input.shape)}")
        unbatched = input.dim() == 1
        if unbatched:
            input = input.unsqueeze(0)
        batch = input.shape[0]
        if hx is None:
            hx = _C.zeros(batch, self.hidden_size, dtype=input.dtype, device=input.device)
        else:
            want = (self.hidden_size,) if unbatched else (batch, self.hidden_size)
            if not isinstance(hx, Tensor) or tuple(hx.shape) != want:
                got = tuple(hx.shape) if isinstance(hx, Tensor) else type(hx).__name__
                raise nwerr.ValueError(f"{cls}: {name} must have shape {want}, got {got}")
            if unbatched:
                hx = hx.unsqueeze(0)
        return input, hx, unbatched

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        return s if self.bias else s + ", bias=False"


class GRUCell(_CellBase):
    """One step of a gated recurrent unit (torch.nn.GRUCell)::

        r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)
        z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
        h' = (1 - z) * n + z * h

    ``weight_ih`` is (3*hidden_size, input_size), ``weight_hh`` (3*hidden_size, hidden_size), rows
    in gate order (r, z, n). ``forward(input, hx=None)``: input (batch, input_size) or
    (input_size,); ``hx`` defaults to zeros.

    >>> import nodeweave.core as nc
    >>> cell = nc.nn.GRUCell(2, 3)
    >>> [name for name, _ in cell.named_parameters()]
    ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh']
    >>> tuple(cell(nc.ones(4, 2)).shape)
    (4, 3)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__("GRU", input_size, hidden_size, bias, device, dtype)

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        x, h, unbatched = self._prepare(input, hx)
        out = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return out.squeeze(0) if unbatched else out


class LSTMCell(_CellBase):
    """One step of a long short-term memory cell (torch.nn.LSTMCell)::

        i, f, g, o = split(W_ih x + b_ih + W_hh h + b_hh)      # gate order (i, f, g, o)
        c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
        h' = sigmoid(o) * tanh(c')

    ``forward(input, hx=None)`` with ``hx = (h, c)`` (zeros when None) returns ``(h', c')``.

    >>> import nodeweave.core as nc
    >>> cell = nc.nn.LSTMCell(2, 3)
    >>> tuple(cell.weight_ih.shape), tuple(cell.weight_hh.shape)
    ((12, 2), (12, 3))
    >>> h, c = cell(nc.ones(4, 2))
    >>> tuple(h.shape), tuple(c.shape)
    ((4, 3), (4, 3))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, bias, device, dtype)

    def forward(self, input: Tensor, hx: Optional[Tuple[Tensor, Tensor]] = None) -> Tuple[Tensor, Tensor]:
        if hx is None:
            x, h, unbatched = self._prepare(input, None)
            c = _C.zeros(*h.shape, dtype=h.dtype, device=h.device)
        else:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise nwerr.TypeError("LSTMCell: hx must be a tuple (h, c)")
            x, h, unbatched = self._prepare(input, hx[0], "hx[0]")
            _, c, _ = self._prepare(input, hx[1], "hx[1]")
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


# ---------------------------------------------------------------- multi-layer sequence modules
class _RNNBase(Module):
    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        cls = mode
        self.mode = mode
        self.input_size = _positive_int("input_size", input_size, cls)
        self.hidden_size = _positive_int("hidden_size", hidden_size, cls, allow_zero=False)
        self.num_layers = _positive_int("num_layers", num_layers, cls, allow_zero=False)
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
            raise nwerr.ValueError(f"{cls}: dropout must be a number in [0, 1], got {dropout!r}")
        if proj_size:
            raise nwerr.NotImplementedError(f"{cls}: proj_size > 0 is not supported")
        self.bias = bool(bias)
        self.batch_first = bool(batch_first)
        self.dropout = float(dropout)
        self.bidirectional = bool(bidirectional)
        self.proj_size = 0
        gates = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        dt = _dtype_arg(dtype)
        # Registration order = torch's _flat_weights_names, so named_parameters() lines up.
        for layer in range(num_layers):
            in_size = input_size if layer == 0 else hidden_size * dirs
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                self.register_parameter("weight_ih" + sfx, Parameter(_C.empty(gates, in_size, dtype=dt, device=device)))
                self.register_parameter("weight_hh" + sfx, Parameter(_C.empty(gates, hidden_size, dtype=dt,
                                                                              device=device)))
                if bias:
                    self.register_parameter("bias_ih" + sfx, Parameter(_C.empty(gates, dtype=dt, device=device)))
                    self.register_parameter("bias_hh" + sfx, Parameter(_C.empty(gates, dtype=dt, device=device)))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as torch."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _weights(self, layer: int, d: int) -> Tuple[Tensor, Tensor, Optional[Tensor], Optional[Tensor]]:
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        p = self._parameters
        return (p["weight_ih" + sfx], p["weight_hh" + sfx], p.get("bias_ih" + sfx), p.get("bias_hh" + sfx))

    def _check_hidden(self, t: Any, name: str, want: Tuple[int, ...]) -> None:
        if not isinstance(t, Tensor) or tuple(t.shape) != want:
            got = tuple(t.shape) if isinstance(t, Tensor) else type(t).__name__
            raise nwerr.ValueError(f"{self.mode}: {name} must have shape {want}, got {got}")

    def forward(self, input: Tensor, hx: Any = None) -> Tuple[Tensor, Any]:
        mode = self.mode
        if not isinstance(input, Tensor):
            raise nwerr.TypeError(f"{mode}: input must be a Tensor, got {type(input).__name__}")
        if input.dim() not in (2, 3) or input.shape[-1] != self.input_size:
            raise nwerr.ValueError(f"{mode}: input must have shape (seq_len, batch, {self.input_size}) "
                                   f"(batch first when batch_first=True) or (seq_len, {self.input_size}), "
                                   f"got {tuple(input.shape)}")
        unbatched = input.dim() == 2
        if unbatched:
            x = input.unsqueeze(1)
        else:
            x = input.transpose(0, 1) if self.batch_first else input
        seq_len, batch = x.shape[0], x.shape[1]
        dirs = 2 if self.bidirectional else 1
        n_states = self.num_layers * dirs
        H = self.hidden_size
        want = (n_states, H) if unbatched else (n_states, batch, H)
        if hx is None:
            h0 = _C.zeros(n_states, batch, H, dtype=x.dtype, device=x.device)
            c0 = h0 if mode == "LSTM" else None
        elif mode == "LSTM":
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise nwerr.TypeError("LSTM: hx must be a tuple (h_0, c_0)")
            self._check_hidden(hx[0], "hx[0] (h_0)", want)
            self._check_hidden(hx[1], "hx[1] (c_0)", want)
            h0, c0 = (hx[0].unsqueeze(1), hx[1].unsqueeze(1)) if unbatched else hx
        else:
            self._check_hidden(hx, "hx", want)
            h0, c0 = (hx.unsqueeze(1) if unbatched else hx), None

        h_n: List[Tensor] = []
        c_n: List[Tensor] = []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, d)
                k = layer * dirs + d
                # One product for the whole sequence: (seq_len * batch, gates).
                proj = F.linear(layer_in.reshape(seq_len * batch, layer_in.shape[2]), w_ih, b_ih)
                proj = proj.reshape(seq_len, batch, proj.shape[1])
                h = h0[k]
                c = c0[k] if c0 is not None else None
                steps: List[Optional[Tensor]] = [None] * seq_len
                order = range(seq_len - 1, -1, -1) if d else range(seq_len)
                for t in order:
                    if mode == "LSTM":
                        h, c = _lstm_step(proj[t], h, c, w_hh, b_hh)
                    else:
                        h = _gru_step(proj[t], h, w_hh, b_hh)
                    steps[t] = h
                outs.append(_C.stack(steps, 0) if seq_len else _C.zeros(0, batch, H, dtype=x.dtype,
                                                                         device=x.device))
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            layer_in = outs[0] if dirs == 1 else _C.cat(outs, 2)
            if self.dropout and self.training and layer + 1 < self.num_layers:
                layer_in = F.dropout(layer_in, self.dropout, True)
        output = layer_in
        h_out = _C.stack(h_n, 0)
        c_out = _C.stack(c_n, 0) if mode == "LSTM" else None
        if unbatched:
            output = output.squeeze(1)
            h_out = h_out.squeeze(1)
            c_out = c_out.squeeze(1) if c_out is not None else None
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, ((h_out, c_out) if mode == "LSTM" else h_out)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class LSTM(_RNNBase):
    """A multi-layer LSTM over a sequence (torch.nn.LSTM).

    Parameters ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}`` per layer
    ``k`` (and ``..._reverse`` for the backward direction when ``bidirectional``). Input
    ``(seq_len, batch, input_size)``, or ``(batch, seq_len, input_size)`` with ``batch_first=True``,
    or unbatched ``(seq_len, input_size)``; ``hx = (h_0, c_0)`` of shape
    ``(num_layers * num_directions, batch, hidden_size)``, zeros when None. Returns
    ``output, (h_n, c_n)``; ``output`` holds the last layer's hidden state at every step, the
    directions concatenated. ``dropout`` applies between layers in training mode. ``proj_size`` is
    not supported.

    >>> import nodeweave.core as nc
    >>> lstm = nc.nn.LSTM(2, 3, bidirectional=True)
    >>> out, (h, c) = lstm(nc.randn(5, 4, 2))
    >>> tuple(out.shape), tuple(h.shape)
    ((5, 4, 6), (2, 4, 3))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device: Any = None, dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


class GRU(_RNNBase):
    """A multi-layer GRU over a sequence (torch.nn.GRU); arguments and shapes as :class:`LSTM`,
    with a single hidden state ``hx`` and the return value ``output, h_n``.

    >>> import nodeweave.core as nc
    >>> out, h = nc.nn.GRU(2, 3, num_layers=2)(nc.randn(5, 4, 2))
    >>> tuple(out.shape), tuple(h.shape)
    ((5, 4, 3), (2, 4, 3))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)
