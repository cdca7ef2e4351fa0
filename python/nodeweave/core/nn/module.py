"""``Module``: the base class of layers and models, with torch.nn.Module's registration rules,
traversal, train/eval mode, ``state_dict``/``load_state_dict`` and dtype/device conversion.

Assigning a :class:`Parameter` or a ``Module`` to an attribute registers it; buffers (running
statistics and other non-learnable state) are registered with :meth:`Module.register_buffer`.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Set, Tuple, TypeVar, Union

from nodeweave import _C
from nodeweave._C import Tensor
from nodeweave.core._tensor import parse_to_args
from nodeweave.core.autograd import no_grad
from nodeweave.core.nn import _row_sparse
from nodeweave.core.nn.parameter import Parameter
from nodeweave import errors as nwerr

T = TypeVar("T", bound="Module")


class IncompatibleKeys(NamedTuple):
    """What :meth:`Module.load_state_dict` did not match (like torch's ``_IncompatibleKeys``)."""

    missing_keys: List[str]
    unexpected_keys: List[str]


class RemovableHandle:
    """Returned by hook registrations; ``remove()`` unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks: Dict[int, Callable]) -> None:
        self.hooks = hooks
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self) -> None:
        self.hooks.pop(self.id, None)


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _check_name(kind: str, name: Any) -> None:
    if not isinstance(name, str):
        raise nwerr.TypeError(f"{kind} name must be a str, got {type(name).__name__}")
    if name == "":
        raise nwerr.ValueError(f'{kind} name can\'t be empty string ""')
    if "." in name:
        raise nwerr.ValueError(f"{kind} name can't contain \".\", got {name!r}")


class Module:
    """Base class of every layer and model.

    >>> import nodeweave.core as nc
    >>> class TwoLayer(nc.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc1 = nc.nn.Linear(4, 8)
    ...         self.fc2 = nc.nn.Linear(8, 2)
    ...     def forward(self, x):
    ...         return self.fc2(self.fc1(x).relu())
    >>> m = TwoLayer()
    >>> [name for name, _ in m.named_parameters()]
    ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']
    >>> tuple(m(nc.ones(3, 4)).shape)
    (3, 2)
    """

    training: bool
    _parameters: Dict[str, Optional[Parameter]]
    _buffers: Dict[str, Optional[Tensor]]
    _modules: Dict[str, Optional["Module"]]

    def __init__(self) -> None:
        # object.__setattr__: our own __setattr__ reads these dicts.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_forward_hooks", {})
        object.__setattr__(self, "_forward_pre_hooks", {})

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise nwerr.NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self._forward_pre_hooks and not self._forward_hooks:
            return self.forward(*args, **kwargs)
        for hook in list(self._forward_pre_hooks.values()):
            res = hook(self, args)
            if res is not None:
                args = res if isinstance(res, tuple) else (res,)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            res = hook(self, args, out)
            if res is not None:
                out = res
        return out

    def register_forward_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, args) -> None or new args`` runs before ``forward``."""
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        return handle

    def register_forward_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, args, output) -> None or new output`` runs after ``forward``."""
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        return handle

    # ---- registration ----
    def register_buffer(self, name: str, tensor: Optional[Tensor], persistent: bool = True) -> None:
        """Registers non-learnable state; persistent buffers are part of :meth:`state_dict`."""
        if "_buffers" not in self.__dict__:
            raise nwerr.AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name("buffer", name)
        if hasattr(self, name) and name not in self._buffers:
            raise nwerr.KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise nwerr.TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                                  f"(Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Optional[Parameter]) -> None:
        """Registers ``param`` (a :class:`Parameter` or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise nwerr.AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name("parameter", name)
        if hasattr(self, name) and name not in self._parameters:
            raise nwerr.KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise nwerr.TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                                  f"(nodeweave.core.nn.Parameter or None required)")
        self._parameters[name] = param

    def add_module(self, name: str, module: Optional["Module"]) -> None:
        """Registers a child module under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise nwerr.TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name("module", name)
        if hasattr(self, name) and name not in self._modules:
            raise nwerr.KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> "Module":
        """The submodule at a dotted path such as ``"encoder.layers.0"``."""
        mod: Module = self
        if target == "":
            return mod
        for item in target.split("."):
            sub = mod._modules.get(item) if isinstance(mod, Module) else None
            if sub is None:
                raise nwerr.AttributeError(f"{mod._get_name()} has no submodule `{item}` (looking up '{target}')")
            mod = sub
        return mod

    def get_parameter(self, target: str) -> Parameter:
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters or mod._parameters[name] is None:
            raise nwerr.AttributeError(f"{mod._get_name()} has no parameter `{name}` (looking up '{target}')")
        return mod._parameters[name]

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: look in the registries.
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            reg = d.get(registry)
            if reg is not None and name in reg:
                return reg[name]
        raise nwerr.AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise nwerr.AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise nwerr.TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                      f"(nodeweave.core.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise nwerr.AttributeError("cannot assign module before Module.__init__() call")
            remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise nwerr.TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                      f"(nodeweave.core.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = self.__dict__.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise nwerr.TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                      f"(Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        for registry in ("_parameters", "_buffers", "_modules"):
            reg = self.__dict__.get(registry)
            if reg is not None and name in reg:
                del reg[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> List[str]:
        keys = list(super().__dir__()) + list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(set(k for k in keys if not k[0].isdigit()))

    # ---- traversal ----
    def named_modules(self, memo: Optional[Set[int]] = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[Tuple[str, "Module"]]:
        """This module and all below it, depth first, each once (unless ``remove_duplicate=False``)."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[Tuple[str, "Module"]]:
        seen: Set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, get_members: Callable, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[Tuple[str, Any]]:
        seen: Set[int] = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for k, v in get_members(mod):
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield mod_prefix + ("." if mod_prefix else "") + k, v

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[Tuple[str, Parameter]]:
        """``(name, parameter)`` pairs; a parameter shared by several modules is listed once."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[Tuple[str, Tensor]]:
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes ----
    def train(self: T, mode: bool = True) -> T:
        """Sets training mode here and in every submodule (Dropout, BatchNorm behave differently)."""
        if not isinstance(mode, bool):
            raise nwerr.TypeError(f"training mode is expected to be a bool, got {type(mode).__name__}")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self: T) -> T:
        return self.train(False)

    def requires_grad_(self: T, requires_grad: bool = True) -> T:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients of all parameters (to None by default, or to zeros)."""
        for p in self.parameters():
            _row_sparse.clear(p)
            if p.grad is not None:
                p.grad = None if set_to_none else _C.zeros_like(p)

    def apply(self: T, fn: Callable[["Module"], None]) -> T:
        """Calls ``fn`` on every submodule (children first) and then on this module."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- conversion ----
    def _apply(self: T, fn: Callable[[Tensor], Tensor]) -> T:
        for m in self.children():
            m._apply(fn)
        for name, p in list(self._parameters.items()):
            if p is None:
                continue
            with no_grad():
                new = fn(p)
            if new is p:
                continue
            # Conversions make new Parameter objects (there is no in-place `.data` swap), so build
            # optimizers after calling to()/double(), as the torch docs also advise.
            q = Parameter(new, requires_grad=p.requires_grad)
            if p.grad is not None:
                with no_grad():
                    q.grad = fn(p.grad)
            self._parameters[name] = q
        for name, b in list(self._buffers.items()):
            if b is not None:
                with no_grad():
                    self._buffers[name] = fn(b)
        return self

    def to(self: T, *args: Any, **kwargs: Any) -> T:
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``: converts parameters and
        buffers; a dtype applies to floating point tensors only."""
        device, dtype = parse_to_args(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise nwerr.TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired "
                                  f"dtype=nodeweave.core.{dtype.name}")

        def convert(t: Tensor) -> Tensor:
            out = t
            if device is not None and out.device != device:
                out = out._to_device(device)
            if dtype is not None and out.is_floating_point() and out.dtype != dtype:
                out = out._cast(dtype)
            return out

        return self._apply(convert)

    def double(self: T) -> T:
        return self.to(_C.dtype.float64)

    def float(self: T) -> T:
        return self.to(_C.dtype.float32)

    def cpu(self: T) -> T:
        return self.to("cpu")

    def cuda(self: T, device: Union[int, str, None] = None) -> T:
        return self.to("cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device))

    def __deepcopy__(self: T, memo: Dict[int, Any]) -> T:
        """An independent copy (``copy.deepcopy(model)``, e.g. for a target network or an EMA model).

        Native tensors have no generic deep copy, so the buffers and plain tensor attributes of every
        submodule are cloned into ``memo`` first; Parameters copy themselves.
        """
        for m in self.modules():
            tensors = list(m._buffers.values()) + list(m.__dict__.values())
            for t in tensors:
                if isinstance(t, Tensor) and not isinstance(t, Parameter) and id(t) not in memo:
                    c = t.detach().clone()
                    if t.requires_grad:
                        c.requires_grad_(True)
                    memo[id(t)] = c
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            object.__setattr__(new, k, copy.deepcopy(v, memo))
        return new

    # ---- state ----
    def _save_to_state_dict(self, destination: Dict[str, Any], prefix: str, keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def state_dict(self, *, destination: Optional[Dict[str, Any]] = None, prefix: str = "",
                   keep_vars: bool = False) -> Dict[str, Any]:
        """Parameters and persistent buffers by dotted name; the tensors share memory with the module."""
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _local_state(self) -> Dict[str, Tensor]:
        local = {k: v for k, v in self._parameters.items() if v is not None}
        local.update({k: v for k, v in self._buffers.items()
                      if v is not None and k not in self._non_persistent_buffers_set})
        return local

    def load_state_dict(self, state_dict: Dict[str, Any], strict: bool = True) -> IncompatibleKeys:
        """Copies matching entries into this module's parameters and buffers (cast to their dtype).

        Returns the missing and unexpected keys. With ``strict`` (the default) either kind raises
        ValueError listing the keys; a shape mismatch always raises.
        """
        if not hasattr(state_dict, "items") or not hasattr(state_dict, "keys"):
            raise nwerr.TypeError(f"expected a dict-like state_dict, got {type(state_dict).__name__}")
        missing: List[str] = []
        unexpected: List[str] = []
        errors: List[str] = []

        def load(module: Module, prefix: str) -> None:
            local = module._local_state()
            for name, target in local.items():
                key = prefix + name
                if key not in state_dict:
                    missing.append(key)
                    continue
                value = state_dict[key]
                if not isinstance(value, Tensor):
                    errors.append(f'While copying the parameter named "{key}", expected a Tensor from the '
                                  f"checkpoint but received {type(value).__name__}")
                    continue
                if tuple(value.shape) != tuple(target.shape):
                    errors.append(f"size mismatch for {key}: copying a param with shape {tuple(value.shape)} "
                                  f"from checkpoint, the shape in current model is {tuple(target.shape)}.")
                    continue
                with no_grad():
                    target.copy_(value)
                _row_sparse.clear(target)
            children = {n for n, m in module._modules.items() if m is not None}
            for key in state_dict.keys():
                if isinstance(key, str) and key.startswith(prefix):
                    head = key[len(prefix):].split(".", 1)[0]
                    if head not in local and head not in children:
                        unexpected.append(key)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")

        load(self, "")
        for key in state_dict.keys():
            if not isinstance(key, str):
                unexpected.append(key)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ".")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")
        if errors:
            raise nwerr.ValueError(f"Error(s) in loading state_dict for {self._get_name()}:\n\t" + "\n\t".join(errors))
        return IncompatibleKeys(missing, unexpected)

    # ---- printing ----
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The constructor arguments shown inside ``repr``; layers override it."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _addindent(repr(m), 2) for name, m in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                body = extra_lines[0]
            else:
                body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"
