"""DGL's framework-neutral tensor API (``dgl.backend``) on nodeweave's backends.

DGL code and DGL's own tests reach tensors through ``dgl.backend``: ``F.tensor``, ``F.copy_to``,
``F.asnumpy``, ``F.gather_row``, ``F.float32``, ``F.backend_name`` ... (``from dgl.backend import
*``). Under :mod:`nodeweave.compat.dgl`, ``import dgl.backend`` gives this module. It holds DGL's
functions with DGL's signatures, written on nodeweave's two tensor libraries:

- on the pytorch backend they take and return ``torch.Tensor``\\ s, as DGL's PyTorch backend does;
- on the native backend they take and return ``nodeweave.core.Tensor``\\ s. The few that need an
  operation nodeweave.core lacks (``cumsum``, ``inverse``, ``floor_div`` and the sparse-matrix
  functions, :data:`nodeweave.compat.dgl_backend._library.TORCH_ONLY`) raise a
  :class:`nodeweave.NodeweaveError` naming the function; :func:`is_enabled` tells them apart.

Which library computes: a function given tensors uses theirs; a function that creates tensors uses
the library of the dtype or device object it is given (``torch.float32``), else the active
backend's. The dtype names (``float32``, ``int64`` ...), :data:`data_type_dict`, ``cpu()`` and
``backend_name`` are the active backend's at the moment they are read, so they follow
:func:`nodeweave.set_backend`. Every other attribute is :mod:`nodeweave.backend`'s
(``set_backend``, ``current`` ...); ``dgl.backend.pytorch`` is this API pinned to PyTorch.

>>> import nodeweave as nw
>>> from nodeweave.compat import dgl_backend as F
>>> _ = nw.set_backend("pytorch")
>>> F.backend_name, F.float32, F.copy_to(F.tensor([1, 2]), F.cpu())
('pytorch', torch.float32, tensor([1, 2]))
>>> _ = nw.set_backend("native")
>>> F.backend_name, F.float32, F.asnumpy(F.gather_row(F.tensor([5, 6, 7]), [2, 0])).tolist()
('native', nodeweave.core.float32, [7, 5])
>>> F.is_enabled("gather_row"), F.is_enabled("cumsum")
(True, False)
>>> F.cumsum(F.tensor([1, 2]), 0)
Traceback (most recent call last):
...
nodeweave.errors.NotImplementedError: dgl.backend.cumsum: the native backend cannot run it (nodeweave.core has no cumulative sum); use the pytorch backend, nodeweave.set_backend('pytorch'), and torch tensors

What is not here: the functions of DGL's backend that take DGL's internal graph index or its C
``NDArray`` (``gspmm``, ``gsddmm``, ``edge_softmax``, ``binary_reduce``, ``csrmm``,
``zerocopy_to_dgl_ndarray`` ...). Asking for one raises an AttributeError naming nodeweave's
counterpart, where there is one.
"""

from __future__ import annotations

import importlib
from typing import Any

import nodeweave.core as nc
from nodeweave import errors as nwerr
from nodeweave.compat.dgl_backend import (autograd, conversion, creation, devices, elementwise, indexing,
                                          kernels, reductions, shaping, sorting, sparse, tensor_info)
from nodeweave.compat.dgl_backend import _library
from nodeweave.compat.dgl_backend.autograd import (attach_grad, backward, grad, is_no_grad,  # noqa: F401
                                                   is_recording, no_grad, record_grad, sync)
from nodeweave.compat.dgl_backend.conversion import (asnumpy, astype, zerocopy_from_dlpack,  # noqa: F401
                                                     zerocopy_from_numpy, zerocopy_to_dlpack,
                                                     zerocopy_to_numpy)
from nodeweave.compat.dgl_backend.creation import (arange, empty, full_1d, ones, rand_shuffle,  # noqa: F401
                                                   randint, tensor, uniform, zeros, zeros_like)
from nodeweave.compat.dgl_backend.devices import (copy_to, cpu, device_id, device_type,  # noqa: F401
                                                  to_backend_ctx)
from nodeweave.compat.dgl_backend.elementwise import (allclose, clamp, clone, equal, exp,  # noqa: F401
                                                      floor_div, inverse, logical_and, logical_not,
                                                      replace_inf_with_zero, softmax, sqrt)
from nodeweave.compat.dgl_backend.indexing import (boolean_mask, gather_row, index_add_inplace,  # noqa: F401
                                                   scatter_add, scatter_row, scatter_row_inplace, take)
