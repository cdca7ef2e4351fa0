"""One library exception: every error nodeweave raises is a ``nodeweave.NodeweaveError`` (DGL's
``DGLError``) and still the built-in exception it was. Checked three ways: the class hierarchy; a
scan of the package's source for any ``raise`` of a built-in exception class; and real bad calls
into Python code and into the C++ kernels (through ``_C``), on both backends."""

import ast
import builtins
import pickle
from pathlib import Path

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.core as nc
from nodeweave import errors

PKG = Path(nw.__file__).resolve().parent
BUILTIN_ERRORS = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
                  and issubclass(getattr(builtins, n), BaseException)}
# Raised on purpose as themselves: protocol signals, not errors of the library (ModuleNotFoundError is
# what the import system expects from nodeweave.compat.dgl's finder).
ALLOWED = {"StopIteration", "StopAsyncIteration", "KeyboardInterrupt", "GeneratorExit", "SystemExit",
           "BufferError", "ModuleNotFoundError"}


# Error classes with no built-in namesake, and the built-in each one is.
LIBRARY_ONLY = {"TracingError": builtins.RuntimeError, "GuardFailure": builtins.RuntimeError}


def test_every_class_is_nodeweave_error_and_its_builtin():
    assert nw.NodeweaveError is errors.NodeweaveError and nw.DGLError is nw.NodeweaveError
    for name in errors.__all__:
        if name in ("NodeweaveWarning", "warn"):  # the warning class and its helper: not errors
            assert issubclass(errors.NodeweaveWarning, UserWarning)
            continue
        cls = getattr(errors, name)
        assert issubclass(cls, errors.NodeweaveError)
        if name in LIBRARY_ONLY:  # nodeweave's own kinds of error: each still one built-in kind
            assert issubclass(cls, LIBRARY_ONLY[name]) and not hasattr(builtins, name), name
        elif name not in ("NodeweaveError", "DGLError"):
            assert issubclass(cls, getattr(builtins, name)), name
    assert issubclass(errors.FileNotFoundError, errors.OSError)


def test_errors_pickle_as_themselves():
    e = pickle.loads(pickle.dumps(errors.ValueError("bad fanout")))
    assert type(e) is errors.ValueError and str(e) == "bad fanout"


def _raised_builtin_names(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id in BUILTIN_ERRORS and exc.id not in ALLOWED:
                found.append((node.lineno, exc.id))
        if isinstance(node, ast.ClassDef):  # the library's own exception classes derive from ours
            for base in node.bases:
                if isinstance(base, ast.Name) and base.id in BUILTIN_ERRORS and base.id not in ALLOWED:
                    found.append((node.lineno, f"class {node.name}({base.id})"))
    return found


def test_no_builtin_exception_is_raised_in_the_package():
    offenders = []
    for path in sorted(PKG.rglob("*.py")):
        if path == PKG / "errors.py":
            continue
        offenders += [f"{path.relative_to(PKG)}:{line}: {name}" for line, name in _raised_builtin_names(path)]
    assert not offenders, "raise nodeweave.errors classes instead:\n" + "\n".join(offenders)


def test_every_warning_is_emitted_through_nodeweave_warn():
    """warnings.warn is called in errors.warn alone, so each warning the library emits is a
    NodeweaveWarning (or the category passed to errors.warn)."""
    offenders = []
    for path in sorted(PKG.rglob("*.py")):
        if path == PKG / "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            direct = isinstance(node, ast.Attribute) and node.attr == "warn" and \
                isinstance(node.value, ast.Name) and node.value.id == "warnings"
            imported = isinstance(node, ast.ImportFrom) and node.module == "warnings" and \
                any(a.name == "warn" for a in node.names)
            if direct or imported:
                offenders.append(f"{path.relative_to(PKG)}:{node.lineno}")
    assert not offenders, "warn through nodeweave.errors.warn instead:\n" + "\n".join(offenders)


@pytest.fixture(params=["native", "pytorch"])
def backend(request):
    nw.set_backend(request.param)
    yield request.param
    nw.set_backend("native")


def _bad_calls(T):
    g = nw.graph(([0, 1, 2], [1, 2, 0]))
    feat = T.from_numpy(np.ones((3, 2), np.float32))
    return {
        "graph: lengths differ (Python)": (ValueError, lambda: nw.graph(([0, 1], [1]))),
        "graph: node id out of range (C++)": (ValueError, lambda: nw.graph(([0, 5], [1, 1]), num_nodes=3)),
        "ndata: wrong row count": (ValueError, lambda: g.ndata.__setitem__("x", T.from_numpy(np.ones((4, 2), np.float32)))),
        "ndata: missing feature": (KeyError, lambda: g.ndata["nope"]),
        "spmm: wrong feature rows (C++ kernel)": (ValueError, lambda: nw.ops.copy_u_sum(g, T.from_numpy(np.ones((5, 2), np.float32)))),
        "sampling: negative fanout": (ValueError, lambda: nw.sampling.sample_neighbors(g, [0], -3)),
        "sampling: seed out of range (C++)": (Exception, lambda: nw.sampling.sample_neighbors(g, [7], 2)),
        "to_block: bad dst": (Exception, lambda: nw.to_block(g, [9])),
        "ops: gather_mm idx out of range (C++)": (IndexError, lambda: nw.ops.gather_mm(feat, T.from_numpy(np.ones((1, 2, 2), np.float32)), idx_b=T.from_numpy(np.array([0, 1, 0])))),
        "nn: wrong in_feats": (Exception, lambda: nw.nn.GraphConv(3, 2)(g, feat)),
    }


def test_bad_calls_raise_nodeweave_errors(backend):
    import nodeweave.backend as nwb

    for what, (builtin_cls, call) in _bad_calls(nwb.current()).items():
        with pytest.raises(builtin_cls) as info:
            call()
        if backend == "pytorch" and what.startswith("nn:"):
            continue  # a torch shape error inside the layer is torch's, not ours
        assert isinstance(info.value, nw.NodeweaveError), f"{what}: {type(info.value)} {info.value}"


def test_engine_errors_from_cpp_are_nodeweave_errors():
    with pytest.raises(nw.NodeweaveError) as info:
        nc.ones(2, 3) + nc.ones(4, 5)
    assert isinstance(info.value, ValueError)
    with pytest.raises(nw.NodeweaveError):
        nc.ones(2, 3).view(4)
    # Iteration (pybind11's StopIteration) is untouched by the translator.
    assert len(list(nc.ones(3))) == 3
