"""Every op of the table declares its call once (core_framework/engine/op_signature.h); the IR
parser, the program loader and the dispatcher hold calls to it."""

from __future__ import annotations

import re

import pytest

import nodeweave.core as nc
from nodeweave import _C
from nodeweave import errors as nwerr

SIGNATURE = re.compile(r"^([a-z_0-9]+)\((.*)\) -> (Tensor(\[\])?|\(Tensor \w+(, Tensor \w+)*\))$")


def test_every_op_has_a_signature_with_a_unique_name():
    signatures = _C._jit.op_signatures()
    names = [SIGNATURE.match(s).group(1) for s in signatures]
    assert len(set(names)) == len(names)
    # built-in, graph, optimizer and fusion ops are all in the table
    for name in ("mul", "sum", "gspmm", "gat_aggregate", "adam_update", "fused_elementwise"):
        assert name in names
    assert "gspmm(Tensor? lhs, Tensor? rhs, object graph, int op, int reduce) -> " \
           "(Tensor out, Tensor arg_lhs, Tensor arg_rhs)" in signatures


@pytest.mark.parametrize("node, message", [
    ("%1: float32[2] = mul(%0)", r"node 0: mul: takes 2 tensor inputs \(a, b\), got 1"),
    ("%1: float32[2] = exp(%0, %0)", r"exp: takes 1 tensor input \(x\), got 2"),
    ("%1: float32[2] = sum(%0) {[0], true}", r"sum: takes 3 attributes, got 2"),
    ("%1: float32[2] = view(%0) {2}", r"attribute 0 \(shape\) is int\[\], got int"),
])
def test_a_program_whose_node_does_not_fit_its_op_is_refused(node, message):
    text = f"program(%0: float32[2]) {{\n  {node}\n  return (%1)\n}}\n"
    with pytest.raises(nwerr.ValueError, match=message):
        nc.jit.Program.parse(text)


def test_none_marks_an_absent_optional_operand_and_round_trips():
    text = ("program(%0: float32[4, 3], %1: float32[2, 3, 5], %2: int64[4]) {\n"
            "  %3: float32[4, 5] = gather_mm(%0, %1, none, %2)\n"
            "  return (%3)\n"
            "}\n")
    assert str(nc.jit.Program.parse(text)) == text
