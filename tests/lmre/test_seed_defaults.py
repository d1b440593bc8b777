"""The builder's defaults follow the LMRE paper (LMRE: N_iter=40, |P_FS|=128, keep annotations produced at least
N_iter/10 times): a one-off answer is dropped by a default build, and a build whose filter is off says so."""

from __future__ import annotations

import json
import math
import warnings

import pytest

from kometrics.datasets_scripts.phrase_break.builder import BuildConfig, Utterance, build_references

from .fake_llm_server import rule_annotation

SENTENCES = ["오늘은 날씨가 정말 좋네요", "나는 밥을 먹고 학교에 갔다", "비가 오면 길이 미끄럽다"]


def _utts():
    return [Utterance(f"u{i}", tuple(s.split())) for i, s in enumerate(SENTENCES)]


def _one_off_llm():
    """Answers variant 0 always, except on its 3rd call, where it answers variant 1 (a one-off)."""
    calls = []

    def llm(messages, temperature):
        calls.append(messages)
        tail = messages[-1]["content"].partition("Annotate these")[2]
        out = []
        for line in tail.splitlines()[1:]:
            k, _, text = line.partition(". ")
            out.append(f"{k}. {rule_annotation(text, int(len(calls) == 3))}")
        return "\n".join(out)

    return llm, calls


def _refs(folder):
    return {r["text"]: r for r in map(json.loads, (folder / "references.jsonl").read_text("utf-8").splitlines())}


def test_defaults_are_the_seed_configuration():
    cfg = BuildConfig()
    assert (cfg.n_iter, cfg.pool_size, cfg.batch_size, cfg.temperature) == (40, 128, 32, 0.0)
    assert cfg.resolved(500).min_count == math.ceil(40 / 10) == 4


def test_default_build_drops_one_off_answers(tmp_path):
    pool = [f"예문 {i}번 / 입니다" for i in range(40)]  # 40 choose 20 few-shot sets: no two prompts alike
    llm, calls = _one_off_llm()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the default build must not warn that its filter is off
        info = build_references(_utts(), pool, tmp_path / "d", llm, seed=3)
    assert info["config"]["n_iter"] == 40 and info["config"]["min_count"] == 4 and len(calls) == 40
    for text, rec in _refs(tmp_path / "d").items():
        assert rec["references"] == [rule_annotation(text, 0)] and rec["counts"] == [39]
        assert rule_annotation(text, 1) != rule_annotation(text, 0)
    # the same one-off answer is kept when the filter is off (n_iter=10 -> min_count 1), with a warning
    llm, calls = _one_off_llm()
    with pytest.warns(UserWarning, match="filter is off"):
        build_references(_utts(), pool, tmp_path / "ten", llm, n_iter=10, seed=3)
    for text, rec in _refs(tmp_path / "ten").items():
        assert set(rec["references"]) == {rule_annotation(text, 0), rule_annotation(text, 1)}


def test_few_shot_pool_is_128_drawn_once(tmp_path):
    pool = [f"문장 {i} / 입니다" for i in range(300)]
    seen_sets = []

    def llm(messages, temperature):
        head, _, tail = messages[-1]["content"].partition("Annotate these")
        seen_sets.append({line for line in head.splitlines() if line.startswith("문장")})
        return "\n".join(f"{k}. {rule_annotation(line.partition('. ')[2], 0)}"
                         for k, line in enumerate(tail.splitlines()[1:], 1))

    info = build_references(_utts(), pool, tmp_path / "p", llm, n_iter=20, seed=0)
    assert info["pool"] == 300 and info["few_shot_pool"] == 128 and info["config"]["few_shot_size"] == 64
    union = set().union(*seen_sets)
    assert all(len(s) == 64 for s in seen_sets)
    assert len(union) <= 128 and len(union) > 64  # drawn from one P_FS of 128, re-sampled per request
    # a pool of at most 128 is used whole; pool_size=None uses any pool whole
    seen_sets.clear()
    build_references(_utts(), pool, tmp_path / "all", llm, n_iter=20, seed=0, pool_size=None)
    assert len(set().union(*seen_sets)) > 128


