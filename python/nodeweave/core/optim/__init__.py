"""Optimizers and learning-rate schedules (``nodeweave.core.optim``), named and behaving like
``torch.optim``. Each ``step()`` updates a parameter group with one fused native call.

>>> import nodeweave.core as nc
>>> model = nc.nn.Linear(3, 1)
>>> opt = nc.optim.Adam(model.parameters(), lr=1e-2)
>>> loss = model(nc.ones(4, 3)).pow(2).mean()
>>> opt.zero_grad(); loss.backward(); opt.step()
"""

from nodeweave.core.optim.optimizer import Optimizer
from nodeweave.core.optim.sgd import SGD
from nodeweave.core.optim.adam import Adam, AdamW
from nodeweave.core.optim.adagrad import Adagrad
from nodeweave.core.optim.rmsprop import RMSprop
from nodeweave.core.optim.sparse_adam import SparseAdam
from nodeweave.core.optim import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "SparseAdam", "lr_scheduler"]
