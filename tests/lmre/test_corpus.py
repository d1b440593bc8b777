"""The phrase-break test bed: strategies by hand on a constructed sentence, and a build from KLUE-DP dev."""

from __future__ import annotations

import json

import pytest

from kometrics.datasets_scripts.phrase_break.build import annotate, build_corpus
from kometrics.datasets_scripts.phrase_break.strategies import STRATEGIES, length_bucket
from kometrics.datasets_scripts.readers import DPSentence, DPWord
from kometrics.lmre import parse_annotation

# A made-up sentence (not from KLUE): 철수는 맛있는 밥을 먹고, 학교에 갔다.
SENT = DPSentence("made-up-1", "철수는 맛있는 밥을 먹고, 학교에 갔다.", (
    DPWord(1, "철수는", "철수 는", "NNP+JX", 6, "NP_SBJ"),
    DPWord(2, "맛있는", "맛있 는", "VA+ETM", 3, "VP_MOD"),
    DPWord(3, "밥을", "밥 을", "NNG+JKO", 4, "NP_OBJ"),
    DPWord(4, "먹고,", "먹 고 ,", "VV+EC+SP", 6, "VP"),
    DPWord(5, "학교에", "학교 에", "NNG+JKB", 6, "NP_AJT"),
    DPWord(6, "갔다.", "가 았 다 .", "VV+EP+EF+SF", 0, "VP"),
))


def test_strategies_by_hand():
    # comma: only after '먹고,'
    assert STRATEGIES["comma"](SENT) == [0, 0, 0, 2, 0]
    # rule: JX -> AP, ETM -> NB, JKO -> AP, comma (SP) -> IP, JKB -> AP
    assert STRATEGIES["rule"](SENT) == [1, 0, 1, 2, 1]
    # length: syllables 3, 3 (=6 >= 5: AP), 2, 2 (=4), 3 (=7: AP)
    assert STRATEGIES["length"](SENT) == [0, 1, 0, 0, 1]
    # dependency: 1->6 (not next, NP_SBJ: AP), 2->3 (next: NB), 3->4 (NB), 4->6 (VP: IP), 5->6 (NB)
    assert STRATEGIES["dependency"](SENT) == [1, 0, 0, 2, 0]
    assert annotate([w.form for w in SENT.words], [1, 0, 1, 2, 1]) == "철수는 / 맛있는 밥을 / 먹고, // 학교에 / 갔다."


def test_rule_keeps_auxiliary_constructions_together():
    sent = DPSentence("made-up-2", "깨져 버렸다", (DPWord(1, "깨져", "깨지 어", "VV+EC", 2, "VP"),
                                                DPWord(2, "버렸다", "버리 었 다", "VX+EP+EF", 0, "VP")))
    assert STRATEGIES["rule"](sent) == [0]


def test_length_buckets():
    assert [length_bucket(n) for n in (1, 6, 7, 10, 11, 30)] == ["short", "short", "medium", "medium", "long", "long"]


def test_build_from_klue_dp(tmp_path, data_dir):
    human = {"klue-dp-v1_dev_00001_wikitree:rule": 4.0}
    summary = build_corpus(tmp_path, data_dir=data_dir, limit=30, pool_size=10, human_scores=human)
    assert summary["utterances"] == 30 and summary["annotations"] == 120 and summary["pool"] == 10
    utts = [json.loads(x) for x in (tmp_path / "utterances.jsonl").read_text("utf-8").splitlines()]
    rows = [json.loads(x) for x in (tmp_path / "annotations.jsonl").read_text("utf-8").splitlines()]
    pool = [json.loads(x) for x in (tmp_path / "pool.jsonl").read_text("utf-8").splitlines()]
    assert {r["strategy"] for r in rows} == set(STRATEGIES)
    assert not {p["id"] for p in pool} & {u["id"] for u in utts}  # the pool comes from other sentences
    for r in rows:
        ann = parse_annotation(r["annotation"])
        assert list(ann.words) == r["words"] and r["n_words"] == len(r["words"])
        assert r["length_bucket"] == length_bucket(len(r["words"]))
        assert r["id"] == f"{r['utterance_id']}:{r['strategy']}"
    assert [r["human_score"] for r in rows if r["human_score"] is not None] == [4.0]
    assert sum(summary["length_buckets"].values()) == 30
    from datasets import load_dataset

    ds = load_dataset(str(tmp_path), "annotations", split="train")
    assert ds.num_rows == 120 and "annotation" in ds.column_names
    with pytest.raises(ValueError, match="not annotations of this corpus"):
        build_corpus(tmp_path / "x", data_dir=data_dir, limit=5, pool_size=0, human_scores={"nope:rule": 1.0})
    with pytest.raises(ValueError, match="unknown strategy"):
        build_corpus(tmp_path / "y", data_dir=data_dir, limit=5, strategies=["audio"])


def test_cli_corpus(tmp_path, data_dir, capsys):
    from kometrics.cli import main

    rc = main(["lmre", "corpus", "--out", str(tmp_path), "--data-dir", str(data_dir), "--limit", "5",
               "--pool-size", "3", "--strategy", "rule", "--strategy", "comma"])
    summary = json.loads(capsys.readouterr().out)
    assert rc == 0 and summary["annotations"] == 10 and summary["pool"] == 3
    assert (tmp_path / "README.md").read_text("utf-8").startswith("---\n")
