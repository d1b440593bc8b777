"""Zero-shot NLI by a causal LM (the demo's predictions for merge_sv_accuracy): label scores equal a hand token
loop on a tiny GPT-2 (and on Gemma-3-270M in the real-model tier); calibration is the stated formula; bad input is refused."""

from __future__ import annotations

import math

import pytest

from kometrics.models.zero_shot_nli import LABEL_WORDS, PROMPT, ZeroShotNLI, calibrated, continuation_logprobs


def _hand(model, tok, prompt: str, continuation: str) -> float:
    """One forward pass per continuation token over everything before it; full-vocabulary log-softmax."""
    import torch

    head = [tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id,
            *tok(prompt, add_special_tokens=False)["input_ids"]]
    tail = tok(continuation, add_special_tokens=False)["input_ids"]
    total = 0.0
    for j, t in enumerate(tail):
        ids = torch.tensor([head + tail[:j]])
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, -1].double()
        total += float(torch.log_softmax(logits, -1)[t])
    return total


def test_label_scores_equal_a_hand_token_loop(tiny_gpt2):
    """(Gemma-3-270M: tests/real_model/test_zero_shot_nli.py.)"""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = tiny_gpt2
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    nli = ZeroShotNLI(model, tok)
    pairs = [("나는 학교에 갔다.", "학교가 크다."), ("비가 많이 온다", "날씨가 맑다")]
    for p, h in pairs:
        got = nli.label_scores(p, h)
        want = [_hand(model, tok, PROMPT.format(premise=p, hypothesis=h), " " + w) for w in LABEL_WORDS]
        assert got == pytest.approx(want, abs=1e-4)
    # the continuations differ in token count somewhere in these texts: padding must not change a score
    conts = [" 함의", " 중립입니다 정말로", "x"]
    got = continuation_logprobs(model, tok, "전제: 하늘", conts)
    assert got == pytest.approx([_hand(model, tok, "전제: 하늘", c) for c in conts], abs=1e-4)
    out = nli.predict([p for p, _ in pairs], [h for _, h in pairs])
    assert out["scores"][0] == pytest.approx(nli.label_scores(*pairs[0]))
    assert out["raw"] == [max(range(3), key=lambda i: s[i]) for s in out["scores"]]
    cf = nli.content_free_scores()
    assert out["calibrated"] == [max(range(3), key=lambda i: calibrated(s, cf)[i]) for s in out["scores"]]


def test_calibration_is_the_stated_formula():
    scores, cf = [-1.0, -2.0, -4.0], [math.log(0.7), math.log(0.2), math.log(0.1)]
    z = math.log(sum(math.exp(s) for s in scores))
    want = [(s - z) - c for s, c in zip(scores, cf)]
    assert calibrated(scores, cf) == pytest.approx(want, abs=1e-12)
    # a label the model always prefers loses its head start: here entailment wins raw, neutral calibrated
    assert max(range(3), key=lambda i: scores[i]) == 0
    assert max(range(3), key=lambda i: calibrated(scores, cf)[i]) == 1


def test_lengths_must_agree(tiny_gpt2):
    nli = ZeroShotNLI(tiny_gpt2)
    with pytest.raises(ValueError, match="differ in length"):
        nli.predict(["a", "b"], ["c"])
