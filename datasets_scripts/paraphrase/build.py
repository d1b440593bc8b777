"""Build a paraphrase corpus folder (``kometrics paraphrase build``): KLUE-STS dev, KorSTS or a user's file.

The folder (``pairs-<hash>.jsonl``, ``corpus.json``, ``README.md`` card) loads with
``datasets.load_dataset(folder)``. Without ``out`` the named corpora go to ``data/<name>/`` beside this file
(git-ignored: data built from ../shared/data is never committed).
"""

from __future__ import annotations

import os
from pathlib import Path

from .corpus import Corpus, build_named, write_corpus

__all__ = ["DATA_ROOT", "build", "default_out"]

#: Where named corpora are written by default (git-ignored).
DATA_ROOT = Path(__file__).resolve().parent / "data"


def default_out(name: str) -> Path:
    """``data/<config name>/`` beside this file: ``klue_sts``, ``korsts_dev``, ``korsts_train``, or the file
    stem of a user's ratings file."""
    key = {"korsts": "korsts-dev"}.get(name, name)
    return DATA_ROOT / Path(key).stem.replace("-", "_")


def build(source: str, out: str | os.PathLike | None = None, data_dir: str | os.PathLike | None = None,
          scale: tuple[float, float] | None = None, ddof: int = 0, degenerate: str = "drop"
          ) -> tuple[Corpus, Path]:
    """Build the corpus ``source`` (see :func:`~.corpus.build_named`) and write it to ``out``."""
    corpus = build_named(source, data_dir, ddof=ddof, degenerate=degenerate, scale=scale)
    folder = write_corpus(corpus, out if out is not None else default_out(source))
    return corpus, folder
