"""Link-prediction heads: scores for (source, destination) pairs of node representations, and the
knowledge-graph scores TransE and TransR for (head, relation, tail) triples."""

from .edgepredictor import EdgePredictor
from .ke_score import TransE, TransR

__all__ = ["EdgePredictor", "TransE", "TransR"]
