"""Message passing on a graph: apply_nodes/apply_edges/update_all/send_and_recv/pull.

Mixed into :class:`nodeweave.graph.HeteroGraph`.
"""


class MessagePassing:
    """Message-passing methods of a graph (see docs/message_passing.md)."""
