"""The raw-data readers on the real files: row counts and parsing facts from ../shared/data/README.md."""

from __future__ import annotations

import csv

from kometrics.datasets_scripts import readers


def test_row_counts(data_dir):
    assert len(readers.read_klue_sts(data_dir)) == 519
    assert len(readers.read_klue_nli(data_dir)) == 3000
    assert len(readers.read_klue_dp(data_dir)) == 2000
    assert len(readers.read_klue_ner_sentences(data_dir)) == 5000
    assert len(readers.read_korsts("train", data_dir)) == 5749
    assert len(readers.read_korsts("dev", data_dir)) == 1500
    assert len(readers.read_kornli(data_dir)) == 2490


def test_korsts_needs_quote_none(data_dir):
    path = data_dir / "korsts" / "sts-train.tsv"
    with open(path, encoding="utf-8", newline="") as f:
        default = list(csv.DictReader(f, delimiter="\t"))
    assert len(default) < 5749  # default quoting swallows rows: the reader must not use it
    rows = readers.read_korsts("train", data_dir)
    assert all(0.0 <= r["score"] <= 5.0 for r in rows)


def test_dp_words_rebuild_the_sentence(data_dir):
    sentences = readers.read_klue_dp(data_dir)
    differ = [s.guid for s in sentences if " ".join(w.form for w in s.words) != s.text]
    # Upstream, 6 sentences' word forms differ from the header text (a quote mark, 15.70% vs 15.7%).
    assert len(differ) == 6
    for sent in sentences:
        assert len(sent.words) == len(sent.text.split())
        assert [w.index for w in sent.words] == list(range(1, len(sent.words) + 1))
        assert sum(w.head == 0 for w in sent.words) == 1


def test_ner_marks_are_removed(data_dir):
    first = readers.read_klue_ner_sentences(data_dir)[0]
    assert "<" not in first and first.startswith("경찰은 또 성매매")
