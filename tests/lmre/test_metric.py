"""The evaluate module: loads from its folder, gives the library's result, takes both reference shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kometrics.lmre import score

FOLDER = Path(__file__).resolve().parents[2] / "metrics" / "lmre"


@pytest.fixture(scope="module")
def lmre():
    import evaluate

    return evaluate.load(str(FOLDER))


def test_compute_equals_library(lmre):
    preds = ["나는 / 밥을 먹고 // 학교에 갔다", "비가 / 온다", "한 / 두 세 // 네"]
    refs = [["나는 밥을 / 먹고 학교에 갔다", "나는 / 밥을 먹고 / 학교에 갔다"], ["비가 온다"], ["한 두 / 세 네"]]
    for opts in ({}, {"similarity": "em"}, {"break_types": "typed", "theta": 0.2}):
        assert lmre.compute(predictions=preds, references=refs, **opts) == score(preds, refs, **opts)


def test_single_string_references(lmre):
    r = lmre.compute(predictions=["가 / 나", "다 라"], references=["가 / 나", "다 / 라"])
    assert r["accepted"] == [True, False] and r["num_references"] == [1, 1]


def test_add_batch_then_compute(lmre):
    lmre.add_batch(predictions=["가 / 나"], references=[["가 나", "가 / 나"]])
    lmre.add_batch(predictions=["다 라"], references=[["다 / 라"]])
    r = lmre.compute(similarity="em")
    assert r["accepted"] == [True, False] and r["best_reference_index"] == [1, 0]


def test_errors_reach_the_user(lmre):
    with pytest.raises(ValueError, match=r"references\[0\]\[0\] is not an annotation"):
        lmre.compute(predictions=["가 / 나"], references=[["가 / 다"]])
    with pytest.raises(ValueError, match="theta must be"):
        lmre.compute(predictions=["가 / 나"], references=[["가 / 나"]], theta=1)


def test_explain_method(lmre):
    e = lmre.explain("가 / 나 다", ["가 나 / 다"], similarity="em")
    assert not e["accepted"] and e["references"][0]["extra"] == ["boundary after word 1 '가'"]


# --- issue 14 -----------------------------------------------------------------------------------------------

def test_nfd_annotations_score_as_nfc(lmre):
    import unicodedata

    preds = ["나는 / 밥을 먹고 // 학교에 갔다", "비가 / 온다"]
    refs = [["나는 밥을 / 먹고 학교에 갔다", "나는 / 밥을 먹고 / 학교에 갔다"], ["비가 온다"]]
    nfd_preds = [unicodedata.normalize("NFD", p) for p in preds]
    want = lmre.compute(predictions=preds, references=refs)
    assert "|norm:NFC|version:" in want["signature"]
    # a prediction typed in decomposed jamo against NFC references (and the other way round)
    assert lmre.compute(predictions=nfd_preds, references=refs) == want
    assert score(preds, [[unicodedata.normalize("NFD", r) for r in g] for g in refs]) == want
    # turned off, the words differ, and the error says why instead of printing two identical-looking words
    with pytest.raises(ValueError, match=r"word 0: '\\ub098\\ub294' instead of '\\u1102.*NFD vs NFC"):
        lmre.compute(predictions=nfd_preds, references=refs, normalize=None)
    assert "|norm:none|version:" in score(preds, refs, normalize=None)["signature"]


@pytest.mark.parametrize("invisible", ["\u200b", "\ufeff\u200b", "\x00", " \u2028 "])
def test_invisible_only_annotation_is_empty(lmre, invisible):
    with pytest.raises(ValueError, match=r"predictions\[1\] is empty"):
        lmre.compute(predictions=["가 / 나", invisible], references=[["가 / 나"], ["가 나"]])
    with pytest.raises(ValueError, match=r"references\[0\]\[1\] is empty"):
        score(["가 / 나"], [["가 / 나", invisible]])


@pytest.mark.parametrize("theta, reason", [(-0.1, "negative theta would accept every prediction"),
                                           (1.0, "theta >= 1 would accept nothing"),
                                           (float("nan"), "theta is NaN"),
                                           ("0.5", "theta must be a number")])
def test_theta_errors_give_the_right_reason(lmre, theta, reason):
    with pytest.raises(ValueError, match=reason):
        lmre.compute(predictions=["가 / 나"], references=[["가 / 나"]], theta=theta)


def test_mixed_reference_shapes_read_as_the_library_does(lmre):
    preds, refs = ["가 / 나", "다 라"], ["가 / 나", ["다 / 라", "다 라"]]
    assert lmre.compute(predictions=preds, references=refs) == score(preds, refs)
    lmre.add_batch(predictions=["가 / 나"], references=["가 / 나"])
    with pytest.raises(ValueError, match=r"references\[0\] is a list, but an earlier batch"):
        lmre.add_batch(predictions=["가 / 나"], references=[["가 / 나"]])
    lmre.compute()  # the first batch is still there
