"""merge_sv_accuracy: the vectorised math against a brute-force reimplementation, hand cases, evaluate face,
bad input."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from kometrics.bench.merge_sv_accuracy import brute_force_sv_accuracy, random_merge_set
from kometrics.merge_sv_accuracy import DEFAULT_THRESHOLDS, plot_sv_curve, seed_variant_accuracy

from ..conftest import METRICS_DIR


@pytest.fixture(scope="module")
def metric():
    import evaluate

    return evaluate.load(str(METRICS_DIR / "merge_sv_accuracy"))


def _random_rows(rng: random.Random, with_seeds: bool, with_classes: bool):
    preds, refs, ids, flags, classes = [], [], [], [], []
    for s in range(rng.randint(1, 25)):
        label = rng.randrange(3)
        n_var = rng.randint(0 if with_seeds else 1, 12)
        rows = ([True] if with_seeds else []) + [False] * n_var
        rng.shuffle(rows)
        for seed_row in rows:
            refs.append(label)
            preds.append(label if rng.random() < 0.7 else rng.randrange(3))
            ids.append(f"s{s}")
            flags.append(seed_row)
            classes.append("" if seed_row else rng.choice(["NOUN", "VERB", "ADJ", "ADV", ""]))
    if not any(not f for f in flags):  # at least one variant
        return _random_rows(rng, with_seeds, with_classes)
    order = list(range(len(ids)))
    rng.shuffle(order)
    pick = lambda xs: [xs[i] for i in order]  # noqa: E731
    return (pick(preds), pick(refs), pick(ids), pick(flags) if with_seeds else None,
            pick(classes) if with_classes else None)


@pytest.mark.parametrize("trial", range(60))
def test_matches_brute_force_on_random_data(trial):
    rng = random.Random(trial)
    with_seeds, with_classes = trial % 2 == 0, trial % 3 != 0
    preds, refs, ids, flags, classes = _random_rows(rng, with_seeds, with_classes)
    grids = [None, [0.15, 0.5, 1.0], list(np.arange(0.05, 1.01, 0.05)), [rng.randint(1, 12) / 12 for _ in range(1)],
             sorted({rng.randint(1, 7) / 7 for _ in range(5)})]
    cts = grids[trial % len(grids)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = seed_variant_accuracy(preds, refs, ids, is_seed=flags, word_classes=classes, thresholds=cts)
    want = brute_force_sv_accuracy(preds, refs, ids, is_seed=flags, word_classes=classes, thresholds=cts)
    for key, value in want.items():
        assert got[key] == value, key
    if not with_seeds:
        assert got["seed_accuracy"] is None and got["matching_correctness"] is None
    if not with_classes:
        assert got["sv_accuracy_by_word_class"] is None


def test_large_random_set_matches_brute_force():
    data = {k: v.tolist() for k, v in random_merge_set(20_000, variants_per_seed=6, seed=3).items()}
    got = seed_variant_accuracy(**data)
    want = brute_force_sv_accuracy(**data)
    for key, value in want.items():
        assert got[key] == value, key


def test_hand_computed_case():
    # seed a: right, 2/3 variants right; seed b: wrong, 1/2 right; seed c: right, 0/1 right.
    preds = [0, 0, 0, 1, 1, 2, 1, 1, 0]
    refs = [0, 0, 0, 0, 2, 2, 2, 1, 1]
    ids = ["a", "a", "a", "a", "b", "b", "b", "c", "c"]
    flags = [True, False, False, False, True, False, False, True, False]
    r = seed_variant_accuracy(preds, refs, ids, is_seed=flags, thresholds=[0.25, 0.5, 0.6, 2 / 3, 0.7, 1.0])
    assert r["accuracy"] == 3 / 6
    assert r["seed_accuracy"] == 2 / 3
    # shares 2/3, 1/2, 0 -> >= 0.25: a, b; >= 0.5: a, b (inclusive); >= 0.6: a; >= 2/3: a (inclusive); 0.7: none
    assert r["sv_accuracy"] == {0.25: 2 / 3, 0.5: 2 / 3, 0.6: 1 / 3, 2 / 3: 1 / 3, 0.7: 0.0, 1.0: 0.0}
    # |SV - 2/3| is 0 at 0.25 and 0.5: the tie goes to the higher CT
    assert r["matching_correctness"] == 0.5
    assert r["variant_accuracy_given_seed_correct"] == 2 / 4  # a: 2/3, c: 0/1
    assert r["variant_accuracy_given_seed_wrong"] == 1 / 2


def test_ct_015_is_exact():
    # 3 of 20 variants right: share 0.15 exactly; 0.15 * 20 == 3.0000000000000004 in floats.
    preds = [1] * 3 + [0] * 17
    ids = ["s"] * 20
    r = seed_variant_accuracy(preds, [1] * 20, ids, thresholds=np.arange(0.05, 1.01, 0.05))
    assert r["sv_accuracy"][0.15] == 1.0 and r["sv_accuracy"][0.2] == 0.0
    assert list(r["sv_accuracy"]) == list(DEFAULT_THRESHOLDS)
    # 7 of 20 right: 0.35 is the float 0.35 (not 0.35000000000000003) and passes
    r = seed_variant_accuracy([1] * 7 + [0] * 13, [1] * 20, ids)
    assert r["sv_accuracy"][0.35] == 1.0 and r["sv_accuracy"][0.4] == 0.0


def test_order_and_batching_invariance(metric):
    data = random_merge_set(3_000, variants_per_seed=5, seed=7)
    data = {k: v.tolist() for k, v in data.items()}
    whole = metric.compute(**data)
    perm = np.random.default_rng(0).permutation(len(data["predictions"]))
    for start in range(0, len(perm), 700):
        idx = perm[start:start + 700]
        metric.add_batch(**{k: [v[i] for i in idx] for k, v in data.items()})
    batched = metric.compute()
    assert batched == whole
    assert whole == seed_variant_accuracy(**data)


@pytest.mark.parametrize("optional", [(), ("is_seed",), ("word_classes",), ("is_seed", "word_classes")])
def test_evaluate_with_and_without_optional_inputs(metric, optional):
    data = {k: v.tolist() for k, v in random_merge_set(400, variants_per_seed=4, seed=2).items()}
    if "is_seed" not in optional:  # without seed flags every row is a variant
        data["word_classes"] = ["NOUN" if c == "" else c for c in data["word_classes"]]
    inputs = {k: data[k] for k in ("predictions", "references", "seed_ids", *optional)}
    got = metric.compute(**inputs, thresholds=[0.5, 1.0])
    want = seed_variant_accuracy(**inputs, thresholds=[0.5, 1.0])
    assert got == want
    assert (got["matching_correctness"] is None) == ("is_seed" not in optional)
    assert (got["sv_accuracy_by_word_class"] is None) == ("word_classes" not in optional)


def test_add_single_rows(metric):
    rows = [(0, 0, "a", True), (0, 0, "a", False), (1, 0, "a", False), (2, 2, "b", True), (2, 2, "b", False)]
    for p, r, s, f in rows:
        metric.add(prediction=p, reference=r, seed_ids=s, is_seed=f)
    out = metric.compute(thresholds=[0.5, 1.0])
    assert out["sv_accuracy"] == {0.5: 1.0, 1.0: 0.5}
    assert out["seed_accuracy"] == 1.0


def test_seed_without_variants_is_counted_and_warned():
    with pytest.warns(UserWarning, match="1 seed.*no variant.*'z'"):
        r = seed_variant_accuracy([0, 0, 1], [0, 0, 1], ["a", "a", "z"], is_seed=[True, False, True])
    assert r["n_seeds_without_variants"] == 1 and r["n_seeds"] == 1
    assert r["seed_accuracy"] == 1.0 and r["seed_accuracy_with_variants"] == 1.0


def test_variant_without_word_class_is_counted():
    with pytest.warns(UserWarning, match="no word class"):
        r = seed_variant_accuracy([0, 0, 0], [0, 0, 1], ["a", "a", "a"], word_classes=["NOUN", "", "VERB"],
                                  thresholds=[1.0])
    assert r["n_variants_without_word_class"] == 1
    assert r["sv_accuracy_by_word_class"] == {"NOUN": {1.0: 1.0}, "VERB": {1.0: 0.0}}


def test_label_mismatch_warns():
    with pytest.warns(UserWarning, match="different from their seed"):
        seed_variant_accuracy([0, 0], [0, 1], ["a", "a"], is_seed=[True, False])


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(predictions=[0, 1.5]), TypeError, r"predictions\[1\] is 1.5"),
    (dict(predictions=[0, "entailment"]), TypeError, r"predictions\[1\]"),
    (dict(references=[True, False]), TypeError, r"references\[0\]"),
    (dict(predictions=[0, True]), TypeError, r"predictions\[1\] is True \(bool\)"),  # numpy would read 1
    (dict(predictions=[[0], [1]]), ValueError, r"predictions\[0\] is \[0\]"),
    (dict(references=[0, -1]), ValueError, r"references\[1\] is -1"),
    (dict(predictions=[0, 1, 2]), ValueError, "differ in length"),
    (dict(seed_ids=["a", 3]), TypeError, r"seed_ids\[1\]"),
    (dict(seed_ids=["a", ""]), ValueError, r"seed_ids\[1\] is an empty string"),
    (dict(is_seed=[True, True]), ValueError, "no variant rows"),
    (dict(is_seed=[True, "no"]), TypeError, r"is_seed\[1\]"),
    (dict(word_classes=["NOUN", None]), TypeError, r"word_classes\[1\]"),
    (dict(thresholds=[0.0, 0.5]), ValueError, r"thresholds\[0\].*\(0, 1\]"),
    (dict(thresholds=[1.2]), ValueError, r"thresholds\[0\]"),
    (dict(thresholds=[0.5, 0.5]), ValueError, "duplicate"),
    (dict(thresholds=[float("nan")]), ValueError, r"thresholds\[0\]"),
    (dict(thresholds=[]), ValueError, "empty"),
    (dict(predictions=[], references=[], seed_ids=[]), ValueError, "no rows"),
])
def test_bad_input(kwargs, error, match):
    base = dict(predictions=[0, 1], references=[0, 1], seed_ids=["a", "a"])
    with pytest.raises(error, match=match):
        seed_variant_accuracy(**{**base, **kwargs})


def test_duplicate_seed_row_and_orphan_variants():
    with pytest.raises(ValueError, match=r"is_seed\[2\] marks a second seed row.*first is row 0"):
        seed_variant_accuracy([0] * 3, [0] * 3, ["a"] * 3, is_seed=[True, False, True])
    with pytest.raises(ValueError, match=r"seed_ids\[2\]='b' has variant rows but no seed row"):
        seed_variant_accuracy([0] * 3, [0] * 3, ["a", "a", "b"], is_seed=[True, False, False])


def test_evaluate_refuses_what_datasets_would_cast(metric):
    with pytest.raises(TypeError, match=r"predictions\[0\] is True \(bool\)"):  # issue 14: bools among ints
        metric.compute(predictions=[True, 0, 0, 1], references=[1, 0, 0, 1], seed_ids=list("aabb"))
    with pytest.raises(TypeError, match=r"references\[2\] is 2.0"):
        metric.compute(predictions=[0, 1, 2], references=[0, 1, 2.0], seed_ids=["a"] * 3)
    metric.add_batch(predictions=[0], references=[0], seed_ids=["a"], is_seed=[True])
    metric.add_batch(predictions=[0], references=[0], seed_ids=["a"])  # is_seed missing in this batch
    with pytest.raises(ValueError, match="give is_seed for every batch or for none"):
        metric.compute()


def test_plot_sv_curve_draws_curve_seed_line_and_mc():
    from matplotlib.figure import Figure

    r = seed_variant_accuracy([0, 0, 1, 2, 2], [0, 0, 0, 2, 2], list("aaabb"), is_seed=[1, 0, 0, 1, 0],
                              word_classes=["", "NOUN", "VERB", "", "NOUN"], thresholds=[0.5, 1.0])
    fig = plot_sv_curve(r)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert any(lab.startswith("SV accuracy") for lab in labels)
    assert "MC = 0.50" in labels and any(lab.startswith("seed accuracy") for lab in labels)
    assert {"SV: NOUN", "SV: VERB"} <= set(labels)
    main = next(line for line in ax.get_lines() if line.get_label().startswith("SV accuracy"))
    assert list(main.get_ydata()) == [1.0, 0.5]
    with pytest.raises(ValueError, match="sv_accuracy"):
        plot_sv_curve({})


def test_metric_folder_does_not_import_the_generator(tmp_path):
    """evaluate.load + compute on a copy of the folder pulls in neither kiwipiepy nor the generator."""
    import shutil
    import subprocess
    import sys

    folder = tmp_path / "merge_sv_accuracy"
    shutil.copytree(METRICS_DIR / "merge_sv_accuracy", folder, ignore=shutil.ignore_patterns("__pycache__"))
    code = (f"import evaluate, sys\nm = evaluate.load({str(folder)!r})\n"
            "m.compute(predictions=[0, 1], references=[0, 1], seed_ids=['a', 'a'])\n"
            "print(sorted(k for k in sys.modules if k.startswith(('kiwipiepy', 'kometrics.datasets_scripts'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env={**__import__("os").environ, "HF_EVALUATE_OFFLINE": "1"}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
