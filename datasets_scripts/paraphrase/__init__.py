"""Graded paraphrase corpora and the Korean BERTScore paper's benchmark (metrics vs human scores).

- :mod:`.corpus`: the corpus format, builders (KLUE-STS dev, KorSTS, a user's ratings file), folder I/O.
- :mod:`.ratings`: per-rater z-scores, human scores, Cohen's kappa, Krippendorff's alpha.

The experiment itself (metrics vs human scores, Tables 2-4) is :mod:`kometrics.bench.paraphrase`.
"""

from .build import build
from .corpus import (
    Corpus,
    Pair,
    build_corpus,
    build_named,
    load_corpus,
    pairs_from_klue_sts,
    pairs_from_korsts,
    read_rating_file,
    write_corpus,
)
from .ratings import agreement, cohen_kappa, human_scores, krippendorff_alpha, rater_z_scores

__all__ = [
    "Corpus",
    "Pair",
    "agreement",
    "build",
    "build_corpus",
    "build_named",
    "cohen_kappa",
    "human_scores",
    "krippendorff_alpha",
    "load_corpus",
    "pairs_from_klue_sts",
    "pairs_from_korsts",
    "rater_z_scores",
    "read_rating_file",
    "write_corpus",
]
