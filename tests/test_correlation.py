"""One correlation helper and one bootstrap: klue_sts's scores and intervals, lmre's correlate_with_human and
the paraphrase experiment (kometrics.bench.paraphrase.correlation) give the same numbers and the same warnings.

kometrics.klue_sts.correlation is the helper; lmre ships alone, so it carries a byte-identical copy."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from kometrics.bench.paraphrase.correlation import correlate
from kometrics.klue_sts import bootstrap_intervals, klue_sts_scores
from kometrics.lmre import correlate_with_human

from .conftest import METRICS_DIR


def _data(seed: int, n: int = 80):
    rng = np.random.default_rng(seed)
    human = rng.uniform(0, 5, size=n)
    metric = np.clip(human + rng.normal(scale=1.2, size=n), 0, 5)
    metric[:6] = metric[6]  # ties
    return metric, human


def test_the_lmre_copy_is_identical():
    assert (METRICS_DIR / "lmre" / "correlation.py").read_bytes() == \
        (METRICS_DIR / "klue_sts" / "correlation.py").read_bytes()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_klue_sts_lmre_and_the_experiment_agree(seed):
    metric, human = _data(seed)
    experiment = correlate(metric, human, n_resamples=200, seed=seed)
    sts = klue_sts_scores(metric, human)
    lmre = correlate_with_human(metric.tolist(), human.tolist())
    assert sts["pearson"] == lmre["pearson"] == experiment["pearson"] == stats.pearsonr(metric, human).statistic
    assert sts["spearmanr"] == lmre["spearman"] == experiment["spearman"] == \
        stats.spearmanr(metric, human).statistic
    assert lmre["pearson_pvalue"] == stats.pearsonr(metric, human).pvalue
    # the same bootstrap: klue_sts's percentile intervals are the experiment's on the same seed
    ci = bootstrap_intervals(metric, human, confidence_level=0.95, n_resamples=200, seed=seed, method="percentile")
    assert ci["pearson"] == experiment["pearson_ci"] and ci["spearmanr"] == experiment["spearman_ci"]


@pytest.mark.parametrize("x, y, reason", [
    ([2.0, 2.0, 2.0], [1.0, 2.0, 4.0], "are constant (all 2), so their variance is zero"),
    ([1.0, 2.0, 4.0], [3.0, 3.0, 3.0], "are constant (all 3), so their variance is zero"),
    ([1.0], [2.0], "fewer than two pairs (1)"),
])
def test_one_policy_for_undefined_correlations(x, y, reason):
    """NaN, and a RuntimeWarning that says why, from all three."""
    calls = {
        "klue_sts": lambda: [klue_sts_scores(x, y)[k] for k in ("pearson", "spearmanr")],
        "lmre": lambda: [correlate_with_human(x, y)[k] for k in ("pearson", "spearman")],
        "experiment": lambda: [correlate(np.array(x), np.array(y), n_resamples=10)[k] for k in ("pearson", "spearman")],
    }
    for name, call in calls.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            values = call()
        assert all(math.isnan(v) for v in values), name
        messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        for method in ("Pearson r", "Spearman rho"):
            assert any(m.startswith(f"{method} is undefined (") and reason in m for m in messages), (name, messages)


def test_two_pairs_are_a_perfect_correlation_everywhere():
    assert correlate_with_human([0.1, 0.9], [1, 5])["pearson"] == pytest.approx(1.0)
    assert correlate(np.array([0.1, 0.9]), np.array([1.0, 5.0]), n_resamples=10)["pearson"] == pytest.approx(1.0)


def test_bca_falls_back_to_percentile_with_a_warning_naming_the_statistic():
    """Perfectly separated binary data: every resample has F1 = 1, BCa is undefined."""
    preds, refs = [4.0, 4.5, 1.0, 0.5, 4.2, 0.2], [4.4, 4.0, 0.6, 1.0, 3.5, 0.1]
    with pytest.warns(RuntimeWarning, match="the BCa interval of f1 is undefined"):
        ci = bootstrap_intervals(preds, refs, n_resamples=100, seed=0)
    assert ci["f1"] == [1.0, 1.0]
