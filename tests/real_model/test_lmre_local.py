"""The LMRE builder's local backend on Gemma-3-270M (its marks are single tokens, so options are scored from the
logits at hand): equal to the hand implementation of the choice rule; every word kept."""

from __future__ import annotations

import pytest

from tests.lmre.test_local_llm import POOL, SENTENCES, _hand

pytestmark = pytest.mark.real_model


def test_local_backend_equals_hand_rule_on_gemma(gemma):
    """Sampling at a high temperature, so that breaks are drawn too (greedy decoding is checked on tiny GPT-2)."""
    temperature = 3.0
    from kometrics.datasets_scripts.phrase_break.builder import Utterance, build_messages
    from kometrics.datasets_scripts.phrase_break.local_llm import LocalCausalLM

    local = LocalCausalLM(str(gemma), device="cpu", seed=3)
    assert all(len(local.tokenizer(m, add_special_tokens=False)["input_ids"]) == 1 for m in (" /", " //"))
    messages = build_messages([Utterance(f"u{i}", tuple(s.split())) for i, s in enumerate(SENTENCES)], POOL)
    got = local(messages, temperature)
    assert got == _hand(local, messages, temperature)
    assert "/" in got  # a break was chosen somewhere, so the comparison covers the marks' scores
    for line, text in zip(got.splitlines(), SENTENCES):
        assert line.split(". ", 1)[1].replace(" //", "").replace(" /", "") == text

