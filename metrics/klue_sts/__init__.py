"""KLUE-STS scoring (``kometrics.klue_sts``): the library face of ``metrics/klue_sts``.

>>> from kometrics.klue_sts import klue_sts_scores
>>> klue_sts_scores([4.5, 0.5, 3.2, 1.0], [5.0, 0.0, 2.8, 1.4])["f1"]
0.6666666666666666
"""

from .scoring import (
    as_scores,
    binarize,
    bootstrap_intervals,
    f1_binary,
    klue_sts_scores,
    pearson,
    spearman,
)
from .trainer import STSComputeMetrics, compute_metrics, make_compute_metrics

__all__ = [
    "as_scores",
    "binarize",
    "bootstrap_intervals",
    "f1_binary",
    "klue_sts_scores",
    "pearson",
    "spearman",
    "STSComputeMetrics",
    "compute_metrics",
    "make_compute_metrics",
]
