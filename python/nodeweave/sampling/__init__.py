"""Graph sampling (DGL's ``dgl.sampling``): the C++ samplers of ``sampling/`` on nodeweave graphs.

Each function takes a graph and seed nodes and returns a graph or id arrays on the active backend.
Randomness comes from ``random_seed=`` or, when omitted, nodeweave's default generator (see
:mod:`nodeweave.sampling._seed`); the same seed gives the same sample at any thread count.
"""

from nodeweave.sampling.neighbor import sample_neighbors, sample_neighbors_fused  # noqa: E402,F401
from nodeweave.sampling.etype_neighbors import sample_etype_neighbors  # noqa: E402,F401
from nodeweave.sampling.topk import select_topk  # noqa: E402,F401
from nodeweave.sampling.biased import sample_neighbors_biased  # noqa: E402,F401
from nodeweave.sampling.negative import global_uniform_negative_sampling  # noqa: E402,F401
from nodeweave.sampling.labor import sample_labors  # noqa: E402,F401
from nodeweave.sampling.randomwalks import random_walk, node2vec_random_walk, pack_traces  # noqa: E402,F401
from nodeweave.sampling.pinsage import RandomWalkNeighborSampler, PinSAGESampler  # noqa: E402,F401
