"""Functional graph kernels (``nodeweave.ops``), differentiable on the active backend.

- :func:`gspmm` and named forms such as ``copy_u_sum``, ``u_mul_e_max``, ``e_div_u_mean``;
- :func:`gsddmm` and named forms such as ``u_dot_v``, ``u_add_e``, ``v_sub_u``;
- :func:`edge_softmax`, :func:`segment_reduce`, :func:`segment_softmax`;
- :func:`gather_mm`, :func:`segment_mm` for typed (relational) linear layers.
"""

from nodeweave.ops import sddmm as _sddmm
from nodeweave.ops import spmm as _spmm
from nodeweave.ops.segment import gather_mm, segment_mm, segment_reduce, segment_softmax
from nodeweave.ops.softmax import edge_softmax

for _mod in (_spmm, _sddmm):
    for _name in _mod.__all__:
        globals()[_name] = getattr(_mod, _name)

__all__ = (list(_spmm.__all__) + list(_sddmm.__all__)
           + ["edge_softmax", "segment_reduce", "segment_softmax", "gather_mm", "segment_mm"])
