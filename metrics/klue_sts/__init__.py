"""KLUE-STS scoring (``kometrics.klue_sts``): the library face of ``metrics/klue_sts``.

>>> from kometrics.klue_sts import score
>>> score([4.5, 0.5, 3.2, 1.0], [5.0, 0.0, 2.8, 1.4])["f1"]
0.6666666666666666

``score`` gives the same result as ``evaluate.load("metrics/klue_sts").compute``; ``make_compute_metrics`` (and
the ready ``compute_metrics``) is the Trainer hook.
"""

from .scoring import (
    VERSION,
    as_scores,
    binarize,
    bootstrap_intervals,
    f1_binary,
    klue_sts_scores,
    pearson,
    score,
    signature,
    spearman,
    sts_scores,
)
from .trainer import STSComputeMetrics, compute_metrics, make_compute_metrics

__all__ = [
    "VERSION",
    "as_scores",
    "binarize",
    "bootstrap_intervals",
    "f1_binary",
    "klue_sts_scores",
    "pearson",
    "score",
    "signature",
    "spearman",
    "sts_scores",
    "STSComputeMetrics",
    "compute_metrics",
    "make_compute_metrics",
]
