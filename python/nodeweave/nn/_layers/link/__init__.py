"""Link-prediction heads: scores for (source, destination) pairs of node representations."""

from .edgepredictor import EdgePredictor

__all__ = ["EdgePredictor"]
