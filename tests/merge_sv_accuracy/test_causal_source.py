"""MERE with a causal LM as the source: the sentence-level constraint decides (scripted), the scorer's numbers
equal a hand token loop (tiny GPT-2), every variant written by `--lm` satisfies the constraint, and a masked
LM passed as a causal one is refused."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest

from kometrics.datasets_scripts.merge import CausalLMScorer, MaskScores, MereOptions, Seed, generate_variants

P, H = "나는 학교에 갔다.", "학교가 크다."


class ScriptedCausal:
    """Candidates and continuation probabilities from a table; sentence log-probabilities from another."""

    kind = "causal"

    def __init__(self, cands: dict[str, float], sentences: dict[str, float]) -> None:
        self.cands, self.sentences = cands, sentences

    def __call__(self, text, start, end, want=(), top_k=30):
        return MaskScores(0.2, dict(self.cands))

    def sentence_logprob(self, text: str) -> float:
        return self.sentences[text]


def _run(kiwi, cands, sentences):
    counts = Counter()
    rows = generate_variants(Seed("s1", P, H, 2), ScriptedCausal(cands, sentences), kiwi, MereOptions(), counts,
                             lm_name="scripted-clm")
    return rows, counts


def test_sentence_constraint_decides_not_the_span_probability(kiwi):
    base = {P: -30.0, H: -20.0}
    # 도서관: span probability below the original's (0.1 < 0.2) but both variant sentences are more probable
    rows, counts = _run(kiwi, {"도서관": 0.1}, {**base, "나는 도서관에 갔다.": -29.0, "도서관이 크다.": -19.5})
    assert [(r["premise"], r["hypothesis"]) for r in rows] == [("나는 도서관에 갔다.", "도서관이 크다.")]
    row = rows[0]
    assert (row["logp_seed_premise"], row["logp_variant_premise"]) == (-30.0, -29.0)
    assert (row["logp_seed_hypothesis"], row["logp_variant_hypothesis"]) == (-20.0, -19.5)
    assert row["source_kind"] == "causal" and row["source_lm"] == "scripted-clm"
    # more probable premise, less probable hypothesis: rejected, although the span probability is high
    rows, counts = _run(kiwi, {"도서관": 0.9}, {**base, "나는 도서관에 갔다.": -29.0, "도서관이 크다.": -20.5})
    assert rows == [] and counts["rejected:not_more_probable_than_original"] == 1
    # equal is not more probable
    rows, counts = _run(kiwi, {"도서관": 0.9}, {**base, "나는 도서관에 갔다.": -30.0, "도서관이 크다.": -19.0})
    assert rows == [] and counts["rejected:not_more_probable_than_original"] == 1
    # the MLM path's filters still apply first: floor, subword, already in the sentence
    rows, counts = _run(kiwi, {"도서관": 1e-5, "##관": 0.5, "나": 0.5}, base)
    assert rows == [] and counts["rejected:below_probability_floor"] == 1
    assert counts["rejected:subword_piece"] == 1 and counts["rejected:already_in_sentence"] == 1


def _hand_logprob(model, tokenizer, text: str) -> float:
    """Token by token, one forward per prefix: sum log P(x_t | <bos>, x_<t)."""
    import torch

    ids = [tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id]
    ids += tokenizer(text, add_special_tokens=False)["input_ids"]
    total = 0.0
    for t in range(1, len(ids)):
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids[:t]])).logits[0, -1].double()
        total += float(torch.log_softmax(logits, -1)[ids[t]])
    return total


def test_scorer_numbers_equal_a_hand_loop(tiny_gpt2):
    scorer = CausalLMScorer(tiny_gpt2, device="cpu", batch_size=3)
    texts = ["나는 학교에 갔다.", "학교가 크다.", "오늘은 날씨가 정말 좋다.", "비"]
    got = scorer.logprobs(texts)
    for text, lp in zip(texts, got):
        assert lp == pytest.approx(_hand_logprob(scorer.model, scorer.tokenizer, text), rel=1e-5, abs=1e-5)
    assert scorer.logprobs([""]) == [0.0]
    # P(r | left) by the chain rule; the original's continuation probability in MaskScores.original
    s = scorer("나는 학교에 갔다.", 3, 5, want=["도서관"], top_k=5)
    left = "나는"
    want = math.exp(_hand_logprob(scorer.model, scorer.tokenizer, left + " 도서관")
                    - _hand_logprob(scorer.model, scorer.tokenizer, left))
    assert s.candidates["도서관"] == pytest.approx(want, rel=1e-4)
    orig = math.exp(_hand_logprob(scorer.model, scorer.tokenizer, "나는 학교")
                    - _hand_logprob(scorer.model, scorer.tokenizer, left))
    assert s.original == pytest.approx(orig, rel=1e-4)
    assert len([k for k in s.candidates if k != "도서관"]) >= 4  # the top-5 next tokens (minus duplicates)


def test_masked_lm_is_refused_as_causal_source(tiny_bert):
    with pytest.raises(ValueError, match="masked LM .* --mlm"):
        CausalLMScorer(tiny_bert)


def test_cli_generate_with_lm_writes_constrained_variants(tmp_path, tiny_gpt2, data_dir, capsys):
    from kometrics.cli import main

    out = tmp_path / "merge-clm"
    assert main(["merge", "generate", "--seeds", "klue", "--data-dir", str(data_dir), "--lm", tiny_gpt2,
                 "--out", str(out), "--limit", "3", "--floor", "0", "--top-k", "20"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["source_kind"] == "causal" and stats["source_lm"] == tiny_gpt2
    rows = [json.loads(x) for x in (out / "data" / "all.jsonl").read_text("utf-8").splitlines()]
    seeds = {r["seed_id"]: r for r in rows if r["is_seed"]}
    variants = [r for r in rows if not r["is_seed"]]
    assert len(seeds) == 3 and variants  # the tiny random GPT-2 yields a few (14 when written)
    assert stats["counts"]["rejected:not_more_probable_than_original"] > 0  # the constraint decided some
    scorer = CausalLMScorer(tiny_gpt2, device="cpu")
    for v in variants:  # the stated constraint, recomputed by hand
        seed = seeds[v["seed_id"]]
        lp = {k: _hand_logprob(scorer.model, scorer.tokenizer, t) for k, t in (
            ("sp", seed["premise"]), ("vp", v["premise"]), ("sh", seed["hypothesis"]), ("vh", v["hypothesis"]))}
        assert lp["vp"] > lp["sp"] and lp["vh"] > lp["sh"]
        assert v["logp_variant_premise"] == pytest.approx(lp["vp"], rel=1e-5)
        assert v["source_kind"] == "causal" and v["label"] == seed["label"]
    # every candidate is accounted for: accepted or rejected under a reason
    rejected = sum(c for k, c in stats["counts"].items() if k.startswith("rejected:"))
    assert rejected + stats["counts"].get("variants", 0) == stats["counts"]["candidates"]
    review = tmp_path / "review.csv"
    assert main(["merge", "review", "--dataset", str(out), "--out", str(review), "--config", "all"]) == 0
    assert "source_kind" in review.read_text(encoding="utf-8-sig").splitlines()[0]
    # zero-shot NLI predictions for the folder by the same LM, scored with the metric
    capsys.readouterr()
    preds_path = tmp_path / "preds.jsonl"
    assert main(["merge", "predict", "--dataset", str(out), "--lm", tiny_gpt2, "--out", str(preds_path),
                 "--device", "cpu"]) == 0
    printed = json.loads(capsys.readouterr().out)
    preds = [json.loads(x) for x in preds_path.read_text("utf-8").splitlines()]
    assert [p["variant_id"] for p in preds] == [r["variant_id"] for r in rows]
    from kometrics.merge_sv_accuracy import score
    from kometrics.models.zero_shot_nli import ZeroShotNLI, calibrated

    nli = ZeroShotNLI(scorer.model, scorer.tokenizer, device="cpu")
    cf = nli.content_free_scores()
    for p, r in zip(preds, rows):
        assert p["label_scores"] == pytest.approx(nli.label_scores(r["premise"], r["hypothesis"]), abs=1e-5)
        cal = calibrated(p["label_scores"], cf)
        assert p["prediction"] == max(range(3), key=lambda i: cal[i])
        assert p["prediction_raw"] == max(range(3), key=lambda i: p["label_scores"][i])
    want = score([p["prediction"] for p in preds], [r["label"] for r in rows], [r["seed_id"] for r in rows],
                 is_seed=[r["is_seed"] for r in rows], word_classes=[r["word_class"] for r in rows])
    assert printed["seed_accuracy"] == pytest.approx(want["seed_accuracy"])
    assert printed["sv_accuracy"] == {str(k): pytest.approx(v) for k, v in want["sv_accuracy"].items()}
    assert main(["merge", "predict", "--dataset", str(tmp_path / "nope"), "--lm", tiny_gpt2,
                 "--out", str(preds_path)]) != 0
    assert "does not exist: pass a folder written by 'kometrics merge generate'" in capsys.readouterr().err
