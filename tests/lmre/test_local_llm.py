"""The LMRE builder with a local causal LM: constrained decoding keeps every word, and its choices equal a
hand implementation of the same rule (full forward passes, no key/value cache) on the tiny GPT-2."""

from __future__ import annotations

import json
import math
import random

import pytest

from kometrics.datasets_scripts.phrase_break.builder import Utterance, build_messages
from kometrics.datasets_scripts.phrase_break.local_llm import (
    BREAK_OPTIONS,
    LocalCausalLM,
    choose,
    prompt_text,
)

SENTENCES = ["오늘은 날씨가 정말 좋네요", "나는 밥을 먹고 학교에 갔다", "비가 오면 길이 미끄럽다"]
POOL = ["오늘은 / 하늘이 맑다", "철수가 / 학교에 // 갔다", "저는 / 커피를 좋아해요", "바람이 불고 // 비가 온다"]


@pytest.fixture(scope="module")
def long_gpt2(tmp_path_factory, korean_texts):
    """The tiny GPT-2 with room for a few-shot prompt (1,024 positions)."""
    from kometrics.models.tiny import build_tiny_gpt2

    return build_tiny_gpt2(tmp_path_factory.mktemp("gpt2-1024"), korean_texts, n_positions=1024)


@pytest.fixture(scope="module")
def local(long_gpt2):
    return LocalCausalLM(long_gpt2, device="cpu", seed=7)


def _hand(local, messages, temperature):
    """The choice rule written out: for each utterance, context = prompt + '<k>. w1'; at each boundary score
    the next tokens of each option (no break: the first token of ' w'; AP/IP: the tokens of ' /' / ' //') by
    a full forward pass over context + option; choose; append the whole option."""
    import hashlib

    import torch

    tok, model = local.tokenizer, local.model

    def ids(text):
        return tok(text, add_special_tokens=False)["input_ids"]

    def option_logprob(context, scored):
        seq = context + scored
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([seq])).logits[0].double()
        logp = torch.log_softmax(logits, -1)
        return sum(float(logp[len(context) - 1 + j, t]) for j, t in enumerate(scored))

    rng = random.Random(hashlib.sha256(repr((messages, temperature, local.seed)).encode("utf-8")).hexdigest())
    prompt = [tok.bos_token_id] + ids(prompt_text(tok, messages))
    lines = []
    for k, text in enumerate(SENTENCES, 1):
        words = text.split()
        context = prompt + ids(f"{k}. {words[0]}")
        out = words[0]
        for nxt in words[1:]:
            word = ids(f" {nxt}")
            options = [word, ids(" /") + word, ids(" //") + word]
            scores = [option_logprob(context, word[:1]), option_logprob(context, ids(" /")),
                      option_logprob(context, ids(" //"))]
            if temperature <= 0:
                best = max(range(3), key=lambda i: (scores[i], -i))
            else:
                top = max(scores)
                w = [math.exp((s - top) / temperature) for s in scores]
                r, best = rng.random() * sum(w), 2
                for i, x in enumerate(w):
                    r -= x
                    if r < 0:
                        best = i
                        break
            context = context + options[best]
            out += f"{BREAK_OPTIONS[best]} {nxt}"
        lines.append(f"{k}. {out}")
    return "\n".join(lines)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_equals_hand_implementation(local, temperature):
    utts = [Utterance(f"u{i}", tuple(s.split())) for i, s in enumerate(SENTENCES)]
    messages = build_messages(utts, POOL[:2])
    # both marks take several tokens here, so the scoring forward passes run (Gemma's take one: real-model tier)
    assert min(len(local.tokenizer(m, add_special_tokens=False)["input_ids"]) for m in (" /", " //")) > 1
    got = local(messages, temperature)
    assert got == _hand(local, messages, temperature)
    for line, text in zip(got.splitlines(), SENTENCES):
        assert line.split(". ", 1)[1].replace(" //", "").replace(" /", "") == text  # the words are kept
    assert local(messages, temperature) == got  # seeded per request


def test_choose_rule():
    rng = random.Random(0)
    assert choose([-1.0, -0.5, -0.5], 0.0, rng) == 1  # first maximum
    draws = [choose([math.log(0.7), math.log(0.2), math.log(0.1)], 1.0, random.Random(i)) for i in range(4000)]
    freq = [draws.count(k) / len(draws) for k in range(3)]
    assert freq == pytest.approx([0.7, 0.2, 0.1], abs=0.03)


def test_context_too_long_is_refused(tiny_gpt2):
    short = LocalCausalLM(tiny_gpt2, device="cpu")  # 128 positions: the prompt does not fit
    utts = [Utterance(f"u{i}", tuple(s.split())) for i, s in enumerate(SENTENCES)]
    with pytest.raises(ValueError, match="positions"):
        short(build_messages(utts, POOL), 0.0)


def test_cli_build_local_keeps_every_word(tmp_path, long_gpt2, capsys):
    from kometrics.cli import main

    utt = tmp_path / "utts.txt"
    utt.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    pool = tmp_path / "pool.txt"
    pool.write_text("\n".join(POOL) + "\n", encoding="utf-8")
    out = tmp_path / "refs"
    assert main(["lmre", "build", "--utterances", str(utt), "--pool", str(pool), "--out", str(out), "--llm", "local",
                 "--model", long_gpt2, "--n-iter", "4", "--min-count", "1", "--temperature", "1.0", "--quiet"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["llm"] == f"local:{long_gpt2}" and info["answers"] == {"valid": 4 * len(SENTENCES)}
    records = [json.loads(x) for x in (out / "references.jsonl").read_text("utf-8").splitlines()]
    for rec in records:
        assert rec["references"] and rec["discarded"] == {}
        for ref in rec["references"]:
            assert ref.replace(" //", "").replace(" /", "").split() == rec["words"]
