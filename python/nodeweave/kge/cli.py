"""``nodeweave-kge``: the knowledge-graph-embedding command line (also ``python -m nodeweave.kge``).

    nodeweave-kge train --model RotatE --dataset FB15k-237 --hidden-dim 400 --max-step 50000 \\
        --save-path runs/rotate --valid --test
    nodeweave-kge eval --model-path runs/rotate
    nodeweave-kge predict --model-path runs/rotate --query "/m/027rn" "/location/country/form_of_government" "?"
    nodeweave-kge emb-sim --model-path runs/rotate --items /m/027rn --metric cosine --topk 5

Options take DGL-KE's spellings too (``--model_name``, ``--batch_size``, ...). Any bad input, from
a malformed triple file to an unknown entity, ends with one ``nodeweave-kge: error: ...`` line
and exit status 2, nothing half-written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence

import numpy as np

from nodeweave import errors as nwerr

__all__ = ["main", "build_parser"]

PROG = "nodeweave-kge"

# (flags, argparse keywords): the train options, declared once; TrainOptions names the fields.
_TRAIN_OPTIONS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (("--model", "--model_name"), dict(dest="model", help="TransE_l1, TransE_l2 (TransE), TransR, RESCAL, "
                                                          "DistMult, ComplEx, RotatE, SimplE, PairRE")),
    (("--dataset",), dict(help="FB15k-237, WN18RR, WN18, FB15k, kinship, nations or umls (data directory)")),
    (("--data-path", "--data_path"), dict(dest="data_path", help="directory of your own triple files")),
    (("--data-files", "--data_files"), dict(dest="data_files", nargs="+", help="train [valid [test]] files")),
    (("--format",), dict(choices=["raw_hrt", "id_hrt"], help="names (raw_hrt) or integer ids (id_hrt)")),
    (("--delimiter",), dict(help="field separator of the triple files (default: tab)")),
    (("--batch-size", "--batch_size"), dict(dest="batch_size", type=int)),
    (("--neg-sample-size", "--neg_sample_size"), dict(dest="neg_sample_size", type=int)),
    (("--neg-chunk-size", "--neg_chunk_size"), dict(dest="neg_chunk_size", type=int,
                                                    help="triples sharing negatives (default: neg-sample-size)")),
    (("--neg-deg-sample", "--neg_deg_sample"), dict(dest="neg_deg_sample", action="store_true",
                                                    help="add as many negatives drawn in proportion to degree")),
    (("--hidden-dim", "--hidden_dim"), dict(dest="hidden_dim", type=int)),
    (("--gamma", "-g"), dict(type=float, help="margin of the distance models")),
    (("--lr",), dict(type=float)),
    (("--optimizer",), dict(choices=["adagrad", "adam"])),
    (("--adversarial-temperature", "--adversarial_temperature", "-a"),
     dict(dest="adversarial_temperature", type=float)),
    (("--no-adversarial", "--no_adversarial"), dict(dest="no_adversarial", action="store_true",
                                                    help="uniform weights over the negatives")),
    (("--regularization-coef", "--regularization_coef", "-rc"), dict(dest="regularization_coef", type=float)),
    (("--regularization-norm", "--regularization_norm", "-rn"), dict(dest="regularization_norm", type=int)),
    (("--loss", "--loss_genre"), dict(dest="loss", choices=["logsigmoid", "logistic", "hinge", "bce"])),
    (("--margin",), dict(type=float, help="hinge loss margin")),
    (("--max-step", "--max_step"), dict(dest="max_step", type=int)),
    (("--num-threads", "--num_thread"), dict(dest="num_threads", type=int)),
    (("--save-path", "--save_path"), dict(dest="save_path")),
    (("--valid",), dict(action="store_true", help="evaluate on the valid split every eval-interval steps")),
    (("--test",), dict(action="store_true", help="evaluate on the test split at the end")),
    (("--eval-interval", "--eval_interval", "--log_interval"), dict(dest="eval_interval", type=int)),
    (("--neg-sample-size-eval", "--neg_sample_size_eval"), dict(dest="neg_sample_size_eval", type=int,
                                                                help="rank among this many sampled entities")),
    (("--checkpoint-interval", "--checkpoint_interval"), dict(dest="checkpoint_interval", type=int)),
    (("--seed",), dict(type=int)),
    (("--resume",), dict(action="store_true", help="continue from the checkpoint in --save-path")),
]


def _data_options(p: argparse.ArgumentParser) -> None:
    for flags, kw in _TRAIN_OPTIONS:
        if kw.get("dest", flags[0].lstrip("-")) in ("dataset", "data_path", "data_files", "format", "delimiter"):
            p.add_argument(*flags, **kw, default=argparse.SUPPRESS)


def build_parser() -> argparse.ArgumentParser:
    from nodeweave.kge.training import TrainOptions

    defaults = TrainOptions()
    parser = argparse.ArgumentParser(prog=PROG, description="Knowledge-graph embedding with nodeweave.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{train,eval,predict,emb-sim}")

    tr = sub.add_parser("train", help="train a model", description="Train a model; see docs/kge.md.")
    for flags, kw in _TRAIN_OPTIONS:
        dest = kw.get("dest", flags[0].lstrip("-").replace("-", "_"))
        default = getattr(defaults, dest)
        extra = {} if kw.get("action") else {"default": default}
        help_text = kw.get("help", "")
        if kw.get("action") is None and default not in (None, ()):
            help_text = (help_text + f" (default: {default!r})").strip()
        tr.add_argument(*flags, **{**kw, "help": help_text or None}, **extra)
    tr.add_argument("--plot", nargs="?", const="", default=None, metavar="PNG",
                    help="write the training curve (default: SAVE_PATH/training_curve.png)")
    tr.add_argument("--no-progress", action="store_true", help="no progress bar")

    ev = sub.add_parser("eval", help="filtered ranking of a saved model on a split")
    ev.add_argument("--model-path", "--model_path", dest="model_path", required=True)
    _data_options(ev)
    ev.add_argument("--split", choices=["test", "valid"], default="test")
    ev.add_argument("--neg-sample-size-eval", "--neg_sample_size_eval", dest="neg_sample_size_eval", type=int)
    ev.add_argument("--output", help="metrics file (default: MODEL_PATH/metrics.json)")

    pr = sub.add_parser("predict", help="top-k completions of queries, or scores of triples")
    pr.add_argument("--model-path", "--model_path", dest="model_path", required=True)
    pr.add_argument("--query", nargs=3, action="append", metavar=("HEAD", "REL", "TAIL"), default=[],
                    help="names or ids; one of them '?' ranks its completions, none scores the triple")
    pr.add_argument("--triples", help="file of tab-separated triples to score (names or ids)")
    pr.add_argument("--topk", type=int, default=10)

    es = sub.add_parser("emb-sim", help="most similar entities or relations")
    es.add_argument("--model-path", "--model_path", dest="model_path", required=True)
    es.add_argument("--items", nargs="+", required=True, help="names or ids")
    es.add_argument("--kind", choices=["entity", "relation"], default="entity")
    es.add_argument("--metric", choices=["cosine", "l2", "l1", "dot"], default="cosine")
    es.add_argument("--topk", type=int, default=10)
    return parser


def _cmd_train(args: argparse.Namespace) -> int:
    from nodeweave.kge.training import TrainOptions, train

    fields = {f for f in TrainOptions.__dataclass_fields__}
    values = {k: v for k, v in vars(args).items() if k in fields}
    values["data_files"] = tuple(values.get("data_files") or ())
    opts = TrainOptions(**values)
    opts.check()
    print(f"{PROG} train: " + json.dumps(opts.as_dict(), sort_keys=True), file=sys.stderr)
    model = train(opts, progress=not args.no_progress)
    if args.plot is not None:
        path = args.plot or os.path.join(opts.save_path or ".", "training_curve.png")
        _plot(model, path)
        print(f"training curve: {path}", file=sys.stderr)
    return 0


def _plot(model: Any, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    losses = np.asarray(model.losses)
    fig, ax = plt.subplots(figsize=(7, 4))
    window = max(1, len(losses) // 200)
    smooth = np.convolve(losses, np.ones(window) / window, mode="valid")
    ax.plot(np.arange(len(smooth)) + window, smooth, label="training loss")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    if model.history["step"]:
        ax2 = ax.twinx()
        ax2.plot(model.history["step"], model.history["valid_mrr"], "o-", color="tab:red", label="valid MRR")
        ax2.set_ylabel("valid MRR")
    ax.set_title(f"{model.model}, hidden_dim {model.hidden_dim}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _saved(args: argparse.Namespace) -> Any:
    from nodeweave.kge.model import KGEModel

    return KGEModel.load(args.model_path)


def _data_for(model: Any, args: argparse.Namespace) -> Any:
    from nodeweave.kge.training import TrainOptions, load_data

    cfg = {k: model.config.get(k) for k in ("dataset", "data_path", "data_files", "format", "delimiter")}
    for k in cfg:
        if k in vars(args):
            cfg[k] = getattr(args, k)
    if "data_path" in vars(args):
        cfg["dataset"] = None
    opts = TrainOptions(**{k: v for k, v in cfg.items() if v is not None})
    opts.data_files = tuple(opts.data_files or ())
    data = load_data(opts)
    if (data.num_entities, data.num_relations) != (len(model.entities), len(model.relations)):
        raise nwerr.ValueError(f"the data has {data.num_entities} entities and {data.num_relations} relations, "
                               f"the model {len(model.entities)} and {len(model.relations)}: not the data it was "
                               "trained on")
    return data


def _cmd_eval(args: argparse.Namespace) -> int:
    from nodeweave.kge.checkpoint import atomic_write

    model = _saved(args)
    data = _data_for(model, args)
    triples = data.test if args.split == "test" else data.valid
    m = model.evaluate(triples, data.known(), neg_sample_size=args.neg_sample_size_eval)
    width = max(map(len, m))
    print(f"{model.model} on {data.name or 'the data'}, {args.split} ({len(triples)} triples, filtered)")
    for k, v in m.items():
        print(f"  {k:<{width}}  {v:.1f}" if k == "MR" else f"  {k:<{width}}  {v:.4f}")
    out = args.output or os.path.join(args.model_path, "metrics.json")
    atomic_write(out, json.dumps({args.split: m}, indent=2).encode() + b"\n")
    return 0


def _cmd_predict(args: argparse.Namespace) -> int:
    from nodeweave.data.text_tables import read_text, str_table

    model = _saved(args)
    queries = [tuple(q) for q in args.query]
    if args.triples:
        queries += [tuple(r) for r in str_table(read_text(args.triples), args.triples, 3)]
    if not queries:
        raise nwerr.ValueError("give --query HEAD REL TAIL (one of them '?') or --triples FILE")
    for h, r, t in queries:
        blanks = [x == "?" for x in (h, r, t)]
        if sum(blanks) > 1:
            raise nwerr.ValueError(f"query ({h}, {r}, {t}): at most one '?'")
        if not any(blanks):
            print(f"{h}\t{r}\t{t}\t{float(model.score([h], [r], [t])[0]):.6f}")
            continue
        if blanks[2]:
            top = model.predict_tail(h, r, k=args.topk)
        elif blanks[0]:
            top = model.predict_head(r, t, k=args.topk)
        else:
            top = model.predict_relation(h, t, k=args.topk)
        print(f"# {h} {r} {t}")
        for rank, (name, score) in enumerate(top, 1):
            print(f"{rank}\t{name}\t{score:.6f}")
    return 0


def _cmd_emb_sim(args: argparse.Namespace) -> int:
    model = _saved(args)
    for item, top in zip(args.items, model.similar(args.items, args.kind, args.metric, args.topk)):
        print(f"# {item} ({args.metric})")
        for rank, (name, sim) in enumerate(top, 1):
            print(f"{rank}\t{name}\t{sim:.6f}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status (2 on any bad input)."""
    from nodeweave._cli import run_command

    parser = build_parser()
    args = parser.parse_args(argv)
    command = {"train": _cmd_train, "eval": _cmd_eval, "predict": _cmd_predict, "emb-sim": _cmd_emb_sim}
    return run_command(PROG, lambda: command[args.command](args))


if __name__ == "__main__":
    sys.exit(main())
