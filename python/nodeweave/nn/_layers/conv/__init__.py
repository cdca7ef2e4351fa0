"""Graph convolution layers (``nodeweave.nn.native.conv``, ``nodeweave.nn.pytorch.conv``), one per
file, all re-exported by the backend's layer package. See docs/nn.md for the formulas."""

from .appnpconv import APPNPConv
from .chebconv import ChebConv
from .edgeconv import EdgeConv
from .edgeweightnorm import EdgeWeightNorm
from .gatconv import GATConv
from .gatv2conv import GATv2Conv
from .gcn2conv import GCN2Conv
from .ginconv import GINConv
from .gineconv import GINEConv
from .graphconv import GraphConv
from .sgconv import SGConv
from .tagconv import TAGConv

__all__ = ["APPNPConv", "ChebConv", "EdgeConv", "EdgeWeightNorm", "GATConv", "GATv2Conv",
           "GCN2Conv", "GINConv", "GINEConv", "GraphConv", "SGConv", "TAGConv"]

# ---- nn-b: SAGEConv, GatedGraphConv, NNConv, RelGraphConv (keep this block separate) ----
from .sageconv import SAGEConv  # noqa: E402
from .gatedgraphconv import GatedGraphConv  # noqa: E402
from .nnconv import NNConv  # noqa: E402
from .relgraphconv import RelGraphConv  # noqa: E402

__all__ += ["SAGEConv", "GatedGraphConv", "NNConv", "RelGraphConv"]
# ---- end of nn-b block ----

# More of DGL's convolutions: attention, edge features, principal aggregation; JK, label propagation
from .gmmconv import GMMConv  # noqa: E402
from .dotgatconv import DotGatConv  # noqa: E402
from .agnnconv import AGNNConv  # noqa: E402
from .egatconv import EGATConv  # noqa: E402
from .edgegatconv import EdgeGATConv  # noqa: E402
from .gatedgcnconv import GatedGCNConv  # noqa: E402
from .cfconv import CFConv  # noqa: E402
from .pnaconv import PNAConv  # noqa: E402
from .dgnconv import DGNConv  # noqa: E402

__all__ += ["GMMConv", "DotGatConv", "AGNNConv", "EGATConv", "EdgeGATConv", "GatedGCNConv", "CFConv", "PNAConv",
            "DGNConv"]

# More of DGL's layers: HGT, TWIRLS, EGNN, AtomicConv, dense-adjacency convs, GroupRevRes, graph transformer
from .atomicconv import AtomicConv  # noqa: E402
from .densechebconv import DenseChebConv  # noqa: E402
from .densegraphconv import DenseGraphConv  # noqa: E402
from .densesageconv import DenseSAGEConv  # noqa: E402
from .egnnconv import EGNNConv  # noqa: E402
from .grouprevres import GroupRevRes  # noqa: E402
from .hgtconv import HGTConv  # noqa: E402
from .twirlsconv import TWIRLSConv  # noqa: E402
from .twirls_unfolding import TWIRLSUnfoldingAndAttention  # noqa: E402

__all__ += ["AtomicConv", "DenseChebConv", "DenseGraphConv", "DenseSAGEConv", "EGNNConv", "GroupRevRes", "HGTConv",
            "TWIRLSConv", "TWIRLSUnfoldingAndAttention"]
