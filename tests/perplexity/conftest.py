"""Fixtures of the perplexity tests: real Korean sentences, long paragraphs, a pad-token copy of tiny GPT-2."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="session")
def sentences(data_dir) -> list[str]:
    """KLUE-STS dev sentences of varied lengths (12 of them)."""
    from kometrics.datasets_scripts.readers import read_klue_sts

    recs = read_klue_sts(data_dir)
    return [r["sentence1"] for r in recs[:6]] + [r["sentence2"] for r in recs[40:46]]


@pytest.fixture(scope="session")
def paragraphs(data_dir) -> list[str]:
    """Three KLUE-NER dev paragraphs of 6, 9 and 12 joined sentences (longer than 128 tiny-GPT-2 tokens)."""
    from kometrics.datasets_scripts.readers import read_klue_ner_sentences

    sents = read_klue_ner_sentences(data_dir)[:27]
    return [" ".join(sents[:6]), " ".join(sents[6:15]), " ".join(sents[15:27])]


@pytest.fixture(scope="session")
def tiny_gpt2_pad(tmp_path_factory, tiny_gpt2) -> str:
    """The tiny GPT-2 whose tokenizer has a pad token (its EOS, as evaluate assigns) and pads right."""
    from transformers import AutoTokenizer

    out = tmp_path_factory.mktemp("tiny-gpt2-pad")
    for name in ("config.json", "model.safetensors"):
        shutil.copy(f"{tiny_gpt2}/{name}", out / name)
    tok = AutoTokenizer.from_pretrained(tiny_gpt2)
    tok.pad_token = tok.eos_token
    tok.padding_side = "right"
    tok.save_pretrained(out)
    return str(out)


def just_over(tokenizer, text: str, n_tokens: int) -> str:
    """The shortest prefix of ``text``, cut at a space, that has more than ``n_tokens`` tokens."""
    words = text.split(" ")
    for k in range(1, len(words) + 1):
        prefix = " ".join(words[:k])
        if len(tokenizer(prefix, add_special_tokens=False)["input_ids"]) > n_tokens:
            return prefix
    raise ValueError("text too short")
