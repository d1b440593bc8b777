"""Perplexity on Gemma-3-270M: equal to a token-by-token loop conditioned on BOS, and batch-invariant."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kometrics.perplexity import load_model, score

pytestmark = pytest.mark.real_model

REL = 1e-5


def test_equals_hand_token_loop(gemma, klue_pairs):
    """The hand loop (kometrics.bench.perplexity_real.hand_token_loop): one forward pass per token over the
    prefix alone, float64 log-softmax of the last logits."""
    from kometrics.bench.perplexity_real import hand_token_loop

    texts = [klue_pairs[0][0], klue_pairs[1][1], "오늘은 날씨가 정말 맑고 좋다."]
    model, tokenizer = load_model(gemma)
    assert tokenizer.bos_token_id == 2
    ours = score(texts, gemma, batch_size=3)
    assert "|model:google/gemma-3-270m@prepared:a5fd3b62|" in ours["signature"]  # not this machine's path
    hand = hand_token_loop(texts, model, tokenizer)
    assert ours["token_counts"] == hand["token_counts"]
    for a, b in zip(ours["nll_sums"], hand["float64"]):
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
