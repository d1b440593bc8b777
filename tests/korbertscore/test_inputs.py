"""Bad input gives clear errors naming the argument and index; empty texts score 0 with a warning."""

from __future__ import annotations

import warnings

import pytest

from kometrics.korbertscore import score, score_layers


@pytest.mark.parametrize(
    "preds, refs, exc, pattern",
    [
        ("abc", ["abc"], TypeError, "predictions must be a list"),
        (["a"], "a", TypeError, "references must be a list"),
        (["a", "b"], ["a"], ValueError, "same length"),
        (["a", 3], ["a", "b"], TypeError, r"predictions\[1\]"),
        (["a", "b"], ["a", None], TypeError, r"references\[1\]"),
        (["a", "b"], [["a"], []], ValueError, r"references\[1\] is an empty list"),
        (["a", "b"], [["a"], ["b", 5]], TypeError, r"references\[1\]\[1\]"),
    ],
)
def test_bad_inputs(tiny_bert, preds, refs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        score(preds, refs, model_type=tiny_bert, num_layers=2)


@pytest.mark.parametrize(
    "kwargs, exc, pattern",
    [
        ({"num_layers": 13}, ValueError, "num_layers must lie in 0..12"),
        ({"num_layers": -1}, ValueError, "num_layers"),
        ({"num_layers": "8"}, TypeError, "num_layers"),
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"long_text": "drop"}, ValueError, "long_text"),
        ({"max_length": 4096}, ValueError, "max_length=4096 exceeds"),
        ({"dtype": "float8"}, ValueError, "dtype"),
        ({"idf": "yes"}, TypeError, "idf"),
        ({"idf": []}, ValueError, "idf"),
        ({"rescale_with_baseline": True}, ValueError, "baseline_path"),
    ],
)
def test_bad_options(tiny_bert, kwargs, exc, pattern):
    kw = {"num_layers": 2, **kwargs}
    with pytest.raises(exc, match=pattern):
        score(["가나다"], ["가나다라"], model_type=tiny_bert, **kw)


def test_bad_baseline_file(tiny_bert, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="LAYER,P,R,F"):
        score(["가"], ["나"], model_type=tiny_bert, num_layers=2, rescale_with_baseline=True, baseline_path=str(bad))
    short = tmp_path / "short.csv"
    short.write_text("LAYER,P,R,F\n0,0.5,0.5,0.5\n")
    with pytest.raises(ValueError, match="no row for layer 2"):
        score(["가"], ["나"], model_type=tiny_bert, num_layers=2, rescale_with_baseline=True, baseline_path=str(short))


def test_empty_texts_score_zero_with_a_warning(tiny_bert):
    preds = ["오늘은 맑다.", "", "   ", "내일 비가 온다."]
    refs = ["오늘은 맑다.", "무엇", "무엇", ""]
    with pytest.warns(UserWarning) as caught:
        res = score(preds, refs, model_type=tiny_bert, num_layers=4)
    msg = " ".join(str(w.message) for w in caught)
    assert "predictions[1]" in msg and "predictions[2]" in msg and "references[3]" in msg
    assert "predictions[0]" not in msg
    assert res["f1"][1:] == [0.0, 0.0, 0.0] and res["precision"][1:] == [0.0, 0.0, 0.0]
    assert abs(res["f1"][0] - 1.0) < 1e-6
    with pytest.warns(UserWarning, match=r"references\[0\]\[1\]"):
        multi = score(["오늘은 맑다."], [["오늘 맑음", ""]], model_type=tiny_bert, num_layers=4)
    assert multi["best_reference"] == [0] and multi["f1"][0] > 0
    with pytest.warns(UserWarning, match="predictions"):
        strict = score(["", "가"], ["가", "가"], model_type=tiny_bert, num_layers=4, exclude_special_tokens=True)
    assert strict["f1"][0] == 0.0


def test_score_layers_rejects_several_references(tiny_bert):
    with pytest.raises(ValueError, match="one reference"):
        score_layers(["a"], [["a", "b"]], tiny_bert)
    with pytest.raises(ValueError, match="layers must lie"):
        score_layers(["a"], ["b"], tiny_bert, layers=[13])


def test_empty_input_list(tiny_bert):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = score([], [], model_type=tiny_bert, num_layers=3)
    assert res["f1"] == [] and res["num_layers"] == 3
