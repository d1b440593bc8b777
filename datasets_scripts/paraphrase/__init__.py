"""Graded paraphrase corpora and the Korean BERTScore paper's benchmark (metrics vs human scores).

- :mod:`.corpus`: the corpus format, builders (KLUE-STS dev, KorSTS, a user's ratings file), folder I/O.
- :mod:`.ratings`: per-rater z-scores, human scores, Cohen's kappa, Krippendorff's alpha.
- :mod:`.ngram`: sentence BLEU, GLEU, TER, chrF; :mod:`.bert`: korbertscore at every layer.
- :mod:`.correlation`: Pearson/Spearman with bootstrap intervals; :mod:`.benchmark`: Tables 2-4.
"""

from .benchmark import BenchmarkConfig, BenchmarkResult, run_benchmark, write_outputs
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
    "BenchmarkConfig",
    "BenchmarkResult",
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
    "run_benchmark",
    "write_corpus",
    "write_outputs",
]
