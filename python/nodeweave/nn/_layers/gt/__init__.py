"""Graph transformer modules (Graphormer): biased multi-head attention, the transformer layer and
the structural encodings that make its attention bias. They work on dense, padded batches
``(batch_size, N, ...)`` rather than on a graph, as DGL's ``dgl.nn.pytorch.gt``."""

from .biased_mha import BiasedMHA
from .encoders import DegreeEncoder, PathEncoder, SpatialEncoder, SpatialEncoder3d
from .graphormer import GraphormerLayer
from .lap_pos_encoder import LapPosEncoder

__all__ = ["BiasedMHA", "DegreeEncoder", "GraphormerLayer", "LapPosEncoder", "PathEncoder", "SpatialEncoder",
           "SpatialEncoder3d"]
