"""KLUE-STS against independent references on the real dev set, bad input, add_batch, intervals, CLI, data."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from kometrics.datasets_scripts.readers import read_klue_sts


@pytest.fixture(scope="module")
def metric():
    import evaluate

    from tests.conftest import METRICS_DIR

    return evaluate.load(str(METRICS_DIR / "klue_sts"))


@pytest.fixture(scope="module")
def dev(data_dir):
    records = read_klue_sts(data_dir)
    gold = np.array([r["labels"]["real-label"] for r in records], dtype=np.float64)
    noisy = gold + np.random.default_rng(42).normal(0.0, 0.8, len(gold))
    return records, gold, noisy


def hand_f1(pred: np.ndarray, gold: np.ndarray, threshold: float = 3.0) -> float:
    tp = fp = fn = 0
    for p, g in zip(pred, gold):
        tp += p >= threshold and g >= threshold
        fp += p >= threshold and g < threshold
        fn += p < threshold and g >= threshold
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    return 2 * precision * recall / (precision + recall)


def hand_pearson(x: np.ndarray, y: np.ndarray) -> float:
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(x, y))
    return cov / math.sqrt(sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))


def test_dev_set_facts(dev):
    records, gold, _ = dev
    assert len(records) == 519
    assert int((gold >= 3.0).sum()) == 220 == sum(r["labels"]["binary-label"] for r in records)


def test_equals_independent_computation_on_real_dev_pairs(metric, dev):
    _, gold, noisy = dev
    result = metric.compute(predictions=noisy.tolist(), references=gold.tolist())
    assert set(result) == {"pearson", "spearmanr", "f1", "signature"}
    assert result["signature"] == "klue_sts|threshold:3|ci:none|version:0.1.0"
    assert abs(result["pearson"] - stats.pearsonr(noisy, gold)[0]) < 1e-12
    assert abs(result["pearson"] - hand_pearson(noisy, gold)) < 1e-12
    assert abs(result["spearmanr"] - stats.spearmanr(noisy, gold)[0]) < 1e-12
    assert abs(result["f1"] - hand_f1(noisy, gold)) < 1e-12
    assert all(isinstance(result[k], float) for k in ("pearson", "spearmanr", "f1"))


def test_official_baseline_formula_x100(metric, dev):
    """The official code reports pearsonr*100 and sklearn binary F1*100 at >= 3 (here: the same /100)."""
    _, gold, noisy = dev
    result = metric.compute(predictions=noisy, references=gold)
    official_pearson = stats.pearsonr(noisy, gold)[0] * 100.0
    official_f1 = hand_f1(noisy, gold) * 100.0
    assert abs(result["pearson"] * 100 - official_pearson) < 1e-10
    assert abs(result["f1"] * 100 - official_f1) < 1e-10


def test_float64_is_kept(metric):
    # Values that float32 would change: the result must be the float64 computation.
    preds = [1.0 + 1e-9, 2.0, 3.0 + 3e-9, 4.0]
    refs = [1.0, 2.0 + 2e-9, 3.0, 4.0 - 1e-9]
    assert metric.compute(predictions=preds, references=refs)["pearson"] == pytest.approx(
        stats.pearsonr(np.array(preds), np.array(refs))[0], abs=1e-15)


def test_add_batch_equals_one_call(metric, dev):
    _, gold, noisy = dev
    whole = metric.compute(predictions=noisy, references=gold)
    for start in range(0, len(gold), 100):
        metric.add_batch(predictions=noisy[start:start + 100].tolist(), references=gold[start:start + 100].tolist())
    assert metric.compute() == whole
    for p, g in zip(noisy[:50], gold[:50]):
        metric.add(prediction=float(p), reference=float(g))
    assert metric.compute()["pearson"] == pytest.approx(stats.pearsonr(noisy[:50], gold[:50])[0], abs=1e-12)


def test_threshold_is_inclusive_and_configurable(metric):
    result = metric.compute(predictions=[3.0, 2.99, 4.0], references=[3.0, 3.0, 1.0])
    assert result["f1"] == hand_f1(np.array([3.0, 2.99, 4.0]), np.array([3.0, 3.0, 1.0]))
    result = metric.compute(predictions=[3.0, 2.99, 4.0], references=[3.0, 3.0, 1.0], threshold=2.5)
    assert result["f1"] == pytest.approx(hand_f1(np.array([3.0, 2.99, 4.0]), np.array([3.0, 3.0, 1.0]), 2.5))


def test_regression_head_shape_n_by_1(metric, dev):
    _, gold, noisy = dev
    assert metric.compute(predictions=noisy[:, None], references=gold) == metric.compute(predictions=noisy,
                                                                                          references=gold)


@pytest.mark.parametrize(
    "predictions, references, error, message",
    [
        ([1.0, 2.0], [1.0], ValueError, "differ in length: 2 != 1"),
        ([], [], ValueError, "empty"),
        ([1.0, float("nan"), 3.0], [1.0, 2.0, 3.0], ValueError, r"predictions\[1\] is nan"),
        ([1.0, 2.0, 3.0], [1.0, 2.0, float("inf")], ValueError, r"references\[2\] is inf"),
        ([1.0, "3.5", 3.0], [1.0, 2.0, 3.0], TypeError, r"predictions\[1\] is '3.5'"),
        ([1.0, None, 3.0], [1.0, 2.0, 3.0], TypeError, r"predictions\[1\] is None"),
        ([1.0, 2.0, True], [1.0, 2.0, 3.0], TypeError, r"predictions\[2\] is True"),
    ],
)
def test_bad_input_names_the_problem_and_index(metric, predictions, references, error, message):
    with pytest.raises(error, match=message):
        metric.compute(predictions=predictions, references=references)


def test_constant_predictions_give_nan_with_a_warning(metric):
    with pytest.warns(RuntimeWarning, match="predictions are constant"):
        result = metric.compute(predictions=[2.0, 2.0, 2.0], references=[1.0, 2.0, 4.0])
    assert math.isnan(result["pearson"]) and math.isnan(result["spearmanr"])
    assert result["f1"] == 0.0  # no predicted positive, one reference positive: TP = 0


def test_bootstrap_intervals(metric, dev):
    _, gold, noisy = dev
    a = metric.compute(predictions=noisy, references=gold, confidence_level=0.95, n_resamples=300, seed=7)
    b = metric.compute(predictions=noisy, references=gold, confidence_level=0.95, n_resamples=300, seed=7)
    c = metric.compute(predictions=noisy, references=gold, confidence_level=0.95, n_resamples=300, seed=8)
    assert a == b and a != c  # seeded
    for key in ("pearson", "spearmanr", "f1"):
        low, high = a[f"{key}_ci"]
        assert low < a[key] < high
    # Independent check: a percentile interval from our own resampling loop agrees with scipy's percentile CI.
    rng = np.random.default_rng(0)
    boot = []
    for _ in range(2000):
        idx = rng.integers(0, len(gold), len(gold))
        boot.append(stats.pearsonr(noisy[idx], gold[idx])[0])
    lo, hi = np.percentile(boot, [2.5, 97.5])
    d = metric.compute(predictions=noisy, references=gold, confidence_level=0.95, n_resamples=2000,
                       ci_method="percentile")
    assert d["pearson_ci"][0] == pytest.approx(lo, abs=0.01) and d["pearson_ci"][1] == pytest.approx(hi, abs=0.01)
    # A 99% interval contains the 90% interval.
    wide = metric.compute(predictions=noisy, references=gold, confidence_level=0.99, n_resamples=300, seed=7)
    narrow = metric.compute(predictions=noisy, references=gold, confidence_level=0.90, n_resamples=300, seed=7)
    assert wide["pearson_ci"][0] < narrow["pearson_ci"][0] < narrow["pearson_ci"][1] < wide["pearson_ci"][1]
    with pytest.raises(ValueError, match="confidence_level"):
        metric.compute(predictions=noisy, references=gold, confidence_level=95)


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_bootstrap_intervals_equal_scipys_bootstrap_of_independent_statistics(metric, dev, method):
    """The module's intervals of all three statistics against ``scipy.stats.bootstrap`` called here with the
    same resamples (same seed and count) and statistics written here from their definitions, one resample at
    a time: Pearson and Spearman by scipy.stats, F1 by counting at the inclusive threshold ``>= 3.0``.
    Predictions are rounded to 0.1 so that some of them, and some gold labels, lie exactly on 3.0."""
    _, gold, noisy = dev
    pred = np.round(noisy, 1)
    assert (pred == 3.0).sum() > 0 and (gold == 3.0).sum() > 0

    def f1_at_3(x, y):
        p, g = np.asarray(x) >= 3.0, np.asarray(y) >= 3.0
        tp, fp, fn = np.count_nonzero(p & g), np.count_nonzero(p & ~g), np.count_nonzero(~p & g)
        return 2 * tp / (2 * tp + fp + fn)

    statistics = {"pearson": lambda x, y: stats.pearsonr(x, y).statistic,
                  "spearmanr": lambda x, y: stats.spearmanr(x, y).statistic, "f1": f1_at_3}
    got = metric.compute(predictions=pred, references=gold, confidence_level=0.95, n_resamples=500, seed=7,
                         ci_method=method)
    for key, statistic in statistics.items():
        res = stats.bootstrap((pred, gold), statistic, paired=True, vectorized=False, n_resamples=500,
                              confidence_level=0.95, method=method, rng=np.random.default_rng(7))
        want = [res.confidence_interval.low, res.confidence_interval.high]
        assert np.isfinite(want).all() and want[0] < want[1]
        assert got[f"{key}_ci"] == pytest.approx(want, abs=1e-12), key


def test_undefined_interval_on_few_pairs_warns(metric):
    # 4 pairs: some resamples repeat one pair only, where Pearson and Spearman are undefined
    with pytest.warns(RuntimeWarning, match=r"bootstrap interval of pearson is NaN: on 4 pairs, \d+ of 1000"):
        r = metric.compute(predictions=[1.0, 2.0, 3.0, 4.0], references=[1.0, 3.0, 2.0, 4.0], confidence_level=0.95)
    assert all(math.isnan(x) for x in r["pearson_ci"]) and r["pearson"] == pytest.approx(0.8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a defined interval warns nothing
        r = metric.compute(predictions=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0] * 5, references=[1.0, 3.0, 2.0, 4.0, 6.0, 5.0] * 5,
                           confidence_level=0.9, n_resamples=200, ci_method="percentile")
    assert r["pearson_ci"][0] < r["pearson"] < r["pearson_ci"][1]


def test_library_call_equals_module(metric, dev):
    from kometrics.klue_sts import klue_sts_scores

    _, gold, noisy = dev
    assert klue_sts_scores(noisy, gold) == metric.compute(predictions=noisy, references=gold)


def test_cli_score_prints_json(tmp_path, dev, capsys):
    from kometrics.cli import main
    from kometrics.klue_sts import klue_sts_scores

    _, gold, noisy = dev
    (tmp_path / "p.txt").write_text("\n".join(map(repr, noisy.tolist())) + "\n", encoding="utf-8")
    (tmp_path / "r.jsonl").write_text("\n".join(json.dumps({"reference": g}) for g in gold.tolist()) + "\n",
                                      encoding="utf-8")
    assert main(["score", "klue_sts", "--predictions", str(tmp_path / "p.txt"), "--references",
                 str(tmp_path / "r.jsonl"), "--threshold", "3.5"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == pytest.approx(klue_sts_scores(noisy, gold, threshold=3.5))


def test_dataset_folder_loads_with_hf_schema(tmp_path, data_dir):
    import datasets

    from kometrics.datasets_scripts.klue_sts.build import build

    out = build(data_dir / "klue", tmp_path / "klue_sts")
    ds = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))["validation"]
    assert ds.num_rows == 519
    labels = ds.features["labels"]
    assert labels["label"] == datasets.Value("float64") and labels["real-label"] == datasets.Value("float64")
    assert labels["binary-label"].names == ["negative", "positive"]
    assert sum(row["labels"]["binary-label"] for row in ds) == 220
    raw = read_klue_sts(data_dir)
    assert [r["guid"] for r in raw] == ds["guid"]
    assert ds[0]["labels"]["real-label"] == raw[0]["labels"]["real-label"]


def test_demo_section_runs_on_real_data(data_dir):
    from kometrics.demo import DemoContext
    from kometrics.demo.klue_sts import run

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        section = run(DemoContext(data_dir=data_dir))
    assert "519 real pairs" in section.title
    overlap = section.results["character-bigram overlap (no model)"]
    assert 0.0 < overlap["pearson"] < 1.0 and overlap["pearson_ci"][0] < overlap["pearson"]


def test_cli_builds_the_dataset_folder(tmp_path, data_dir, capsys):
    import datasets

    from kometrics.cli import main

    assert main(["klue_sts", "build", "--source", str(data_dir / "klue"), "--out", str(tmp_path / "ds")]) == 0
    assert "validation.jsonl" in capsys.readouterr().out
    assert datasets.load_dataset(str(tmp_path / "ds"), cache_dir=str(tmp_path / "cache"))["validation"].num_rows == 519
