"""``kometrics data klue_sts --out DIR``: build the KLUE-STS dataset folder."""

from __future__ import annotations

import argparse


def _build(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.datasets_scripts.klue_sts.build import build
    from kometrics.datasets_scripts.readers import default_data_dir

    source = args.source or default_data_dir() / "klue"
    out = build(source, args.out)
    print(f"wrote {out}/validation.jsonl and {out}/README.md (load with datasets.load_dataset({str(out)!r}))")
    return 0


def register(commands, bench) -> None:
    data = commands.choices.get("data")
    if data is None:
        data = commands.add_parser("data", help="build dataset folders from raw corpora")
        data.set_defaults(func=lambda args, extra: data.print_help() or 2)
        data._kometrics_sub = data.add_subparsers(dest="dataset")
    p = data._kometrics_sub.add_parser("klue_sts", help="KLUE-STS dev in the Hugging Face klue/sts schema")
    p.add_argument("--source", help="klue-sts-v1.1_dev.json or its folder (default: ../shared/data/klue)")
    p.add_argument("--out", required=True, help="output folder")
    p.set_defaults(func=_build)