def _ann(text: str, v: int) -> str:
    """Variant v of an annotation: one AP boundary after word v+1 (all test sentences have >= 4 words)."""
    words = text.split()
    return " ".join([*words[:v + 1], "/", *words[v + 1:]])


def _variant_llm(variants):
    """A scripted LLM that answers each utterance with rule_annotation(text, v) for v cycling over ``variants``
    per call (so each variant is produced in many iterations)."""
    calls = []

    def llm(messages, temperature):
        calls.append(messages)
        v = variants[len(calls) % len(variants)]
        tail = messages[-1]["content"].partition("Annotate these")[2]
        return "\n".join(f"{k}. {_ann(line.partition('. ')[2], v)}" for k, line in enumerate(tail.splitlines()[1:], 1))

    return llm


@pytest.fixture
def two_folders(tmp_path):
    import shutil

    from kometrics.datasets_scripts.phrase_break.builder import CallableLLM

    pool = [f"예문 {i}번 / 입니다" for i in range(40)]
    a, b = tmp_path / "gpt", tmp_path / "claude"
    build_references(_utts(), pool, a, CallableLLM(_variant_llm([0, 1]), name="llm-a"), n_iter=20, seed=1)
    build_references(_utts(), pool, b, CallableLLM(_variant_llm([1, 2]), name="llm-b"), n_iter=20, seed=1)
    shutil.rmtree(a / "cache")
    shutil.rmtree(b / "cache")
    return a, b


def test_combined_references_are_the_union_with_provenance(two_folders):
    from kometrics.lmre import load_references, score

    a, b = two_folders
    la, lb, both = load_references(a), load_references(b), load_references([a, b])
    assert both.sources == ["llm-a@gpt", "llm-b@claude"]
    only_b = []
    for key in SENTENCES:
        assert set(la[key]) == {_ann(key, 0), _ann(key, 1)} and set(lb[key]) == {_ann(key, 1), _ann(key, 2)}
        assert both[key] == la[key] + [r for r in lb[key] if r not in la[key]]  # union, folder order, no duplicate
        assert both.provenance[key] == {r: [n for n, lk in (("llm-a@gpt", la), ("llm-b@claude", lb)) if r in lk[key]]
                                        for r in both[key]}
        only_b += [r for r in lb[key] if r not in la[key]]
    # annotations only the second folder has are accepted by the combination, and the signature says so
    assert only_b == [_ann(t, 2) for t in SENTENCES]
    only_a = score(only_b, reference_folders=a, similarity="em")
    combined = score(only_b, reference_folders=[a, b], similarity="em")
    assert only_a["acceptance_rate"] == 0.0 and combined["acceptance_rate"] == 1.0
    assert "refs:llm-a@gpt+llm-b@claude" in combined["signature"] and "refs:llm-a@gpt|" in only_a["signature"]
    with pytest.raises(ValueError, match="given twice"):
        load_references([a, a])


def test_combined_references_through_evaluate_and_cli(two_folders, capsys):
    import evaluate

    from kometrics.cli import main
    from kometrics.lmre import score

    from ..conftest import METRICS_DIR

    a, b = two_folders
    preds = [_ann(t, 2) for t in SENTENCES]  # accepted or not, the three ways must agree
    metric = evaluate.load(str(METRICS_DIR / "lmre"))
    refs, sources = metric.references_for(preds, [a, b])
    got = metric.compute(predictions=preds, references=refs, reference_sources=sources, similarity="em")
    want = score(preds, reference_folders=[a, b], similarity="em")
    assert got == want
    pred_file = a.parent / "preds.txt"
    pred_file.write_text("\n".join(preds) + "\n", encoding="utf-8")
    assert main(["lmre", "score", "--predictions", str(pred_file), "--references-dir", str(a),
                 "--references-dir", str(b), "--similarity", "em"]) == 0
    assert json.loads(capsys.readouterr().out) == want


