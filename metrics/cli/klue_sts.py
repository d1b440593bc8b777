"""``kometrics klue_sts build --out DIR``: the KLUE-STS dataset folder (Hugging Face ``klue``/``sts`` schema)."""

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
    top = commands.add_parser("klue_sts", help="KLUE-STS tools: build the dataset folder")
    sub = top.add_subparsers(dest="klue_sts_command", required=True)
    p = sub.add_parser("build", help="KLUE-STS dev in the Hugging Face klue/sts schema, as a datasets folder")
    p.add_argument("--source", help="klue-sts-v1.1_dev.json or its folder (default: ../shared/data/klue)")
    p.add_argument("--out", required=True, help="output folder")
    p.set_defaults(func=_build)
