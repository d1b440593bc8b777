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


# --- issue 14 -----------------------------------------------------------------------------------------------

def test_nfd_text_scores_as_nfc(tiny_bert, korsts_pairs):
    import unicodedata

    from kometrics.korbertscore import similarity_matrix

    cands, refs, _ = korsts_pairs
    nfd_c = [unicodedata.normalize("NFD", c) for c in cands[:6]]
    nfd_r = [unicodedata.normalize("NFD", r) for r in refs[:6]]
    want = score(cands[:6], refs[:6], model_type=tiny_bert, num_layers=4, idf=True)
    assert score(nfd_c, nfd_r, model_type=tiny_bert, num_layers=4, idf=True) == want
    assert score(nfd_c, refs[:6], model_type=tiny_bert, num_layers=4, idf=True) == want
    raw = score(nfd_c, refs[:6], model_type=tiny_bert, num_layers=4, idf=True, normalize=None)
    assert raw["f1"] != want["f1"] and raw["hashcode"] == want["hashcode"] + "_no-normalize"
    a = similarity_matrix(nfd_c[0], refs[0], model_type=tiny_bert, num_layers=4)
    b = similarity_matrix(cands[0], refs[0], model_type=tiny_bert, num_layers=4)
    assert a["candidate_tokens"] == b["candidate_tokens"] and a["f1"] == b["f1"]
    with pytest.raises(ValueError, match="normalize must be one of"):
        score(cands[:1], refs[:1], model_type=tiny_bert, normalize="NFD")


def test_invisible_only_texts_are_empty_texts(tiny_bert):
    preds = ["\u200b\u200b", "\ufeff", "\x00\x01", "오늘은 맑다."]
    refs = ["오늘은 맑다.", "오늘은 맑다.", "오늘은 맑다.", "\u2060\u200d"]
    with pytest.warns(UserWarning) as caught:
        res = score(preds, refs, model_type=tiny_bert, num_layers=4)
    msg = " ".join(str(w.message) for w in caught)
    for where in ("predictions[0]", "predictions[1]", "predictions[2]", "references[3]"):
        assert where in msg
    assert res["f1"] == [0.0] * 4


def test_evaluate_reads_misshaped_references_as_the_library_or_refuses_them(tiny_bert):
    import evaluate

    from ..conftest import METRICS_DIR

    metric = evaluate.load(str(METRICS_DIR / "korbertscore"))
    preds, refs = ["가 나", "다 라"], ["가 나", ["다 라", "마 바"]]
    got = metric.compute(predictions=preds, references=refs, model_type=tiny_bert, num_layers=4)
    assert got == score(preds, refs, model_type=tiny_bert, num_layers=4)
    assert abs(got["f1"][1] - 1.0) < 1e-6  # scored against "다 라", not against the string "['다 라', '마 바']"
    with pytest.raises(TypeError, match=r"references\[0\]\[0\] must be a string, got list"):
        metric.compute(predictions=["r"], references=[[["r"]]], model_type=tiny_bert)
    with pytest.raises(TypeError, match=r"references\[0\]\[1\] must be a string, got int"):
        metric.compute(predictions=["가나다"], references=[["가나다", 5]], model_type=tiny_bert)
    metric.add_batch(predictions=["가 나"], references=["가 나"])
    with pytest.raises(ValueError, match=r"references\[0\] is a list, but an earlier batch"):
        metric.add_batch(predictions=["가 나"], references=[["가 나"]])
    metric.compute(model_type=tiny_bert, num_layers=4)
