"""Static mode: trace a function once, then replay it from C++ with no Python per op.

:func:`trace` (or its alias :func:`compile`) wraps a function of tensors. The first call runs it
eagerly while the dispatcher records every op it runs (the forward, the backward ops that
``backward()`` or :func:`nodeweave.core.autograd.grad` dispatches, in-place writes, an optimizer's
update) into a program; passes then
fuse GAT's edge pipeline, fold constants, merge common subexpressions, drop dead code and fuse
elementwise chains, and later calls with inputs of the same dtypes, shapes and devices run the
program in C++. The program is plain text to read:

>>> import nodeweave.core as nc
>>> w = nc.tensor([[1.0, -1.0], [0.5, 2.0]], requires_grad=True)
>>> @nc.jit.trace
... def step(x):
...     loss = (nc.relu(x @ w) * 2.0).sum()
...     (gw,) = nc.autograd.grad(loss, [w])
...     return loss, gw
>>> loss, gw = step(nc.tensor([[1.0, 2.0]]))            # traces, returns the eager results
>>> loss, gw = step(nc.tensor([[3.0, -1.0]]))           # replays the program
>>> round(loss.item(), 3), gw.tolist()
(5.0, [[6.0, 0.0], [-2.0, 0.0]])
>>> print(step.program)                                  # doctest: +ELLIPSIS
program(%0: float32[1, 2]) {
  %1: float32[2, 2] = capture #0
...
  %6: float32[1, 2] = mm(%0, %1)
  %7: float32[1, 2] = relu(%6)
...
  %19: float32[2, 2] = mm(%18, %17) backward #3
  backward #0 of %9 (%10) -> (%13)
...
  return (%9, %19)
}
<BLANKLINE>

What is recorded is what ran, so Python control flow is fixed at trace time, as with
``torch.jit.trace``. The guards make that safe where they can: a call whose tensors differ in
dtype, shape, device or ``requires_grad``, whose other arguments (numbers, strings, tuples) differ
in value, whose objects (modules) are other objects or whose modules switched between
``train()`` and ``eval()``, or that runs under another grad mode, traces again (up to
``max_programs`` programs, the oldest dropped first) or, with ``retrace=False``, raises naming the
argument. Graph arguments are inputs of the program, and once two traces differ only in sizes
(the next sampled block, the next batch of graphs), one program whose sizes follow the inputs
serves every later call of that kind (``dynamic=True``, the default; docs/jit.md, "Graphs as
inputs, and sizes that vary"). Reading a traced value into Python (``.item()``, ``.numpy()``,
``bool()``) raises :class:`~nodeweave.errors.TracingError`, because the value read would be
frozen into the program. A whole training step (``opt.zero_grad()``, forward, ``loss.backward()``,
``opt.step()``) traces into one program: each replay writes every ``.grad`` the traced code wrote,
and the optimizer refreshes the numbers its update reads (learning rate, step counts) before each
run (docs/jit.md, "Tracing a training step"). Tensors the function reads without taking them as
arguments (parameters, feature tables) are captured by reference: a run sees their current
values. Tensors it creates (``nc.zeros``, Python numbers) are constants of the program.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from typing import Any, Callable

from nodeweave import _C
from nodeweave import errors as nwerr
from nodeweave._C import Tensor

__all__ = ["trace", "compile", "TracedFunction", "Program", "pass_names", "save", "load", "LoadedProgram"]

Program = _C._jit.Program


def pass_names() -> list[str]:
    """The optimization passes, in the order they run (each can be turned off by name).

    >>> import nodeweave.core as nc
    >>> nc.jit.pass_names()
    ['fuse_gat_edge_pipeline', 'fold_constants', 'eliminate_common_subexpressions', 'eliminate_dead_code', 'fuse_elementwise']
    """
    return list(_C._jit.pass_names())


def _describe(t: Tensor) -> str:
    shape = ", ".join(str(d) for d in t.shape)
    grad = ", requires_grad" if t.requires_grad else ""
    return f"{t.dtype.name}[{shape}] on {t.device}{grad}"


def _graph_class() -> type:
    from nodeweave.graph.heterograph import HeteroGraph  # the graph layer imports the engine

    return HeteroGraph


class _Signature:
    """The flattened arguments of one call: the tensors and graphs the program takes, a hashable
    key the cache and the guards compare, one readable description per leaf for guard errors, and
    the objects the key names by identity (kept alive so that no other object takes their id).

    ``dynamic_key`` is the key without sizes and without the graphs' identities: the calls that
    one program with sizes that follow its inputs may serve (``DynamicProgram``)."""

    def __init__(self, args: tuple, kwargs: dict) -> None:
        self.tensors: list[Tensor] = []
        self.structure: set[int] = set()  # tensors that describe a graph argument (batch counts)
        self.graphs: list[Any] = []  # the RelationGraph of each graph argument's edge types
        self.objects: list[Any] = []
        self.leaves: list[tuple[str, Any, str]] = []  # (path, key part, description)
        self._dynamic: dict[int, Any] = {}  # leaf -> its key part without sizes and identity
        self._first_at: dict[int, int] = {}
        self._graph_type = _graph_class()
        for i, a in enumerate(args):
            self._leaf(f"args[{i}]", a)
        for name in sorted(kwargs):
            self._leaf(name, kwargs[name])
        grad = _C.is_grad_enabled()
        self.leaves.append(("grad mode", grad, "enabled" if grad else "disabled (no_grad)"))
        self.key = tuple((path, part) for path, part, _ in self.leaves)
        self.dynamic_key = tuple((path, self._dynamic.get(i, part))
                                 for i, (path, part, _) in enumerate(self.leaves))

    def _leaf(self, path: str, a: Any) -> None:
        if isinstance(a, Tensor):
            # Two arguments that are one tensor at trace time are one program input.
            same = self._first_at.setdefault(id(a), len(self.tensors))
            if same == len(self.tensors):
                self.tensors.append(a)
            part = ("tensor", str(a.dtype), tuple(a.shape), str(a.device), a.requires_grad, same)
            self._dynamic[len(self.leaves)] = part[:2] + (len(a.shape),) + part[3:]
            self.leaves.append((path, part, "a tensor " + _describe(a)))
        elif isinstance(a, self._graph_type):
            # Each edge type's relation is an object input of the program: graph ops read the
            # graph the call passes (graph inputs of a trace, tensor inputs of a graph op).
            same = self._first_at.setdefault(id(a), -1 - len(self.graphs))
            first = same == -1 - len(self.graphs)
            etypes = tuple(a.canonical_etypes)
            if first:
                # Two graphs may share relations (g and g.local_var()): one input each.
                for ct in etypes:
                    rel = a._rels[ct]
                    if all(r is not rel for r in self.graphs):
                        self.graphs.append(rel)
            self.objects.append(a)
            sizes = tuple((a._rels[ct].num_src, a._rels[ct].num_dst, a._rels[ct].num_edges) for ct in etypes)
            kind = (type(a).__name__, etypes, tuple(a._rels[ct].idtype for ct in etypes), a._device, same)
            self._dynamic[len(self.leaves)] = ("graph",) + kind
            self.leaves.append((path, ("graph", id(a), sizes) + kind,
                                f"the {type(a).__name__} at {id(a):#x} with (src, dst, edges) counts {list(sizes)}"))
            if a._batch_num_nodes is not None and first:
                # A batch of graphs: its per-graph counts are tensor inputs, so that readouts
                # (segment offsets counted by an op) follow the next batch.
                counts = [(f"{path}.batch_num_nodes({nt!r})", a.batch_num_nodes(nt)) for nt in a.ntypes]
                if a._batch_num_edges is not None:
                    counts += [(f"{path}.batch_num_edges({ct!r})", a.batch_num_edges(ct)) for ct in etypes]
                for leaf, t in counts:
                    if isinstance(t, Tensor):
                        if all(t is not u for u in self.tensors):
                            self.structure.add(len(self.tensors))
                        self._leaf(leaf, t)
        elif a is None or isinstance(a, (bool, int, float, complex, str, bytes)):
            self.leaves.append((path, ("value", type(a).__name__, a), repr(a)))
        elif isinstance(a, (tuple, list)):
            self.leaves.append((path, (type(a).__name__, len(a)), f"a {type(a).__name__} of {len(a)}"))
            for i, x in enumerate(a):
                self._leaf(f"{path}[{i}]", x)
        elif isinstance(a, dict):
            keys = list(a)
            self.leaves.append((path, ("dict", tuple(map(repr, keys))), f"a dict with keys {keys}"))
            for k in keys:
                self._leaf(f"{path}[{k!r}]", a[k])
        elif type(a).__module__.split(".")[0] in ("numpy", "torch"):
            raise nwerr.TypeError(
                f"jit: {path} is a {type(a).__module__}.{type(a).__name__}; pass a nodeweave tensor "
                "(its values would otherwise be frozen into the program)")
        else:
            self.objects.append(a)
            modes = ()
            modules = getattr(a, "modules", None)
            if callable(modules) and hasattr(a, "training"):
                modes = tuple(bool(m.training) for m in modules())
            desc = f"the {type(a).__name__} object at {id(a):#x}"
            if modes:
                desc += " in " + ("train" if all(modes) else "eval" if not any(modes) else "mixed") + " mode"
            self.leaves.append((path, ("object", id(a), modes), desc))


def _flatten_outputs(result: Any) -> tuple[list[Tensor], Any]:
    """The tensors of a result (nested tuples, lists and dicts) and a spec to rebuild it."""
    tensors: list[Tensor] = []

    def walk(x: Any) -> Any:
        if isinstance(x, Tensor):
            tensors.append(x)
            return ("tensor", len(tensors) - 1)
        if isinstance(x, (tuple, list)):
            return (type(x), [walk(v) for v in x])
        if isinstance(x, dict):
            return (dict, [(k, walk(v)) for k, v in x.items()])
        return ("value", x)

    return tensors, walk(result)


def _rebuild(spec: Any, tensors: list[Tensor]) -> Any:
    kind, body = spec
    if kind == "tensor":
        return tensors[body]
    if kind == "value":
        return body
    if kind is dict:
        return {k: _rebuild(v, tensors) for k, v in body}
    return kind(_rebuild(v, tensors) for v in body)


_run_hooks: list | None = None  # while a trace records: the hooks of _before_each_run


def _before_each_run(hook: Callable[[], Any], what: str) -> None:
    """Called by host code inside a trace (an optimizer's step) whose effect a replay must redo in
    Python: ``hook()`` runs before each replay and returns a callable to run after it succeeds,
    or None when the program no longer holds (the replay then traces again). ``what`` names it in
    errors."""
    if _run_hooks is not None:
        _run_hooks.append((hook, what))


class _Effects:
    """What a replay redoes on the host around the program: the hooks host code registered
    (:func:`_before_each_run`), and the leaves whose ``.grad`` the traced code wrote
    (``(leaf, program output or -1 for None, whether the leaf must have no gradient when a run
    starts)``); the program returns those gradients after the ``num_outputs`` traced outputs."""

    def __init__(self, hooks: list, grad_writes: list, num_outputs: int) -> None:
        self.hooks = hooks
        self.grad_writes = grad_writes
        self.num_outputs = num_outputs

    def same_as(self, other: "_Effects") -> bool:
        return (len(self.hooks) == len(other.hooks) and self.num_outputs == other.num_outputs
                and len(self.grad_writes) == len(other.grad_writes)
                and all(a[0]._is_same(b[0]) and a[1:] == b[1:] for a, b in zip(self.grad_writes, other.grad_writes)))

    def run(self, executor: Any, sig: "_Signature") -> list:
        """Runs the program with the host's part around it; GuardFailure when a hook or a
        gradient's state says the program does not hold for this call."""
        commits = []
        for hook, what in self.hooks:
            done = hook()
            if done is None:
                raise nwerr.GuardFailure(f"jit: {what} was traced for another optimizer state (its groups, "
                                         "state tensors or flags changed)")
            commits.append(done)
        for leaf, _, none_at_entry in self.grad_writes:
            if none_at_entry and leaf.grad is not None:
                raise nwerr.GuardFailure(
                    "jit: backward() in the traced function wrote the .grad of a leaf that had none when "
                    "it was traced, and the leaf now has one (eager code would add to it)")
        out = executor.run(sig.tensors, sig.graphs)
        for done in commits:
            done()
        for leaf, k, _ in self.grad_writes:
            leaf.grad = out[k] if k >= 0 else None
        return out[:self.num_outputs] if self.grad_writes else out


class _Entry:
    def __init__(self, executor: Any, spec: Any, signature: _Signature, effects: _Effects) -> None:
        self.executor = executor
        self.spec = spec
        self.signature = signature
        self.effects = effects


class _Dynamic:
    """What the traces of one ``dynamic_key`` taught: the traces so far (``raws``: their programs
    before the passes; the first and the latest few), the program generalized from them
    (``program``), or why they cannot be (``why``, which settles it)."""

    KEEP = 4
    WARN_AFTER = 4  # traces of one key that no program serves, before a warning says why
    EXECUTORS = 8  # instantiations kept, by the sizes of the call (batches of one size recur)

    def __init__(self, spec: Any, effects: _Effects) -> None:
        self.spec = spec
        self.effects = effects  # the latest trace's (each trace's are alike, or the key settles)
        self.raws: list[Program] = []  # as traced
        self.opts: list[Program] = []  # after the passes
        self.program: Any = None
        self.optimized = False  # program is of the optimized traces (no passes to run per call)
        self.why = ""
        self.traces = 0
        self.warned = False
        self.executors: OrderedDict[tuple, Any] = OrderedDict()

    def executor(self, sig: _Signature, disable_passes: list, plan_memory: bool) -> Any:
        """The program instantiated for the call's sizes, as an executor: made once per sizes and
        kept (with its memory arena) for the next call of the same sizes; None when the program
        does not serve these sizes (``DynamicProgram.mismatch``)."""
        if self.program is None:
            return None
        sizes = tuple(tuple(t.shape) for t in sig.tensors) + tuple(
            (g.num_src, g.num_dst, g.num_edges) for g in sig.graphs)
        ex = self.executors.get(sizes)
        if ex is not None:
            self.executors.move_to_end(sizes)
            return ex
        if self.program.mismatch(sig.tensors, sig.graphs):
            return None
        program = self.program.instantiate(sig.tensors, sig.graphs)
        if not self.optimized:
            program.run_passes(disable_passes)
        ex = self.executors[sizes] = _C._jit.Executor(program, plan_memory)
        if len(self.executors) > self.EXECUTORS:
            self.executors.popitem(last=False)
        return ex

    def learn(self, program: Program, optimized: Program, structure_read: str, name: str,
              effects: _Effects) -> None:
        self.traces += 1
        if not self.why and not effects.same_as(self.effects):
            self.settle("the traces wrote the gradients of other tensors, or stepped other optimizers")
        self.effects = effects
        if self.why and not self.warned and self.traces >= self.WARN_AFTER:
            self.warned = True
            nwerr.warn(f"jit: {name} traced {self.traces} times for calls that differ in sizes or graphs "
                       f"only, each slower than running eagerly, because its traces cannot share one "
                       f"program: {self.why} (see docs/jit.md, 'Graphs as inputs, and sizes that vary')",
                       stacklevel=4)
        if self.why:  # settled (then raw is None)
            return
        if structure_read:
            self.settle(f"the traced code read a graph argument's structure on the host ({structure_read}), "
                        "which the program cannot follow to another graph")
            return
        self.raws.append(program)
        self.opts.append(optimized.copy())
        if len(self.raws) > self.KEEP:
            del self.raws[1], self.opts[1]
        if len(self.raws) < 2:
            return
        # The passes decide by structure, and a dynamic program's sizes keep the equalities the
        # traces had, so the optimized traces usually generalize too, sparing the passes per call.
        # When they do not (a fusion's size threshold fell between two traces), the traces as
        # recorded do, and each call runs the passes.
        generalized, _ = _C._jit.DynamicProgram.generalize(self.opts)
        self.optimized = generalized is not None
        if generalized is None:
            generalized, why = _C._jit.DynamicProgram.generalize(self.raws)
            if generalized is None:
                # Also when a program existed: a trace that differs from the others in more than
                # sizes (Python that branched on a size) shows it does not hold for every size.
                self.settle(why)
                return
        self.program = generalized
        self.executors.clear()

    def settle(self, why: str) -> None:
        self.why, self.raws, self.opts, self.program = why, [], [], None
        self.executors.clear()


class TracedFunction:
    """A function with its traced programs, one per input signature (see the module docstring).

    ``program`` is the program of the latest trace (``print`` it to read it); ``programs`` lists
    them all; ``num_traces`` counts traces made.
    """

    def __init__(self, fn: Callable, *, retrace: bool = True, disable_passes: tuple = (),
                 max_programs: int = 16, plan_memory: bool = True, dynamic: bool = True) -> None:
        if not callable(fn):
            raise nwerr.TypeError(f"jit.trace: fn must be callable, got {type(fn).__name__}")
        known = pass_names()
        for name in disable_passes:
            if name not in known:
                raise nwerr.ValueError(f"jit.trace: disable_passes names unknown pass {name!r}; the passes are {known}")
        if int(max_programs) < 1:
            raise nwerr.ValueError(f"jit.trace: max_programs must be >= 1, got {max_programs}")
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.retrace = bool(retrace)
        self.disable_passes = list(disable_passes)
        self.max_programs = int(max_programs)
        self.plan_memory = bool(plan_memory)
        self.dynamic = bool(dynamic)
        self.num_traces = 0
        self.num_guard_failures = 0
        self.num_dynamic_runs = 0
        self._cache: OrderedDict[tuple, _Entry] = OrderedDict()
        self._dynamic: OrderedDict[tuple, _Dynamic] = OrderedDict()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        sig = _Signature(args, kwargs)
        entry = self._cache.get(sig.key)
        if entry is not None:
            self._cache.move_to_end(sig.key)
            try:
                return _rebuild(entry.spec, entry.effects.run(entry.executor, sig))
            except nwerr.GuardFailure:
                if not self.retrace:
                    raise
                del self._cache[sig.key]  # a value it read changed: trace again
                self.num_guard_failures += 1
        dyn = self._dynamic.get(sig.dynamic_key) if self.dynamic else None
        ex = dyn.executor(sig, self.disable_passes, self.plan_memory) if dyn is not None else None
        if ex is not None:
            try:
                out = dyn.effects.run(ex, sig)
                self.num_dynamic_runs += 1
                return _rebuild(dyn.spec, out)
            except nwerr.GuardFailure:
                if not self.retrace:
                    raise
                # Traced again below: the new trace's guard differs, which settles the dynamic
                # program (it stops serving calls), and the warning count goes on.
                self.num_guard_failures += 1
        if self._cache and not self.retrace:
            raise nwerr.ValueError(self._guard_message(sig))
        return self._trace(args, kwargs, sig)

    def _trace(self, args: tuple, kwargs: dict, sig: _Signature) -> Any:
        global _run_hooks
        tracer = _C._jit.Tracer()
        _run_hooks = hooks = []
        try:
            for i, t in enumerate(sig.tensors):
                tracer.add_input(t, i not in sig.structure)
            for g in sig.graphs:
                tracer.add_graph_input(g)
            result = self.fn(*args, **kwargs)
            outputs, spec = _flatten_outputs(result)
            structure_read = tracer.structure_read
            program = tracer.finish(outputs)
        except BaseException:
            tracer.abort()
            raise
        finally:
            _run_hooks = None
        effects = _Effects(hooks, tracer.grad_writes, len(outputs))
        dyn = None
        if self.dynamic:
            dyn = self._dynamic.get(sig.dynamic_key)
            if dyn is None:
                dyn = self._dynamic[sig.dynamic_key] = _Dynamic(spec, effects)
                if len(self._dynamic) > self.max_programs:
                    self._dynamic.popitem(last=False)
        raw = program.copy() if dyn is not None and not dyn.why else None  # a settled key learns no more
        program.run_passes(self.disable_passes)
        if dyn is not None:
            dyn.learn(raw, program, structure_read, self.__name__, effects)
        self._cache[sig.key] = _Entry(_C._jit.Executor(program, self.plan_memory), spec, sig, effects)
        if len(self._cache) > self.max_programs:
            self._cache.popitem(last=False)
        self.num_traces += 1
        return result

    @property
    def dynamic_status(self) -> str:
        """Whether the latest signature's calls share one program whose sizes follow the inputs:
        ``"dynamic"`` (or ``"dynamic (the passes run at each call)"`` when only the traces before
        the passes generalize), ``"one trace so far"``, or why the traces could not be
        generalized."""
        if not self._dynamic:
            return "no trace yet" if self.dynamic else "off (dynamic=False)"
        dyn = next(reversed(self._dynamic.values()))
        if dyn.program is not None:
            return "dynamic" if dyn.optimized else "dynamic (the passes run at each call)"
        return dyn.why or "one trace so far"

    def _guard_message(self, sig: _Signature) -> str:
        traced = next(reversed(self._cache.values())).signature
        for (path, part, desc), (tpath, tpart, tdesc) in zip(sig.leaves, traced.leaves):
            if path != tpath or part != tpart:
                return (f"jit: {tpath} was {tdesc} when {self.__name__} was traced, got {desc}; "
                        "trace with retrace=True to compile a program for each signature")
        return (f"jit: {self.__name__} was traced with {len(traced.leaves)} argument leaves, "
                f"got {len(sig.leaves)}; trace with retrace=True to compile one per signature")

    @property
    def program(self) -> Program:
        if not self._cache:
            raise nwerr.RuntimeError(f"jit: {self.__name__} has not been called yet, so nothing is traced")
        return next(reversed(self._cache.values())).executor.program

    @property
    def memory(self) -> dict:
        """The latest program's memory plan: the bytes of the results it places in reused buffers
        (``planned``, one allocation each without the plan), of those buffers (``arena``), of the
        results written over an input that died at their node (``in_place``), and of the buffers
        a plan without that would need (``arena_without_in_place``)."""
        if not self._cache:
            raise nwerr.RuntimeError(f"jit: {self.__name__} has not been called yet, so nothing is traced")
        ex = next(reversed(self._cache.values())).executor
        return {"planned": ex.planned_bytes, "arena": ex.arena_bytes, "in_place": ex.in_place_bytes,
                "arena_without_in_place": ex.arena_bytes_without_in_place}

    @property
    def programs(self) -> list[Program]:
        return [e.executor.program for e in self._cache.values()]


def trace(fn: Callable | None = None, *, retrace: bool = True, disable_passes: tuple = (),
          max_programs: int = 16, plan_memory: bool = True, dynamic: bool = True) -> Any:
    """Wraps ``fn`` in a :class:`TracedFunction` (usable as ``@trace`` or ``@trace(...)``).

    Parameters
    ----------
    retrace : bool
        On a call whose signature no program has: trace again (default) or raise ``ValueError``
        naming the argument that differs.
    disable_passes : tuple of str
        Passes to skip (:func:`pass_names`).
    max_programs : int
        Programs kept, one per signature; the least recently used is dropped.
    plan_memory : bool
        Run the results of nodes that record no autograd in buffers reused by liveness, kept from
        run to run (see :attr:`TracedFunction.memory`).
    dynamic : bool
        When a second trace differs from the first only in sizes (the next sampled block, a batch
        of other graphs), generalize the two into one program whose sizes follow the inputs, and
        run every later call of that kind on it instead of tracing again (see
        :attr:`TracedFunction.dynamic_status`).
    """
    kwargs = dict(retrace=retrace, disable_passes=tuple(disable_passes), max_programs=max_programs,
                  plan_memory=plan_memory, dynamic=dynamic)
    if fn is None:
        return lambda f: TracedFunction(f, **kwargs)
    return TracedFunction(fn, **kwargs)


compile = trace  # noqa: A001  (the name the design uses for the decorator)


def save(fn_or_program: Any, path: str) -> None:
    """Writes a program (a :class:`Program`, or the latest program of a :class:`TracedFunction`)
    to ``path``: its text, parameters at their current values, constants and graphs, in a
    versioned, checksummed file written atomically. :func:`load` runs it in any process, with no
    model code.

    >>> import os, tempfile, nodeweave.core as nc
    >>> w = nc.tensor([[2.0, 0.0], [0.0, 3.0]])
    >>> f = nc.jit.trace(lambda x: nc.relu(x @ w))
    >>> _ = f(nc.ones(1, 2))
    >>> path = os.path.join(tempfile.mkdtemp(), "f.nwp")
    >>> nc.jit.save(f, path)
    >>> nc.jit.load(path)(nc.tensor([[1.0, -1.0]]))[0].tolist()
    [[2.0, 0.0]]
    """
    if isinstance(fn_or_program, TracedFunction) and fn_or_program._cache:
        effects = next(reversed(fn_or_program._cache.values())).effects
        if effects.grad_writes or effects.hooks:
            raise nwerr.ValueError(
                f"jit.save: {fn_or_program.__name__} writes gradients (backward()) or steps an optimizer, "
                "which a loaded program cannot redo: save a function that returns its results instead")
    program = fn_or_program.program if isinstance(fn_or_program, TracedFunction) else fn_or_program
    if not isinstance(program, Program):
        raise nwerr.TypeError(f"jit.save: expected a traced function or a Program, got {type(fn_or_program).__name__}")
    _C._jit.save_program(program, str(path))


class LoadedProgram:
    """A program read by :func:`load`: call it with the program's input tensors, in order; it
    returns the outputs as a tuple (a guard that fails raises :class:`~nodeweave.errors.GuardFailure`:
    a loaded program cannot trace again)."""

    def __init__(self, program: Program) -> None:
        self._executor = _C._jit.Executor(program)

    @property
    def program(self) -> Program:
        return self._executor.program

    def __call__(self, *inputs: Tensor, graphs: Any = ()) -> tuple:
        """``graphs``: the program's graph inputs (one relation graph per edge type of each graph
        argument the traced function took, in order), as graphs or ``RelationGraph`` objects."""
        for i, t in enumerate(inputs):
            if not isinstance(t, Tensor):
                raise nwerr.TypeError(f"jit: input {i} must be a nodeweave tensor, got {type(t).__name__}")
        rels = []
        for g in graphs:
            if isinstance(g, _C.RelationGraph):
                rels.append(g)
            elif isinstance(g, _graph_class()):
                rels.extend(g._rels[ct] for ct in g.canonical_etypes)
            else:
                raise nwerr.TypeError(f"jit: graphs must hold graphs, got {type(g).__name__}")
        return tuple(self._executor.run(list(inputs), rels))


def load(path: str) -> LoadedProgram:
    """Reads a program :func:`save` wrote (``ValueError`` naming what is wrong with a file that is
    not one, is truncated or corrupt, or comes from a newer nodeweave)."""
    return LoadedProgram(_C._jit.load_program(str(path)))
