"""LMRE scores: hand computations, brute force on random data, the vectorised vs the plain reader, errors."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kometrics.lmre import correlate_with_human, explain, score
from kometrics.lmre.scoring import parse_annotations_plain, parse_inputs


def test_hand_computed_f1_and_em():
    # prediction boundaries after words 1 (AP) and 3 (IP): {1, 3}
    pred = "나는 / 밥을 먹고 // 학교에 갔다"
    refs = ["나는 / 밥을 먹고 / 학교에 갔다",  # {1, 3}: binary F1 1; typed {(1,AP),(3,AP)} vs {(1,AP),(3,IP)}: 2*1/4
            "나는 밥을 / 먹고 학교에 갔다",  # {2}: binary 2*0/(2+1) = 0
            "나는 / 밥을 먹고 학교에 갔다"]  # {1}: binary 2*1/(2+1) = 2/3
    r = score([pred], [refs], similarity="f1", return_all_scores=True)
    assert r["scores"][0] == pytest.approx([1.0, 0.0, 2 / 3])
    r = score([pred], [refs], similarity="f1", break_types="typed", return_all_scores=True)
    assert r["scores"][0] == pytest.approx([0.5, 0.0, 2 / 3])
    assert r["best_reference_index"] == [2] and r["best_score"] == pytest.approx([2 / 3])
    assert r["accepted"] == [True]  # 2/3 > 0.5
    r = score([pred], [refs], similarity="em", return_all_scores=True)
    assert r["scores"][0] == [1.0, 0.0, 0.0]
    r = score([pred], [refs], similarity="em", break_types="typed", return_all_scores=True)
    assert r["scores"][0] == [0.0, 0.0, 0.0] and r["accepted"] == [False]


def test_no_boundaries_and_strict_threshold():
    r = score(["가 나 다", "가 나 다"], [["가 나 다"], ["가 / 나 다"]], return_all_scores=True)
    assert r["scores"] == [[1.0], [0.0]]  # both empty = 1.0; one empty = 0.0
    # F1 exactly theta is rejected (strict >), just above is accepted
    r = score(["가 / 나 / 다 라"], [["가 / 나 다 라"]], theta=2 / 3)
    assert r["best_score"] == pytest.approx([2 / 3]) and r["accepted"] == [False]
    r = score(["가 / 나 / 다 라"], [["가 / 나 다 라"]], theta=0.66)
    assert r["accepted"] == [True]


def test_final_position_is_not_scored():
    r = score(["가 / 나 //"], [["가 / 나"]], similarity="em")
    assert r["best_score"] == [1.0] and r["best_reference"] == ["가 / 나"]
    r = score(["한마디"], [["한마디 //"]])  # one word: no position at all, both "empty"
    assert r["best_score"] == [1.0]


def test_single_reference_baseline_and_string_references():
    preds = ["a / b c", "a b / c"]
    assert score(preds, ["a / b c", "a / b c"]) == score(preds, [["a / b c"], ["a / b c"]])
    multi = score(preds, [["a b / c", "a / b c"], ["a / b c", "a b / c"]], similarity="em")
    single = score(preds, [["a b / c"], ["a / b c"]], similarity="em")
    assert multi["acceptance_rate"] == 1.0 and single["acceptance_rate"] == 0.0


def _brute(pred: str, refs: list[str], similarity: str, break_types: str) -> list[float]:
    """Independent brute force: enumerate every position 1..n-1 and compare labels one by one."""
    def labels(text):
        toks = text.split()
        out = []
        for t in toks:
            if t in ("/", "//"):
                out[-1] = t
            else:
                out.append("")
        return out[:-1]

    h = labels(pred)
    scores = []
    for ref in refs:
        r = labels(ref)
        if break_types == "binary":
            hb, rb = [bool(x) for x in h], [bool(x) for x in r]
            same = [a and b for a, b in zip(hb, rb)]
        else:
            hb, rb = [bool(x) for x in h], [bool(x) for x in r]
            same = [bool(a) and a == b for a, b in zip(h, r)]
        if similarity == "em":
            equal = all((a == b) if break_types == "binary" else (x == y) for a, b, x, y in zip(hb, rb, h, r))
            scores.append(1.0 if equal else 0.0)
        else:
            denom = sum(hb) + sum(rb)
            scores.append(1.0 if denom == 0 else 2 * sum(same) / denom)
    return scores


def _ann(rng: random.Random, words: list[str]) -> str:
    return " ".join(w + (rng.choice(["", "", " /", " //"]) if i < len(words) - 1 else "") for i, w in enumerate(words))


def _random_case(rng: random.Random, n: int):
    preds, refs = [], []
    for _ in range(n):
        words = [f"어{rng.randint(0, 9)}" for _ in range(rng.randint(1, 9))]

        preds.append(_ann(rng, words))
        refs.append([_ann(rng, words) for _ in range(rng.randint(1, 5))])
    return preds, refs


@pytest.mark.parametrize("similarity", ["f1", "em"])
@pytest.mark.parametrize("break_types", ["binary", "typed"])
def test_brute_force_random(similarity, break_types):
    rng = random.Random(f"lmre-{similarity}-{break_types}")  # a str seed is hashed with SHA-512: same every run
    preds, refs = _random_case(rng, 400)
    theta = 0.6
    r = score(preds, refs, similarity=similarity, theta=theta, break_types=break_types, return_all_scores=True)
    for i, (p, rs) in enumerate(zip(preds, refs)):
        expected = _brute(p, rs, similarity, break_types)
        assert r["scores"][i] == pytest.approx(expected)
        best = max(expected)
        assert r["best_score"][i] == pytest.approx(best)
        assert r["best_reference_index"][i] == expected.index(best)  # the first best
        assert r["best_reference"][i] == " ".join(rs[expected.index(best)].split())
        assert r["accepted"][i] == (best > theta)
    assert r["acceptance_rate"] == pytest.approx(np.mean([max(_brute(p, rs, similarity, break_types)) > theta
                                                          for p, rs in zip(preds, refs)]))


def test_vectorised_reader_equals_plain_reader_and_chunks():
    rng = random.Random(7)
    preds, refs = _random_case(rng, 300)
    # odd spacing (tabs, double spaces, trailing boundaries) must give the same codes
    preds[3] = "  " + preds[3].replace(" ", "\t ") + " //"
    fast = parse_inputs(preds, refs, chunk_size=37)
    plain = parse_annotations_plain(preds, refs)
    for name in ("hyp", "ref", "pair", "owner", "starts"):
        assert np.array_equal(getattr(fast, name), getattr(plain, name)), name
    assert score(preds, refs) == score(preds[:], refs[:])


def test_unusual_whitespace_goes_through_the_plain_reader():
    nbsp = "가\u00a0/ 나"  # str.split splits on NO-BREAK SPACE too
    assert score([nbsp], [["가 / 나"]])["best_score"] == [1.0]


@pytest.mark.parametrize("chunk", [2, 1000])
def test_errors_name_the_index(chunk):
    preds = ["a b", "c / d", "e f g"]
    with pytest.raises(ValueError, match=r"references\[2\]\[1\] is not an annotation of the words of predictions\[2\] "
                                         r"\(word 1: 'x' instead of 'f'\)"):
        parse_inputs(preds, [["a b"], ["c d"], ["e f g", "e / x g"]], chunk_size=chunk)
    with pytest.raises(ValueError, match=r"references\[1\]\[0\] .*3 words instead of 2"):
        parse_inputs(preds, [["a b"], ["c d e"], ["e f g"]], chunk_size=chunk)
    with pytest.raises(ValueError, match=r"predictions\[2\]: two boundary tokens"):
        parse_inputs(["a b", "c d", "e / // f"], [["a b"], ["c d"], ["e f"]], chunk_size=chunk)
    with pytest.raises(ValueError, match=r"references\[1\] is empty"):
        score(preds, [["a b"], [], ["e f g"]])
    with pytest.raises(ValueError, match="3 predictions but 2 reference lists"):
        score(preds, [["a b"], ["c d"]])
    with pytest.raises(TypeError, match=r"predictions\[1\] must be a string"):
        score(["a", None], [["a"], ["b"]])


def test_option_errors():
    with pytest.raises(ValueError, match="similarity must be one of"):
        score(["a"], [["a"]], similarity="bleu")
    with pytest.raises(ValueError, match="break_types must be one of"):
        score(["a"], [["a"]], break_types="ap")
    for theta in (1.0, -0.1, "0.5"):
        with pytest.raises(ValueError, match="theta must be a number in"):
            score(["a"], [["a"]], theta=theta)


def test_explain_lists_the_differences():
    e = explain("나는 / 밥을 먹고 // 학교에 갔다", ["나는 밥을 / 먹고 학교에 갔다", "나는 / 밥을 먹고 / 학교에 갔다"],
                break_types="typed", theta=0.4)
    assert e["accepted"] and e["best_reference_index"] == 1 and e["best_score"] == pytest.approx(0.5)
    row = e["references"][1]
    assert row["matched"] == ["AP after word 1 '나는'"]
    assert row["missing"] == ["AP after word 3 '먹고'"] and row["extra"] == ["IP after word 3 '먹고'"]
    assert "accepted" in e["why"] and "#1" in e["why"]
    e = explain("나는 / 밥을 먹고 // 학교에 갔다", "나는 밥을 / 먹고 학교에 갔다")
    assert not e["accepted"] and "missing boundary after word 2 '밥을'" in e["why"]


def test_correlate_with_human_against_formulas():
    rng = random.Random(0)
    x = [rng.random() for _ in range(40)]
    y = [v * 4 + rng.gauss(0, 1) for v in x]
    r = correlate_with_human(x, y)
    assert r["pearson"] == pytest.approx(np.corrcoef(x, y)[0, 1])
    rank = lambda v: np.argsort(np.argsort(v))  # noqa: E731 - no ties in continuous data
    assert r["spearman"] == pytest.approx(np.corrcoef(rank(x), rank(y))[0, 1])
    assert r["n"] == 40
    with pytest.warns(UserWarning, match="left out 1 pair"):
        r = correlate_with_human([0.1, 0.5, None, 0.9], [1, 2, 3, 5])
    assert r["n"] == 3
    with pytest.raises(ValueError, match="one human score per annotation"):
        correlate_with_human([0.1], [1, 2])
