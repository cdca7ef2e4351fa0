"""The examples in the docs and in docstrings run and print what they show."""

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import nodeweave

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md"))
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules():
    names = ["nodeweave"]
    for info in pkgutil.walk_packages(nodeweave.__path__, "nodeweave."):
        names.append(info.name)
    # nodeweave.nn.pytorch's submodules are the very sources of nodeweave.nn.native's, whose
    # examples use native tensors; test_backend_parity.py runs them on torch.
    # A package's __main__ runs its command line when imported.
    return [n for n in names if not n.endswith(("._C", ".__main__")) and not n.startswith("nodeweave.nn.pytorch.")]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_markdown_examples(path):
    failures, tried = doctest.testfile(str(path), module_relative=False, optionflags=FLAGS, verbose=False)
    assert tried > 0, f"{path.name} has no examples"
    assert failures == 0


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=FLAGS, verbose=False)
    assert failures == 0
