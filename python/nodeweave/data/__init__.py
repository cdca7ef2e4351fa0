"""Dataset loaders: citation graphs, knowledge graphs, an RDF graph, graph classification sets and
community-labelled graphs, read from public raw files into nodeweave graphs (DGL's conventions).

=============================  ========================================================
loader                         what ``ds[i]`` is
=============================  ========================================================
``CoraGraphDataset``,          one graph, ``ndata`` ``feat`` / ``label`` /
``CiteseerGraphDataset``,      ``train_mask`` / ``val_mask`` / ``test_mask``
``PubmedGraphDataset``
``FB15k237Dataset``,           one graph of all triples, ``edata['etype']`` and split
``WN18RRDataset``, ...         masks; triples also as ``ds.train`` / ``valid`` / ``test``
``AIFBDataset``, ``MUTAG``-,   one heterograph (R-GCN's entity classification);
``BGS``-, ``AMDataset``        labels on ``ds.predict_category``
``TUDataset(name)``            ``(graph, label)``; with :func:`kfold_split` and
                               :class:`GraphDataLoader`
``GINDataset(name, ...)``      ``(graph, label)``: the TU sets with GIN's preprocessing
``PPINode2VecDataset``,        one graph with community labels
``DBLPDataset``
=============================  ========================================================

Raw files live in the data directory (``raw_dir=``, else ``$NODEWEAVE_DATA_DIR``, else
``~/.nodeweave/data``) and are downloaded, sha256-verified, when missing; ``mirror=`` /
``$NODEWEAVE_DATA_MIRROR`` replaces the public sources by a server of the same layout. See
``docs/data.md`` and :mod:`nodeweave.data.download`.

>>> import nodeweave as nw
>>> ds = nw.data.CoraGraphDataset()
>>> ds[0].num_nodes(), ds.num_classes
(2708, 7)
"""

from nodeweave.data.errors import (DataFormatError, ChecksumError, ChecksumUnknownError,  # noqa: F401
                                   DownloadError)
from nodeweave.data.download import RemoteFile, data_dir  # noqa: F401
from nodeweave.data.dataset import Dataset, Subset  # noqa: F401
from nodeweave.data.planetoid import (PlanetoidDataset, CoraGraphDataset, CiteseerGraphDataset,  # noqa: F401
                                      PubmedGraphDataset)
from nodeweave.data.knowledge_graph import (KnowledgeGraphDataset, FB15k237Dataset, WN18RRDataset,  # noqa: F401
                                            WN18Dataset, FB15kDataset, KinshipDataset, NationsDataset,
                                            UMLSDataset)
from nodeweave.data.rdf import AIFBDataset, MUTAGDataset, BGSDataset, AMDataset  # noqa: F401
from nodeweave.data.tu import TUDataset  # noqa: F401
from nodeweave.data.gin import GINDataset  # noqa: F401
from nodeweave.data.community import PPINode2VecDataset, DBLPDataset  # noqa: F401
from nodeweave.data.minigc import MiniGCDataset  # noqa: F401
from nodeweave.data.dataloader import GraphDataLoader, kfold_split  # noqa: F401
from nodeweave.data.load_data import load_data, register_data_args  # noqa: F401

__all__ = ["DataFormatError", "ChecksumError", "ChecksumUnknownError", "DownloadError", "RemoteFile", "data_dir",
           "Dataset", "Subset", "PlanetoidDataset", "CoraGraphDataset", "CiteseerGraphDataset",
           "PubmedGraphDataset", "KnowledgeGraphDataset", "FB15k237Dataset", "WN18RRDataset", "WN18Dataset",
           "FB15kDataset", "KinshipDataset", "NationsDataset", "UMLSDataset", "AIFBDataset", "MUTAGDataset",
           "BGSDataset", "AMDataset", "TUDataset",
           "GINDataset", "PPINode2VecDataset", "DBLPDataset", "MiniGCDataset", "GraphDataLoader", "kfold_split",
           "load_data", "register_data_args"]
