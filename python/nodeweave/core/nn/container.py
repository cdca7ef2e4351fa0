"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable, Iterator, Mapping, Optional, Tuple, Union

from nodeweave._C import Tensor
from nodeweave.core.nn.module import Module
from nodeweave.core.nn.parameter import Parameter
from nodeweave import errors as nwerr


def _index(idx: Any, n: int, cls: str) -> int:
    if isinstance(idx, bool) or not isinstance(idx, int):
        raise nwerr.TypeError(f"{cls} indices must be integers or slices, not {type(idx).__name__}")
    if not -n <= idx < n:
        raise nwerr.IndexError(f"index {idx} is out of range for {cls} of length {n}")
    return idx + n if idx < 0 else idx


def _delete_and_renumber(modules: "dict[str, Module]", idx: Union[int, slice], cls: str) -> None:
    """Deletes entries of a numbered container and renumbers the rest 0..n-1, as torch does."""
    keys = list(modules.keys())
    targets = keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys), cls)]]
    for key in targets:
        del modules[key]
    items = list(modules.values())
    modules.clear()
    for i, m in enumerate(items):
        modules[str(i)] = m


class Sequential(Module):
    """Chains modules: ``Sequential(a, b)(x) == b(a(x))``; also built from an ``OrderedDict``.

    >>> import nodeweave.core as nc
    >>> net = nc.nn.Sequential(nc.nn.Linear(2, 4), nc.nn.ReLU(), nc.nn.Linear(4, 1))
    >>> print(net)
    Sequential(
      (0): Linear(in_features=2, out_features=4, bias=True)
      (1): ReLU()
      (2): Linear(in_features=4, out_features=1, bias=True)
    )
    >>> tuple(net(nc.ones(3, 2)).shape)
    (3, 1)
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx: Union[int, slice]) -> Any:
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self), "Sequential")]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules.keys())[_index(idx, len(self), "Sequential")]
        self.add_module(key, module)

    def __delitem__(self, idx: Union[int, slice]) -> None:
        _delete_and_renumber(self._modules, idx, "Sequential")

    def append(self, module: Module) -> "Sequential":
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of registered submodules.

    >>> import nodeweave.core as nc
    >>> layers = nc.nn.ModuleList([nc.nn.Linear(2, 2) for _ in range(3)])
    >>> len(layers), len(list(layers.parameters()))
    (3, 6)
    """

    def __init__(self, modules: Optional[Iterable[Module]] = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx: Union[int, slice]) -> Any:
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx: Union[int, slice]) -> None:
        _delete_and_renumber(self._modules, idx, "ModuleList")

    def append(self, module: Module) -> "ModuleList":
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        if isinstance(modules, Module) and not isinstance(modules, (ModuleList, Sequential)):
            raise nwerr.TypeError(f"ModuleList.extend should be called with an iterable, got {type(modules).__name__}")
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise nwerr.NotImplementedError("ModuleList has no forward(); iterate over it and call each module")


class ModuleDict(Module):
    """A dict of registered submodules, in insertion order.

    >>> import nodeweave.core as nc
    >>> heads = nc.nn.ModuleDict({"a": nc.nn.Linear(2, 1), "b": nc.nn.Identity()})
    >>> list(heads.keys()), "a" in heads
    (['a', 'b'], True)
    """

    def __init__(self, modules: Optional[Union[Mapping[str, Module], Iterable[Tuple[str, Module]]]] = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        if key not in self._modules:
            raise nwerr.KeyError(key)
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def values(self) -> Iterable[Module]:
        return self._modules.values()

    def items(self) -> Iterable[Tuple[str, Module]]:
        return self._modules.items()

    def pop(self, key: str) -> Module:
        m = self[key]
        del self[key]
        return m

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules: Union[Mapping[str, Module], Iterable[Tuple[str, Module]]]) -> None:
        items = modules.items() if isinstance(modules, (Mapping, ModuleDict)) else modules
        for j, item in enumerate(items):
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise nwerr.ValueError(f"ModuleDict.update: element #{j} should be a (key, module) pair, got {item!r}")
            self[item[0]] = item[1]

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise nwerr.NotImplementedError("ModuleDict has no forward(); look up a module and call it")


class ParameterList(Module):
    """A list of registered parameters, named ``"0"``, ``"1"``, ... in ``state_dict`` as in torch.
    A plain tensor appended is wrapped in a :class:`Parameter`.

    >>> import nodeweave.core as nc
    >>> pl = nc.nn.ParameterList([nc.nn.Parameter(nc.ones(2)) for _ in range(2)])
    >>> pl.append(nc.zeros(3))
    ParameterList(...)
    >>> len(pl), [n for n, _ in pl.named_parameters()], tuple(pl[-1].shape)
    (3, ['0', '1', '2'], (3,))
    """

    def __init__(self, values: Optional[Iterable[Any]] = None) -> None:
        super().__init__()
        if values is not None:
            self.extend(values)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def __getitem__(self, idx: Union[int, slice]) -> Any:
        if isinstance(idx, slice):
            return ParameterList(list(self._parameters.values())[idx])
        return self._parameters[str(_index(idx, len(self), "ParameterList"))]

    def __setitem__(self, idx: int, value: Any) -> None:
        self.register_parameter(str(_index(idx, len(self), "ParameterList")), _as_parameter(value))

    def append(self, value: Any) -> "ParameterList":
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        if isinstance(values, Tensor):
            raise nwerr.TypeError("ParameterList.extend should be called with an iterable of tensors, got a Tensor")
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"({k}): Parameter containing: [{p.dtype.name} of size {tuple(p.shape)}]"
                         for k, p in self._parameters.items())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise nwerr.NotImplementedError("ParameterList has no forward(); index it")


def _as_parameter(value: Any) -> Parameter:
    if isinstance(value, Parameter):
        return value
    if not isinstance(value, Tensor):
        raise nwerr.TypeError(f"ParameterList holds tensors, got {type(value).__name__}")
    return Parameter(value, requires_grad=value.is_floating_point())
