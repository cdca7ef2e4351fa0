"""The optimizer base class: parameter groups, per-parameter state, ``zero_grad`` and
``state_dict``/``load_state_dict`` in torch.optim's layout.

Subclasses implement ``_gather(group, params)``, which gathers the group's state tensors and
numbers into an :class:`Update`; the base class makes one fused native call per group with them
(``nodeweave._C._adam_update`` and friends, ops of the engine's table), so the elementwise work of
a step never runs as a Python loop. Inside a traced function (``nodeweave.core.jit.trace``) that
call is recorded: the program updates the parameters at each run, and before each run the
optimizer refreshes the numbers the program reads (learning rate, step counts) from its groups.

>>> import nodeweave.core as nc
>>> w = nc.nn.Parameter(nc.tensor([1.0, -2.0]))
>>> opt = nc.optim.SGD([w], lr=0.5)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w.tolist()
[0.0, 0.0]
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave.core.nn import _row_sparse
from nodeweave import errors as nwerr
from nodeweave.core.nn import _row_sparse

ParamsT = Union[Iterable[Tensor], Iterable[Dict[str, Any]]]

_FUSED_DTYPES = ("float32", "float64")


def check_number(name: str, value: Any, low: float = 0.0, high: Optional[float] = None,
                 high_inclusive: bool = False) -> None:
    """Raises ValueError unless ``low <= value`` (and ``value < high``, or ``<=``), naming the value."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise nwerr.TypeError(f"Invalid {name}: expected a number, got {type(value).__name__} {value!r}")
    ok = math.isfinite(value) and value >= low
    if high is not None:
        ok = ok and (value <= high if high_inclusive else value < high)
    if not ok:
        bound = f"[{low}, {high}{']' if high_inclusive else ')'}" if high is not None else f">= {low}"
        raise nwerr.ValueError(f"Invalid {name} value: {value} (expected {bound})")


def check_betas(betas: Any) -> None:
    """Validates Adam-style ``betas``: a pair of numbers in [0, 1)."""
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise nwerr.ValueError(f"Invalid betas: expected a pair (beta1, beta2), got {betas!r}")
    check_number("beta parameter at index 0", betas[0], 0.0, 1.0)
    check_number("beta parameter at index 1", betas[1], 0.0, 1.0)


class Update:
    """One parameter group's fused update, as a subclass's ``_gather`` describes it.

    ``run(grads, hyper, counts)`` makes the native call; ``state`` lists the state tensors it
    writes besides the parameters (moments, buffers); ``hyper`` and ``counts`` are the numbers of
    this step (``core_framework/optim/update_ops.h`` gives each op's layout; ``counts`` is None for
    an op without them); ``flags`` what selects the arithmetic; ``commit()`` records the step in
    the optimizer's state (step counts), once the update ran."""

    __slots__ = ("run", "state", "hyper", "counts", "flags", "commit")

    def __init__(self, run: Callable[[List[Tensor], Tensor, Optional[Tensor]], None], state: Sequence[Tensor],
                 hyper: Sequence[float], counts: Optional[Sequence[int]], flags: tuple,
                 commit: Callable[[], None] = lambda: None) -> None:
        self.run, self.state, self.hyper, self.counts = run, list(state), list(hyper), counts
        self.flags, self.commit = flags, commit


