"""Knowledge-graph embedding: train, evaluate and query TransE, TransR, RESCAL, DistMult, ComplEx,
RotatE, SimplE and PairRE models. The command line is ``nodeweave-kge`` (:mod:`nodeweave.kge.cli`);
the training loop, scores and filtered ranking run in C++ (``sparse/kge/``).

>>> import nodeweave.kge as kge
>>> model = kge.train(dataset="nations", model="ComplEx", hidden_dim=8, max_step=20, batch_size=64,
...                   neg_sample_size=8, progress=False)
>>> sorted(model.evaluate(kge.load_dataset("nations").test[:5]))
['Hits@1', 'Hits@10', 'Hits@3', 'MR', 'MRR']
"""

from nodeweave import _C
from nodeweave.kge.model import KGEModel, ranking_metrics
from nodeweave.kge.training import TrainOptions, train
from nodeweave.kge.triples import DATASETS, KGData, load_dataset, load_files

MODELS = tuple(_C.kge.model_names())

__all__ = ["MODELS", "DATASETS", "KGData", "KGEModel", "TrainOptions", "train", "load_dataset", "load_files",
           "ranking_metrics"]
