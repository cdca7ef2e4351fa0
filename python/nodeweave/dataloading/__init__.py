"""Mini-batch training (DGL's ``dgl.dataloading``): samplers that turn a batch of seed nodes or
edges into message-flow blocks or subgraphs, and the :class:`DataLoader` that runs them ahead of the
training loop.
"""

from nodeweave.dataloading import negative_sampler  # noqa: E402,F401