class _RequiredParameter:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class of all optimizers.

    Args:
        params: an iterable of tensors, or of dicts with a ``"params"`` entry and per-group options.
        defaults: the default value of every option.

    >>> import nodeweave.core as nc
    >>> a, b = nc.nn.Parameter(nc.zeros(2)), nc.nn.Parameter(nc.zeros(3))
    >>> opt = nc.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    >>> [g["lr"] for g in opt.param_groups]
    [0.1, 0.5]
    """

    def __init__(self, params: ParamsT, defaults: Dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: Dict[Tensor, Dict[str, Any]] = defaultdict(dict)
        self.param_groups: List[Dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise nwerr.TypeError("params must be an iterable of Tensors or dicts, but got a Tensor; "
                                  "wrap it in a list")
        if isinstance(params, (set, frozenset)):
            raise nwerr.TypeError("params must be an ordered iterable (list, tuple, generator); "
                                  "a set's order varies between runs")
        groups = list(params)
        if not groups:
            raise nwerr.ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    # ---- groups ----
    def add_param_group(self, param_group: Dict[str, Any]) -> None:
        """Adds a group of parameters with its own options (missing options take the defaults)."""
        if not isinstance(param_group, dict):
            raise nwerr.TypeError(f"param_group must be a dict, got {type(param_group).__name__}")
        if "params" not in param_group:
            raise nwerr.ValueError("param_group must have a 'params' entry")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise nwerr.TypeError("param_group['params'] must be an ordered iterable, not a set")
        params = list(params)
        seen = set()
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise nwerr.TypeError(f"param_group['params'][{i}] must be a Tensor, got {type(p).__name__}")
            if not p.is_leaf:
                raise nwerr.ValueError(f"can't optimize a non-leaf Tensor (param_group['params'][{i}])")
            if p.dtype.name not in _FUSED_DTYPES:
                raise nwerr.TypeError(f"param_group['params'][{i}] has dtype {p.dtype.name}; optimizers "
                                      f"support {' and '.join(_FUSED_DTYPES)} parameters")
            if id(p) in seen:
                raise nwerr.ValueError(f"param_group['params'][{i}] appears twice in the same group")
            seen.add(id(p))
        for g in self.param_groups:
            for p in g["params"]:
                if id(p) in seen:
                    raise nwerr.ValueError("some parameters appear in more than one parameter group")
        group = dict(param_group)
        group["params"] = params
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise nwerr.ValueError(f"parameter group didn't specify a value of required option '{name}'")
            group.setdefault(name, default)
        self._check_group(group)
        self.param_groups.append(group)

    def _check_group(self, group: Dict[str, Any]) -> None:
        """Validates a group's options; subclasses raise nwerr.ValueError naming the bad option."""

    # ---- steps ----
    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        """Performs one update of every parameter that has a gradient; returns ``closure()``'s value."""
        loss = None
        if closure is not None:
            prev = _C.is_grad_enabled()
            _C.set_grad_enabled(True)
            try:
                loss = closure()
            finally:
                _C.set_grad_enabled(prev)
        for group in self.param_groups:
            self._update_group(group)
        return loss

    def _update_group(self, group: Dict[str, Any]) -> None:
        """Updates the group's parameters that have a gradient (subclasses with row-sparse paths
        update those first and pass the rest to :meth:`_apply`)."""
        params = self._with_grad(group)
        if params:
            self._apply(group, params)

    def _gather(self, group: Dict[str, Any], params: List[Tensor]) -> Update:
        raise nwerr.NotImplementedError(f"{type(self).__name__} must implement _gather")

    def _apply(self, group: Dict[str, Any], params: List[Tensor]) -> None:
        """One fused update of ``params`` (each with a dense gradient) of ``group``."""
        u = self._gather(group, params)
        hyper, counts = self._numbers(group, u)
        if _C._jit.tracing():
            self._trace_update(group, params, u, hyper, counts)
        u.run([p.grad for p in params], hyper, counts)
        u.commit()

    def _numbers(self, group: Dict[str, Any], u: Update) -> tuple:
        """The group's hyper and counts tensors, holding ``u``'s numbers. The same tensors serve
        every step of the group, so that a traced program's update reads them by reference."""
        cache = self.__dict__.setdefault("_number_tensors", {})
        n_hyper, n_counts = len(u.hyper), (-1 if u.counts is None else len(u.counts))
        held = cache.get(id(group))
        if held is None or held[0] is not group or held[3] != (n_hyper, n_counts):
            # Filled below, unrecorded (_write_numbers dispatches nothing).
            hyper = _C.empty([n_hyper], dtype=_C.dtype.float64)
            counts = None if u.counts is None else _C.empty([n_counts], dtype=_C.dtype.int64)
            held = cache[id(group)] = (group, hyper, counts, (n_hyper, n_counts))
        _, hyper, counts, _ = held
        _C._write_numbers(hyper, u.hyper)
        if counts is not None:
            _C._write_numbers(counts, [float(c) for c in u.counts])
        return hyper, counts

    def _trace_update(self, group: Dict[str, Any], params: List[Tensor], u: Update, hyper: Tensor,
                      counts: Optional[Tensor]) -> None:
        """Inside a trace: the program holds the state and numbers by reference, and before each
        run the group's current numbers are written into them (the update then matches an eager
        step). A run whose group changed shape (other state tensors, another flag) traces again."""
        from nodeweave.core import jit

        for t in u.state + [hyper] + ([counts] if counts is not None else []):
            _C._jit.capture_state(t)
        key = (tuple(map(id, u.state)), u.flags)
        ids = frozenset(map(id, params))

        def before_run() -> Optional[Callable[[], None]]:
            if not ids <= {id(q) for q in group["params"]}:
                return None
            v = self._gather(group, params)
            if (tuple(map(id, v.state)), v.flags) != key:
                return None
            if any(a is not b for a, b in zip(self._numbers(group, v), (hyper, counts))):
                return None
            return v.commit

        jit._before_each_run(before_run, f"{type(self).__name__}.step()")

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets every parameter's gradient: to None (the default), or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                _row_sparse.clear(p)
                if set_to_none:
                    # Assigned even when already None: a trace sees the reset, so a replay does
                    # not depend on the gradients a call starts with.
                    p.grad = None
                elif p.grad is not None:
                    # A fresh zero tensor rather than zero_(): the engine may hand two leaves the
                    # same gradient tensor, and other code may still hold it.
                    p.grad = _C.zeros_like(p)

    # ---- checkpoints ----
    def state_dict(self) -> Dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``, numbering
        parameters in group order, like torch.optim. State tensors are returned by reference."""
        index: Dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            ids = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index and s}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Restores options and state saved by :meth:`state_dict`; tensors are copied and cast to
        each parameter's dtype (the ``step`` count is kept as is)."""
        if not isinstance(state_dict, dict):
            raise nwerr.TypeError(f"state_dict must be a dict, got {type(state_dict).__name__}")
        for key in ("state", "param_groups"):
            if key not in state_dict:
                raise nwerr.ValueError(f"optimizer state_dict is missing the '{key}' entry")
        saved_groups = state_dict["param_groups"]
        if not isinstance(saved_groups, (list, tuple)) or len(saved_groups) != len(self.param_groups):
            n = len(saved_groups) if isinstance(saved_groups, (list, tuple)) else type(saved_groups).__name__
            raise nwerr.ValueError(f"loaded state dict has {n} parameter groups, but the optimizer has "
                                   f"{len(self.param_groups)}")
        id_map: Dict[Any, Tensor] = {}
        for gi, (ours, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if not isinstance(saved, dict) or "params" not in saved:
                raise nwerr.ValueError(f"loaded param_groups[{gi}] must be a dict with a 'params' entry")
            if len(saved["params"]) != len(ours["params"]):
                raise nwerr.ValueError(f"loaded param_groups[{gi}] has {len(saved['params'])} parameters, but "
                                       f"the optimizer's group {gi} has {len(ours['params'])}")
            for k, p in zip(saved["params"], ours["params"]):
                id_map[k] = p
        saved_state = state_dict["state"]
        if not isinstance(saved_state, dict):
            raise nwerr.TypeError(f"state_dict['state'] must be a dict, got {type(saved_state).__name__}")
        new_state: Dict[Tensor, Dict[str, Any]] = defaultdict(dict)
        for k, s in saved_state.items():
            if k not in id_map:
                raise nwerr.ValueError(f"state_dict['state'] has an entry for parameter {k!r}, which is in no "
                                       f"parameter group")
            p = id_map[k]
            if not isinstance(s, dict):
                raise nwerr.TypeError(f"state_dict['state'][{k!r}] must be a dict, got {type(s).__name__}")
            new_state[p] = {name: _cast_state(name, v, p, k) for name, v in s.items()}
        for ours, saved in zip(self.param_groups, saved_groups):
            params = ours["params"]
            ours.clear()
            ours.update({key: v for key, v in saved.items() if key != "params"})
            ours["params"] = params
        for group in self.param_groups:
            self._check_group(group)
        self.state = new_state

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    # ---- helpers for subclasses ----
    def _with_grad(self, group: Dict[str, Any]) -> List[Tensor]:
        return [p for p in group["params"] if p.grad is not None]

    def _split_row_sparse(self, group: Dict[str, Any], sparse_ok: bool) -> tuple:
        """The group's parameters with a gradient: ``(dense, [(param, rows), ...])``, the second for
        row-sparse gradients (``Embedding(sparse=True)``) when ``sparse_ok``. Those have a sparse
        update of their own, which a trace cannot replay yet (TracingError)."""
        dense, sparse = [], []
        for p in self._with_grad(group):
            rows = _row_sparse.rows(p) if sparse_ok else None
            if rows is None:
                dense.append(p)
                continue
            if _C._jit.tracing():
                raise nwerr.TracingError(f"jit: {type(self).__name__}'s row-sparse update (Embedding(sparse=True)) "
                                         "cannot be traced yet; step the optimizer outside the traced function")
            sparse.append((p, rows))
        return dense, sparse


def _cast_state(name: str, value: Any, param: Tensor, key: Any) -> Any:
    if not isinstance(value, Tensor):
        return value
    value = value.detach()
    if name == "step":
        return value.clone()
    if tuple(value.shape) != tuple(param.shape):
        raise nwerr.ValueError(f"state_dict['state'][{key!r}]['{name}'] has shape {tuple(value.shape)}, but the "
                               f"parameter has shape {tuple(param.shape)}")
    if value.is_floating_point() and value.dtype != param.dtype:
        value = value._cast(param.dtype)
    if value.device != param.device:
        value = value._to_device(param.device)
    return value.clone().contiguous()


def state_like(p: Tensor, value: float = 0.0) -> Tensor:
    """A new state tensor of p's shape and dtype, filled with ``value``. Inside a trace it is made
    unrecorded: the program holds it by reference (the optimizer's running state), rather than
    recreating it at every run."""
    with _C._jit.untraced():
        return _C.full_like(p, float(value))


def step_count(state: Dict[str, Any]) -> int:
    """The state's ``step`` as an int (it may be a tensor in a state dict saved elsewhere)."""
    s = state.get("step", 0)
    return int(s.item()) if isinstance(s, Tensor) else int(s)
