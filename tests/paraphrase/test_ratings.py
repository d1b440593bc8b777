"""Per-rater z-scores, human scores and agreement, checked by hand and against published values."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from kometrics.datasets_scripts.paraphrase.ratings import (
    agreement,
    cohen_kappa,
    human_scores,
    krippendorff_alpha,
    mean_pairwise_correlation,
    rater_statistics,
    rater_z_scores,
    rating_matrix,
)

# Pair p1 rated by A, B, D; p2 by A, B, D; p3 by A and C.
IDS = [["A", "B", "D"], ["A", "B", "D"], ["A", "C"]]
VALS = [[1, 4, 3], [2, 6, 3], [3, 5]]
S = math.sqrt(2 / 3)  # population sd of A's ratings 1, 2, 3


def test_z_scores_by_hand_ddof0_drop():
    with pytest.warns(UserWarning, match=r"C \(n=1.*D \(n=2, sd=0"):
        z = rater_z_scores(IDS, VALS, ddof=0, degenerate="drop")
    # A: mean 2, sd sqrt(2/3); B: mean 5, sd 1; C (one rating) and D (zero variance) have no z.
    assert z[0][0] == pytest.approx(-1 / S) and z[1][0] == pytest.approx(0.0) and z[2][0] == pytest.approx(1 / S)
    assert z[0][1] == pytest.approx(-1.0) and z[1][1] == pytest.approx(1.0)
    assert math.isnan(z[0][2]) and math.isnan(z[1][2]) and math.isnan(z[2][1])
    h = human_scores(z)
    np.testing.assert_allclose(h, [(-1 / S - 1) / 2, (0 + 1) / 2, 1 / S])


def test_z_scores_ddof1_and_zero_policy():
    with pytest.warns(UserWarning, match="z = 0"):
        z = rater_z_scores(IDS, VALS, ddof=1, degenerate="zero")
    # ddof=1: A's sd is 1, B's sd is sqrt(2)
    assert [z[0][0], z[1][0], z[2][0]] == pytest.approx([-1.0, 0.0, 1.0])
    assert [z[0][1], z[1][1]] == pytest.approx([-1 / math.sqrt(2), 1 / math.sqrt(2)])
    assert z[0][2] == 0.0 and z[2][1] == 0.0
    np.testing.assert_allclose(human_scores(z), [(-1 - 1 / math.sqrt(2) + 0) / 3, (0 + 1 / math.sqrt(2)) / 3, 0.5])


def test_z_scores_match_scipy_zscore_per_rater():
    rng = np.random.default_rng(1)
    ids = [list(rng.choice(["r1", "r2", "r3", "r4"], size=3, replace=False)) for _ in range(30)]
    vals = [list(rng.integers(0, 7, size=3).astype(float)) for _ in range(30)]
    z = rater_z_scores(ids, vals)
    for rater in ("r1", "r2", "r3", "r4"):
        where = [(i, j) for i, row in enumerate(ids) for j, r in enumerate(row) if r == rater]
        x = np.array([vals[i][j] for i, j in where])
        np.testing.assert_allclose([z[i][j] for i, j in where], stats.zscore(x, ddof=0))


def test_degenerate_error_and_bad_inputs():
    with pytest.raises(ValueError, match="C .*degenerate='drop'"):
        rater_z_scores(IDS, VALS, degenerate="error")
    with pytest.raises(ValueError, match="degenerate must be"):
        rater_z_scores(IDS, VALS, degenerate="ignore")
    with pytest.raises(ValueError, match="pair 1: 2 rater ids but 3 ratings"):
        rater_z_scores([["A", "B"], ["A", "B"]], [[1, 2], [1, 2, 3]])
    with pytest.raises(ValueError, match="pair 0: rater ids repeat"):
        rater_z_scores([["A", "A"]], [[1, 2]])
    with pytest.raises(TypeError, match=r"ratings\[0\]\[1\] must be a number"):
        rater_z_scores([["A", "B"]], [[1, "2"]])


def test_pair_without_usable_rating_is_nan_with_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = rater_z_scores([["A"], ["A"], ["C"]], [[1.0], [2.0], [4.0]])
    with pytest.warns(UserWarning, match=r"no usable rating .*\['p3'\]"):
        h = human_scores(z, ids=["p1", "p2", "p3"])
    assert h[:2] == pytest.approx([-1.0, 1.0]) and math.isnan(h[2])


def test_rater_statistics():
    st = rater_statistics(IDS, VALS, ddof=1)
    assert st["A"].n == 3 and st["A"].mean == 2.0 and st["A"].sd == pytest.approx(1.0)
    assert st["C"].degenerate and st["D"].degenerate and not st["B"].degenerate


def test_cohen_kappa_by_hand():
    a = [0, 0, 1, 1, 2, 2]
    b = [0, 1, 1, 1, 2, 0]
    # p_o = 4/6, p_e = (2*2 + 2*3 + 2*1) / 36 = 1/3  ->  (2/3 - 1/3) / (2/3) = 0.5
    assert cohen_kappa(a, b) == pytest.approx(0.5)
    # quadratic weights: observed 5/6, expected 7/6  ->  1 - 5/7
    assert cohen_kappa(a, b, weights="quadratic") == pytest.approx(2 / 7)
    # linear weights: observed (1 + 2)/6 = 1/2, expected sum_ij pa_i pb_j |i-j| = (5/6 + 1/2 + 7/6)/3 = 5/6
    assert cohen_kappa(a, b, weights="linear") == pytest.approx(1 - 0.5 / (5 / 6))
    assert cohen_kappa(a, a) == pytest.approx(1.0)
    # unused scale points change nothing for unweighted kappa
    assert cohen_kappa(a, b, categories=range(7)) == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"a\[0\] = 9.0 is not one of the categories"):
        cohen_kappa([9, 1], [1, 1], categories=[0, 1])


def test_krippendorff_alpha_by_hand_and_published_example():
    # two raters, units (1, 1) and (2, 3): D_o = 1/4 * (0 + 2) = 0.5, D_e = 22 / 12 -> alpha = 8/11
    assert krippendorff_alpha(np.array([[1, 2], [1, 3]], float)) == pytest.approx(8 / 11)
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units, missing data;
    # published alpha: nominal 0.743, interval 0.849.
    nan = np.nan
    data = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
                     [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
                     [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
                     [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]])
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.849, abs=5e-4)
    assert krippendorff_alpha(data, "nominal") == pytest.approx(0.743, abs=5e-4)


def test_mean_pairwise_correlation_matches_scipy():
    m = np.array([[1, 2, 3, 4, np.nan], [2, 1, 4, 3, 5], [1, 3, 2, np.nan, 4]], float)
    expect = [stats.pearsonr([1, 2, 3, 4], [2, 1, 4, 3])[0], stats.pearsonr([1, 2, 3], [1, 3, 2])[0],
              stats.pearsonr([2, 1, 4, 5], [1, 3, 2, 4])[0]]
    mean, n = mean_pairwise_correlation(m)
    assert n == 3 and mean == pytest.approx(np.mean(expect))
    assert mean_pairwise_correlation(m, min_overlap=4) == (pytest.approx(np.mean([expect[0], expect[2]])), 2)


def test_agreement_two_raters_has_kappa_and_single_score_has_none():
    a = [0, 0, 1, 1, 2, 2]
    b = [0, 1, 1, 1, 2, 0]
    out = agreement([["r1", "r2"]] * 6, [[x, y] for x, y in zip(a, b)])
    assert out["cohen_kappa"] == pytest.approx(0.5) and out["cohen_kappa_quadratic"] == pytest.approx(2 / 7)
    raters, m = rating_matrix([["r1", "r2"]] * 6, [[x, y] for x, y in zip(a, b)])
    assert raters == ["r1", "r2"] and out["krippendorff_alpha_interval"] == pytest.approx(krippendorff_alpha(m))
    assert out["mean_pairwise_pearson"] == pytest.approx(stats.pearsonr(a, b)[0])
    single = agreement([["gold"]] * 3, [[1.0], [2.0], [3.0]])
    assert "note" in single and "cohen_kappa" not in single
    three = agreement([["a", "b", "c"]] * 4, [[1, 1, 2], [2, 2, 2], [3, 4, 3], [4, 4, 5]])
    assert "cohen_kappa" not in three and three["raters"] == 3
