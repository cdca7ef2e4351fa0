"""Neural-network building blocks (``nodeweave.core.nn``), named and behaving like ``torch.nn``.

>>> import nodeweave.core as nc
>>> model = nc.nn.Sequential(nc.nn.Linear(4, 16), nc.nn.ReLU(), nc.nn.Linear(16, 3))
>>> loss = nc.nn.CrossEntropyLoss()(model(nc.randn(8, 4)), nc.tensor([0, 1, 2, 0, 1, 2, 0, 1]))
>>> loss.backward()
>>> all(p.grad is not None for p in model.parameters())
True
"""

from nodeweave.core.nn.parameter import Parameter
from nodeweave.core.nn.module import Module
from nodeweave.core.nn import functional, init
from nodeweave.core.nn.linear import Identity, Linear
from nodeweave.core.nn.embedding import Embedding
from nodeweave.core.nn.dropout import Dropout
from nodeweave.core.nn.normalization import BatchNorm1d, LayerNorm
from nodeweave.core.nn.container import ModuleDict, ModuleList, ParameterList, Sequential
from nodeweave.core.nn.rnn import GRU, GRUCell, LSTM, LSTMCell
from nodeweave.core.nn.activation import (ELU, GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Softplus,
                                          Tanh)
from nodeweave.core.nn.loss import BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MarginRankingLoss, MSELoss, NLLLoss
from nodeweave.core.nn import utils

__all__ = [
    "Parameter", "Module", "functional", "init", "utils", "Identity", "Linear", "Embedding", "Dropout",
    "BatchNorm1d", "LayerNorm", "ModuleDict", "ModuleList", "ParameterList", "Sequential", "GRU", "GRUCell", "LSTM", "LSTMCell", "ELU", "GELU", "LeakyReLU",
    "LogSoftmax", "ReLU", "Sigmoid", "SiLU", "Softmax", "Softplus", "Tanh", "BCEWithLogitsLoss", "CrossEntropyLoss",
    "L1Loss", "MarginRankingLoss", "MSELoss", "NLLLoss",
]
