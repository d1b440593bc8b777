"""Annotation formats: canonical string <-> labels <-> K-ToBI break indices, and the errors."""

from __future__ import annotations

import random

import pytest

from kometrics.lmre import (
    Annotation,
    AnnotationError,
    annotation_to_break_indices,
    annotation_to_labels,
    break_indices_to_annotation,
    canonicalize,
    format_annotation,
    labels_to_annotation,
    parse_annotation,
)


def test_parse_example_by_hand():
    ann = parse_annotation("오늘은 / 날씨가 정말 // 좋네요")
    assert ann.words == ("오늘은", "날씨가", "정말", "좋네요")
    # after 오늘은: AP, after 날씨가: none, after 정말: IP; nothing is stored after the last word
    assert ann.breaks == (1, 0, 2)
    assert annotation_to_labels(ann) == ["AP", "NB", "IP", "IP"]
    assert annotation_to_break_indices(ann) == [2, 1, 3, 3]


def test_trailing_boundary_and_spacing_are_normalised():
    assert parse_annotation("가 / 나 //") == parse_annotation("가 / 나")
    assert canonicalize("  가\t/   나  // ") == "가 / 나"
    assert parse_annotation("가") == Annotation(("가",), ())


@pytest.mark.parametrize("text, fragment, token", [
    ("", "is empty", None),
    ("   ", "is empty", None),
    ("/ 가 나", "before any word", 0),
    ("가 / // 나", "two boundary tokens in a row", 2),
    ("가 /// 나", "mixes a word and '/'", 1),
    ("가/ 나", "mixes a word and '/'", 0),
    ("가 나 /다", "mixes a word and '/'", 2),
])
def test_malformed_strings_show_the_position(text, fragment, token):
    with pytest.raises(AnnotationError) as err:
        parse_annotation(text, name="predictions[4]")
    msg = str(err.value)
    assert msg.startswith("predictions[4]") and fragment in msg
    if token is not None:
        assert f"token {token}" in msg
        line, caret = msg.splitlines()[-2:]
        # the caret points at the start of the offending token in the re-joined string
        assert line.strip().split()[token] == line[caret.index("^"):].split()[0]


def test_not_a_string():
    with pytest.raises(TypeError, match="annotation must be a string"):
        parse_annotation(None)


def test_labels_and_break_indices_round_trip_random():
    rng = random.Random(3)
    for _ in range(300):
        n = rng.randint(1, 12)
        words = [f"w{i}" for i in range(n)]
        codes = [rng.randrange(3) for _ in range(n - 1)]
        text = format_annotation(Annotation(tuple(words), tuple(codes)))
        labels = annotation_to_labels(text)
        assert labels[-1] == "IP" and len(labels) == n
        assert labels_to_annotation(words, labels) == text
        # any valid label after the last word is accepted and not written
        assert labels_to_annotation(words, labels[:-1] + [rng.choice(["NB", "AP"])]) == text
        indices = annotation_to_break_indices(text)
        assert break_indices_to_annotation(words, indices) == text
        assert parse_annotation(text).breaks == tuple(codes)


def test_break_index_mapping():
    # 0 and 1 read as NB, 2 as AP, 3 and 4 as IP
    assert break_indices_to_annotation(["a", "b", "c", "d", "e"], [0, 1, 2, 4, 3]) == "a b c / d // e"
    assert break_indices_to_annotation(["a", "b"], [3, 4]) == "a // b"
    with pytest.raises(ValueError, match=r"indices\[1\] is 5"):
        break_indices_to_annotation(["a", "b"], [1, 5])


def test_label_errors():
    with pytest.raises(ValueError, match="2 labels for 3 words"):
        labels_to_annotation(["a", "b", "c"], ["NB", "AP"])
    with pytest.raises(ValueError, match=r"labels\[1\] is 'XX'"):
        labels_to_annotation(["a", "b"], ["NB", "XX"])
    with pytest.raises(ValueError, match=r"words\[0\]"):
        labels_to_annotation(["a/b", "c"], ["NB", "NB"])
    assert labels_to_annotation(["a", "b", "c"], [2, 1, 0]) == "a // b / c"