from nodeweave.compat.dgl_backend.kernels import gather_mm, segment_mm, segment_reduce  # noqa: F401
from nodeweave.compat.dgl_backend.reductions import (count_nonzero, cumsum, max, mean, min,  # noqa: F401,A004
                                                     reduce_max, reduce_mean, reduce_min, reduce_sum,
                                                     sum)
from nodeweave.compat.dgl_backend.shaping import (cat, narrow_row, pack_padded_tensor,  # noqa: F401
                                                  pad_packed_tensor, repeat, reshape, slice_axis,
                                                  split, squeeze, stack, swapaxes, unsqueeze)
from nodeweave.compat.dgl_backend.sorting import (argsort, argtopk, nonzero_1d, sort_1d, topk,  # noqa: F401
                                                  unique)
from nodeweave.compat.dgl_backend.sparse import (get_preferred_sparse_format, sparse_matrix,  # noqa: F401
                                                 sparse_matrix_indices)
from nodeweave.compat.dgl_backend.tensor_info import (as_scalar, context, dtype, is_pinned,  # noqa: F401
                                                      is_tensor, ndim, shape)

FUNCTIONS = tuple(name for m in (tensor_info, devices, creation, conversion, reductions, elementwise,
                                 sorting, shaping, indexing, kernels, sparse, autograd)
                  for name in m.__all__) + ("is_enabled",)
"""Every function (and context-manager class) of DGL's backend API this module provides."""

# DGL backend functions that take DGL's internal graph index or C NDArray: what to use instead.
_NOT_HERE = {
    **dict.fromkeys(("gspmm", "gspmm_hetero", "gsddmm", "gsddmm_hetero", "binary_reduce", "copy_reduce"),
                    "message passing runs on a nodeweave graph: nodeweave.ops.gspmm(g, op, reduce_op, "
                    "lhs, rhs), nodeweave.ops.gsddmm(g, op, lhs, rhs), or g.update_all / g.apply_edges"),
    **dict.fromkeys(("edge_softmax", "edge_softmax_hetero"), "use nodeweave.ops.edge_softmax(g, logits)"),
    **dict.fromkeys(("csrmm", "csrsum", "csrmask"), "they take DGL's internal graph index, which "
                    "nodeweave does not have"),
    **dict.fromkeys(("zerocopy_to_dgl_ndarray", "zerocopy_to_dgl_ndarray_for_write",
                     "zerocopy_from_dgl_ndarray", "to_dgl_nd", "from_dgl_nd"),
                    "nodeweave has no DGL NDArray: exchange tensors with zerocopy_to_dlpack / "
                    "zerocopy_from_dlpack"),
    **dict.fromkeys(("load_backend", "get_preferred_backend", "set_default_backend"),
                    "choose the backend with nodeweave.set_backend(name) or NODEWEAVE_BACKEND"),
}


def is_enabled(api: str) -> bool:
    """Whether function ``api`` runs on the active backend (all of them do on pytorch)."""
    if api not in FUNCTIONS:
        return False
    return _library.active() is not nc or api not in _library.TORCH_ONLY


def _dtypes() -> dict[str, Any]:
    return _library.data_type_dict(_library.active())


def __getattr__(name: str) -> Any:
    """The names that follow the active backend, then :mod:`nodeweave.backend`'s attributes."""
    if name in _library.DTYPE_NAMES:
        found = _dtypes().get(name)
        if found is None:
            raise nwerr.AttributeError(f"dgl.backend.{name}: the {_library.name_of(_library.active())} "
                                       f"backend has no {name} dtype")
        return found
    if name == "data_type_dict":
        return _dtypes()
    if name == "reverse_data_type_dict":
        return {d: n for n, d in reversed(list(_dtypes().items()))}  # reversed: the first name wins
    if name == "backend_name":
        return importlib.import_module("nodeweave.backend").backend_name
    if name == "__all__":  # `from dgl.backend import *`: the functions and the active dtype names
        return [*FUNCTIONS, *_dtypes(), "data_type_dict", "reverse_data_type_dict", "backend_name"]
    if name == "pytorch":
        return importlib.import_module(__name__ + ".pytorch")
    if name in _NOT_HERE:
        raise nwerr.AttributeError(f"dgl.backend.{name} is not provided by nodeweave: {_NOT_HERE[name]}")
    if not name.startswith("__") and name != "native":
        nwbackend = importlib.import_module("nodeweave.backend")
        if name in nwbackend.__all__:
            return getattr(nwbackend, name)
    raise nwerr.AttributeError(f"module {__name__!r} (dgl.backend) has no attribute {name!r}")
