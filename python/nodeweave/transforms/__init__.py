"""Graph transforms as objects (DGL's ``dgl.transforms``): callables ``graph -> graph`` that can be
chained with :class:`Compose` and handed to a dataset's ``transform=``, plus every functional
transform of :mod:`nodeweave.graph.transforms` under the same names as DGL's.

=========================  ==================================================================
module                     classes
=========================  ==================================================================
:mod:`.base`               :class:`BaseTransform`, :class:`Compose`
:mod:`.structure`          :class:`AddSelfLoop`, :class:`RemoveSelfLoop`, :class:`AddReverse`,
                           :class:`ToSimple`, :class:`LineGraph`, :class:`KHopGraph`,
                           :class:`AddMetaPaths`, :class:`ToLevi`
:mod:`.normalization`      :class:`GCNNorm`, :class:`RowFeatNormalizer`
:mod:`.diffusion`          :class:`PPR`, :class:`HeatKernel`, :class:`GDC`
:mod:`.sign`               :class:`SIGNDiffusion`
:mod:`.augmentation`       :class:`DropNode`, :class:`DropEdge`, :class:`AddEdge`,
                           :class:`FeatMask`, :class:`NodeShuffle` (random)
:mod:`.positional_encoding` :class:`LapPE` / :class:`LaplacianPE`, :class:`RandomWalkPE`,
                           :class:`SVDPE`
=========================  ==================================================================

A transform returns a new graph and leaves its input unchanged. Random transforms draw from
nodeweave's seeded generator (``nodeweave.core.manual_seed``).

>>> import nodeweave as nw
>>> import nodeweave.transforms as T
>>> t = T.Compose([T.AddReverse(), T.ToSimple(), T.AddSelfLoop(), T.GCNNorm()])
>>> g = t(nw.graph(([0, 1, 1], [1, 2, 2])))
>>> g.num_edges(), sorted(g.edata)
(7, ['count', 'w'])
"""

from nodeweave.graph.transforms import *  # noqa: F401,F403  (the functional transforms, as dgl.transforms has them)
from nodeweave.graph.transforms import __all__ as _functional
from nodeweave.transforms.base import BaseTransform, Compose  # noqa: F401
from nodeweave.transforms.structure import (AddSelfLoop, RemoveSelfLoop, AddReverse, ToSimple,  # noqa: F401
                                            LineGraph, KHopGraph, AddMetaPaths, ToLevi)
from nodeweave.transforms.normalization import GCNNorm, RowFeatNormalizer  # noqa: F401
from nodeweave.transforms.diffusion import PPR, HeatKernel, GDC  # noqa: F401
from nodeweave.transforms.sign import SIGNDiffusion  # noqa: F401
from nodeweave.transforms.augmentation import DropNode, DropEdge, AddEdge, FeatMask, NodeShuffle  # noqa: F401
from nodeweave.transforms.positional_encoding import LapPE, LaplacianPE, RandomWalkPE, SVDPE  # noqa: F401
from nodeweave.transforms import functional  # noqa: F401,E402  (DGL's dgl.transforms.functional)
# dgl.transforms also holds DGL's partitioning functions (dgl.transforms.metis_partition ...)
from nodeweave.partition import metis_partition, metis_partition_assignment, partition_graph_with_halo  # noqa: E402

CLASSES = ["BaseTransform", "Compose", "AddSelfLoop", "RemoveSelfLoop", "AddReverse", "ToSimple", "LineGraph",
           "KHopGraph", "AddMetaPaths", "ToLevi", "GCNNorm", "RowFeatNormalizer", "PPR", "HeatKernel", "GDC",
           "SIGNDiffusion", "DropNode", "DropEdge", "AddEdge", "FeatMask", "NodeShuffle", "LapPE", "LaplacianPE",
           "RandomWalkPE", "SVDPE"]
"""The transform classes (what ``from nodeweave.transforms import *`` adds to the functions)."""

__all__ = list(_functional) + CLASSES + ["metis_partition", "metis_partition_assignment", "partition_graph_with_halo"]
