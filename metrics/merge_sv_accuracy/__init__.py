"""MERGE seed-variant accuracy for NLI (library API).

>>> from kometrics.merge_sv_accuracy import seed_variant_accuracy
>>> r = seed_variant_accuracy([0, 0, 1], [0, 0, 0], ["a", "a", "a"], is_seed=[True, False, False],
...                           thresholds=[0.5, 1.0])
>>> r["sv_accuracy"], r["matching_correctness"]
({0.5: 1.0, 1.0: 0.0}, 0.5)

The variant generator (MERE) lives in ``kometrics.datasets_scripts.merge`` and is not imported here.
"""

from .inputs import DEFAULT_THRESHOLDS
from .plotting import plot_sv_curve
from .scoring import matching_correctness, seed_variant_accuracy, sv_pass_counts
from .trainer import compute_metrics_factory, flatten_result

__all__ = [
    "DEFAULT_THRESHOLDS",
    "seed_variant_accuracy",
    "sv_pass_counts",
    "matching_correctness",
    "compute_metrics_factory",
    "flatten_result",
    "plot_sv_curve",
]