def test_acceptance_gap_by_hand():
    from kometrics.lmre import acceptance_gap

    human = [5, 5, 5, 5, 4, 4, 3, 2, 2, 1]
    single = [1, 1, 0, 0, 1, 0, 0, 0, 1, 0]
    lmre = [1, 1, 1, 1, 1, 1, 0, 1, 1, 0]
    g = acceptance_gap(human, {"single": [bool(x) for x in single], "lmre": [bool(x) for x in lmre]}, 3)
    by = {row["score"]: row for row in g["groups"]}
    assert sorted(by) == [1, 2, 3, 4, 5] and [by[s]["n"] for s in (1, 2, 3, 4, 5)] == [1, 2, 1, 2, 4]
    # hand: group 5 single 2/4 accepted -> gap 0.5; group 4 single 1/2 -> 0.5; group 3 single 0/1 -> 1
    assert (by[5]["gap"]["single"], by[4]["gap"]["single"], by[3]["gap"]["single"]) == (0.5, 0.5, 1.0)
    assert (by[5]["gap"]["lmre"], by[4]["gap"]["lmre"], by[3]["gap"]["lmre"]) == (0.0, 0.0, 1.0)
    # unacceptable groups: human 0, gap = -rate (over-acceptance)
    assert by[2]["human"] == 0.0 and by[2]["gap"] == {"single": -0.5, "lmre": -1.0} and by[1]["gap"]["lmre"] == 0.0
    acc = g["acceptable"]
    assert acc["n"] == 7 and acc["groups"] == 3
    assert acc["mean_gap"]["single"] == pytest.approx((0.5 + 0.5 + 1.0) / 3)
    assert acc["mean_gap"]["lmre"] == pytest.approx(1.0 / 3)
    assert acc["pooled_gap"]["single"] == pytest.approx(1 - 3 / 7) and acc["pooled_gap"]["lmre"] == pytest.approx(1 / 7)
    with pytest.raises(ValueError, match=r"accepted\['lmre'\] has 2 flags"):
        acceptance_gap([5, 4, 3], {"lmre": [True, False]}, 3)
    with pytest.raises(ValueError, match=r"human_scores\[1\]"):
        acceptance_gap([5, float("nan")], {"lmre": [True, False]}, 3)


def test_gap_cli_prints_the_table(two_folders, capsys):
    from kometrics.cli import main
    from kometrics.lmre import acceptance_gap, score

    a, b = two_folders
    preds = [_ann(t, v) for t in SENTENCES for v in (0, 2, 3)]
    human = [5, 4, 1] * len(SENTENCES)
    single = [_ann(t, 0) for t in SENTENCES for _ in range(3)]
    d = a.parent
    (d / "p.txt").write_text("\n".join(preds) + "\n", encoding="utf-8")
    (d / "h.txt").write_text("\n".join(map(str, human)) + "\n", encoding="utf-8")
    (d / "s.txt").write_text("\n".join(single) + "\n", encoding="utf-8")
    argv = ["lmre", "gap", "--predictions", str(d / "p.txt"), "--human", str(d / "h.txt"), "--single-references",
            str(d / "s.txt"), "--references-dir", str(a), "--references-dir", str(b), "--acceptable-from", "3",
            "--similarity", "em"]
    assert main([*argv, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = acceptance_gap(human, {"single": score(preds, single, similarity="em")["accepted"],
                                  "lmre": score(preds, reference_folders=[a, b], similarity="em")["accepted"]}, 3)
    assert got == want
    # by hand: score-4 annotations (variant 2) are in folder b only: single rejects all (gap 100%), LMRE none
    row4 = next(r for r in got["groups"] if r["score"] == 4)
    assert row4["gap"] == {"single": 1.0, "lmre": 0.0}
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "single gap" in table and "+100.00%" in table and ">=3 (mean of groups)" in table
