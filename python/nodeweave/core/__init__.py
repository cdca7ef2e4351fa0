"""The native tensor + autograd engine, named like PyTorch where the meaning is the same.

>>> import nodeweave.core as nc
>>> x = nc.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> y = (x * x).sum()
>>> y.backward()
>>> x.grad.tolist()
[[2.0, 4.0], [6.0, 8.0]]
"""

from nodeweave import _C
from nodeweave._C import *  # noqa: F401,F403
from nodeweave._C import Tensor, dtype, device  # noqa: F401

# Show dtypes as users write them (pybind11's enum repr would print "<dtype.float32: 7>").
_C.dtype.__repr__ = _C.dtype.__str__ = lambda self: f"nodeweave.core.{self.name}"

bool = _C.dtype.bool  # noqa: A001 - mirrors torch.bool
uint8 = _C.dtype.uint8
int8 = _C.dtype.int8
int32 = _C.dtype.int32
int64 = _C.dtype.int64
float16 = _C.dtype.float16
bfloat16 = _C.dtype.bfloat16
float32 = _C.dtype.float32
float64 = _C.dtype.float64
half, float, double, long, int = float16, float32, float64, int64, int32  # noqa: A001

from nodeweave.core._tensor import tensor, as_tensor, from_numpy, arange  # noqa: E402,F401
from nodeweave.core import autograd  # noqa: E402,F401
from nodeweave.core.autograd import no_grad, enable_grad, set_grad_enabled  # noqa: E402,F401
from nodeweave._C import from_dlpack  # noqa: E402,F401
from nodeweave.core import cuda, profiler  # noqa: E402,F401
from nodeweave.core import nn, optim  # noqa: E402,F401
from nodeweave.core import jit  # noqa: E402,F401
from nodeweave.core.serialization import save, load  # noqa: E402,F401
from nodeweave.core import pickling as _pickling  # noqa: E402,F401  (registers pickle support)
