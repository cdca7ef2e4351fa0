"""``load_data(args)``: DGL's older one-call dataset loader, which some DGL example scripts still use
(``data = load_data(args)`` with ``args.dataset`` naming the dataset), and
``register_data_args(parser)``, which adds the ``--dataset`` option it reads to a script's parser.

>>> import argparse
>>> from nodeweave.data import load_data, register_data_args
>>> parser = argparse.ArgumentParser()
>>> register_data_args(parser)
>>> parser.parse_args(["--dataset", "cora"]).dataset, parser.parse_args([]).dataset
('cora', None)
>>> data = load_data(argparse.Namespace(dataset="cora"))  # doctest: +SKIP
>>> data.num_classes  # doctest: +SKIP
7
>>> load_data(argparse.Namespace(dataset="reddit"))
Traceback (most recent call last):
...
nodeweave.errors.ValueError: load_data: dataset 'reddit' is not one nodeweave serves; choose one of cora, citeseer, pubmed, aifb, ppi, dblp
"""

from __future__ import annotations

import argparse
from typing import Any

from nodeweave import errors as nwerr

__all__ = ["load_data", "register_data_args"]


def _datasets() -> dict:
    from nodeweave.data.community import DBLPDataset, PPINode2VecDataset
    from nodeweave.data.planetoid import CiteseerGraphDataset, CoraGraphDataset, PubmedGraphDataset
    from nodeweave.data.rdf import AIFBDataset

    return {"cora": CoraGraphDataset, "citeseer": CiteseerGraphDataset, "pubmed": PubmedGraphDataset,
            "aifb": AIFBDataset, "ppi": PPINode2VecDataset, "dblp": DBLPDataset}


def register_data_args(parser: argparse.ArgumentParser) -> None:
    """Adds the options :func:`load_data` reads to ``parser``: ``--dataset`` (a str, optional,
    default None, as DGL's: a script that needs it checks it itself).

    The parser is changed in place and nothing is returned, as in DGL.
    """
    if not isinstance(parser, argparse.ArgumentParser):
        raise nwerr.TypeError(f"register_data_args: parser must be an argparse.ArgumentParser, "
                              f"got {type(parser).__name__}")
    parser.add_argument("--dataset", type=str, required=False,
                        help=f"The input dataset, one of {', '.join(_datasets())} (case-insensitive).")


def load_data(args: Any) -> Any:
    """The dataset named by ``args.dataset`` (case-insensitive), built with its defaults.

    ``args`` is any object with a ``dataset`` attribute (an ``argparse.Namespace`` in DGL's
    scripts). Knowledge-graph and TU datasets take more options: build their classes directly.
    """
    name = getattr(args, "dataset", None)
    if not isinstance(name, str):
        raise nwerr.TypeError(f"load_data: args.dataset must name a dataset (a str), got {type(name).__name__}")
    table = _datasets()
    cls = table.get(name.lower())
    if cls is None:
        raise nwerr.ValueError(f"load_data: dataset {name!r} is not one nodeweave serves; choose one of "
                               f"{', '.join(table)}")
    return cls()
