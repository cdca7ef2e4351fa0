"""Compatibility helpers for code written against other graph libraries (:mod:`nodeweave.compat.dgl`)."""
