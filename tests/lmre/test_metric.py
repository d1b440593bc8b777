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
