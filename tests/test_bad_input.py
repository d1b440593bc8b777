"""Every metric checks its inputs before evaluate's Arrow cast (issue 14).

evaluate casts a batch to the metric's Arrow schema before ``_compute`` sees it: a misplaced list or number
in a string column becomes a string ("['다 라']", "5"), and a float in an int column is truncated. Each
metric folder must refuse wrongly nested, mixed and non-string (non-number) inputs with an error that names
the argument and the index, both through ``compute`` and through ``add_batch``; and empty input gives the
same clear error on a fresh module and after earlier computes.
"""

from __future__ import annotations

import pytest

from .conftest import METRICS_DIR

# name -> (valid inputs, options, {case: (bad inputs (merged over the valid ones), error, pattern)})
CASES = {
    "klue_sts": (
        dict(predictions=[1.0, 2.0, 4.0], references=[1.5, 2.0, 3.5]), {},
        {"nested": (dict(predictions=[[1.0, 2.0], [3.0], [1.0]]), TypeError, r"predictions\[0\]"),
         "mixed": (dict(predictions=[1.0, "2.0", 4.0]), TypeError, r"predictions\[1\]"),
         "non-number": (dict(references=[1.5, None, 3.5]), TypeError, r"references\[1\]")}),
    "korbertscore": (
        dict(predictions=["오늘은 맑다.", "비가 온다."], references=["오늘은 맑다.", "비가 내린다."]),
        {"num_layers": 2},
        {"nested": (dict(references=[[["오늘은 맑다."]], "비가 내린다."]), TypeError, r"references\[0\]\[0\]"),
         "mixed": (dict(references=[["오늘은 맑다.", 5], "비가 내린다."]), TypeError, r"references\[0\]\[1\]"),
         "non-string": (dict(predictions=["오늘은 맑다.", 3]), TypeError, r"predictions\[1\]")}),
    "lmre": (
        dict(predictions=["가 / 나", "다 라"], references=[["가 나"], ["다 / 라"]]), {},
        {"nested": (dict(references=[[["가 나"]], ["다 / 라"]]), TypeError, r"references\[0\]\[0\]"),
         "mixed": (dict(references=[["가 나", 5], ["다 / 라"]]), TypeError, r"references\[0\]\[1\]"),
         "non-string": (dict(predictions=["가 / 나", None]), TypeError, r"predictions\[1\]")}),
    "merge_sv_accuracy": (
        dict(predictions=[0, 1, 0, 1], references=[0, 1, 1, 1], seed_ids=["a", "a", "b", "b"]), {},
        {"nested": (dict(predictions=[[0], [1], [0], [1]]), ValueError, r"predictions\[0\] is \[0\]"),
         "mixed": (dict(predictions=[0, True, 0, 1]), TypeError, r"predictions\[1\] is True"),
         "non-string": (dict(seed_ids=["a", 3, "b", "b"]), TypeError, r"seed_ids\[1\]")}),
    "perplexity": (
        dict(predictions=["오늘은 맑다.", "비가 온다."]), {},
        {"nested": (dict(predictions=[["오늘은 맑다."], "비가 온다."]), TypeError, r"predictions\[0\]"),
         "mixed": (dict(predictions=["오늘은 맑다.", 3]), TypeError, r"predictions\[1\]"),
         "non-string": (dict(predictions=[None, "비가 온다."]), TypeError, r"predictions\[0\]")}),
}
EMPTY = {"klue_sts": "empty", "korbertscore": "empty", "lmre": "empty", "merge_sv_accuracy": "no rows",
         "perplexity": "empty"}


def _options(name: str, tiny_bert: str, tiny_gpt2: str) -> dict:
    options = dict(CASES[name][1])
    if name == "korbertscore":
        options["model_type"] = tiny_bert
    if name == "perplexity":
        options["model_id"] = tiny_gpt2
    return options


def _load(name: str):
    import evaluate

    return evaluate.load(str(METRICS_DIR / name))


@pytest.mark.parametrize("name, case", [(n, c) for n in CASES for c in CASES[n][2]])
@pytest.mark.parametrize("how", ["compute", "add_batch"])
def test_bad_input_is_refused_before_the_arrow_cast(name, case, how):
    valid, _, bad = CASES[name]
    changes, error, pattern = bad[case]
    metric = _load(name)
    inputs = {**valid, **changes}
    with pytest.raises(error, match=pattern):
        # no model is needed: the inputs are refused before anything is stored or loaded
        if how == "compute":
            metric.compute(**inputs)
        else:
            metric.add_batch(**inputs)


@pytest.mark.parametrize("name", list(CASES))
def test_empty_input_same_error_fresh_and_after_a_compute(name, tiny_bert, tiny_gpt2):
    import warnings

    valid, _, _ = CASES[name]
    options = _options(name, tiny_bert, tiny_gpt2)
    empty = {k: [] for k in valid}
    metric = _load(name)
    with pytest.raises(ValueError, match=EMPTY[name]) as fresh:
        metric.compute(**empty, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert metric.compute(**valid, **options)
    with pytest.raises(ValueError, match=EMPTY[name]) as after:
        metric.compute(**empty, **options)
    assert str(after.value) == str(fresh.value)
    with pytest.raises(ValueError, match=EMPTY[name]):
        metric.add_batch(**empty)
        metric.compute(**options)
