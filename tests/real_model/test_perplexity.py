"""Perplexity on Gemma-3-270M: equal to a token-by-token loop conditioned on BOS, and batch-invariant."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from kometrics.perplexity import load_model, score

pytestmark = pytest.mark.real_model

REL = 1e-5


def _hand_nll(model, ids: list[int]) -> float:
    """-sum_t ln P(ids[t] | ids[:t]), one forward pass per token, float64 log-softmax of the last logits."""
    total = 0.0
    with torch.inference_mode():
        for t in range(1, len(ids)):
            logits = model(torch.tensor([ids[:t]]), logits_to_keep=1).logits[0, -1]
            total -= torch.log_softmax(logits.double(), -1)[ids[t]].item()
    return total


def test_equals_hand_token_loop(gemma, klue_pairs):
    texts = [klue_pairs[0][0], klue_pairs[1][1], "오늘은 날씨가 정말 맑고 좋다."]
    model, tokenizer = load_model(gemma)
    assert tokenizer.bos_token_id == 2
    ours = score(texts, gemma, batch_size=3)
    ids = [[tokenizer.bos_token_id] + tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
    hand = [_hand_nll(model, x) for x in ids]
    assert ours["token_counts"] == [len(x) - 1 for x in ids]
    for a, b in zip(ours["nll_sums"], hand):
        assert math.isclose(a, b, rel_tol=REL), (a, b)


def test_batch_invariant(gemma, klue_pairs):
    cands, refs = klue_pairs
    texts = [cands[0], refs[2], "짧다.", cands[4]]
    base = score(texts, Path(gemma), batch_size=1)  # the pathlib.Path prepare() returns is accepted
    for bs, side in ((4, "right"), (4, "left"), (3, "right")):
        r = score(texts, gemma, batch_size=bs, padding_side=side)
        assert r["token_counts"] == base["token_counts"]
        for a, b in zip(r["nll_sums"], base["nll_sums"]):
            assert math.isclose(a, b, rel_tol=REL), (bs, side, a, b)
