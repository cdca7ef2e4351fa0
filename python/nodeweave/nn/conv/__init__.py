"""Graph convolution layers, one file per layer (DGL's ``dgl.nn.conv``)."""

# ---- nn-b: SAGEConv, GatedGraphConv, NNConv, RelGraphConv (keep this block separate) ----
from .sageconv import SAGEConv  # noqa: F401
from .gatedgraphconv import GatedGraphConv  # noqa: F401
from .nnconv import NNConv  # noqa: F401
from .relgraphconv import RelGraphConv  # noqa: F401
