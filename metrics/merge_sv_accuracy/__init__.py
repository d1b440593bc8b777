"""MERGE seed-variant accuracy for NLI (library API).

>>> from kometrics.merge_sv_accuracy import score
>>> r = score([0, 0, 1], [0, 0, 0], ["a", "a", "a"], is_seed=[True, False, False], thresholds=[0.5, 1.0])
>>> r["sv_accuracy"], r["matching_correctness"], r["signature"]
({0.5: 1.0, 1.0: 0.0}, 0.5, 'merge_sv_accuracy|ct:0.5,1|version:0.1.0')

``score`` gives the same result as ``evaluate.load("metrics/merge_sv_accuracy").compute``;
``make_compute_metrics`` is the Trainer hook (``seed_variant_accuracy`` and ``compute_metrics_factory`` are their
former names). The variant generator (MERE) lives in ``kometrics.datasets_scripts.merge`` and is not imported here.
"""

from .inputs import DEFAULT_THRESHOLDS
from .plotting import plot_sv_curve
from .scoring import VERSION, matching_correctness, score, seed_variant_accuracy, signature, sv_pass_counts
from .trainer import compute_metrics_factory, flatten_result, make_compute_metrics

__all__ = [
    "DEFAULT_THRESHOLDS",
    "VERSION",
    "score",
    "seed_variant_accuracy",
    "signature",
    "sv_pass_counts",
    "matching_correctness",
    "make_compute_metrics",
    "compute_metrics_factory",
    "flatten_result",
    "plot_sv_curve",
]
