"""Fixtures of the perplexity tests: real Korean sentences, long paragraphs, a pad-token copy of tiny GPT-2,
tiny Gemma 3 models (with and without final logit soft-capping), and the token-by-token hand loop."""

from __future__ import annotations

import shutil

import pytest
import torch


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


def hand_nll(model, ids, context_start=None) -> float:
    """-sum ln P(ids[t] | ids[c_t:t]) with one forward pass per token (c_t = 0 unless given), from the model's
    own logits (its full forward pass), float64 log-softmax."""
    total = 0.0
    with torch.no_grad():
        for t in range(1, len(ids)):
            c = 0 if context_start is None else context_start[t]
            logits = model(torch.tensor([ids[c:t]])).logits[0, -1]
            total -= torch.log_softmax(logits.double(), -1)[ids[t]].item()
    return total


def hand_pll_nll(model, tokenizer, text, word_l2r=False):
    """-PLL: mask each non-special token in turn (and, word_l2r, the later pieces of its word); one forward
    pass per masked copy."""
    enc = tokenizer(text)
    ids, words = enc["input_ids"], enc.word_ids()
    special = set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}  # [UNK] stands for text: scored
    total, n = 0.0, 0
    with torch.no_grad():
        for i, tid in enumerate(ids):
            if tid in special:
                continue
            masked = list(ids)
            masked[i] = tokenizer.mask_token_id
            if word_l2r:
                for j in range(i + 1, len(ids)):
                    if words[j] is not None and words[j] == words[i]:
                        masked[j] = tokenizer.mask_token_id
            logits = model(torch.tensor([masked])).logits[0, i]
            total -= torch.log_softmax(logits.double(), -1)[tid].item()
            n += 1
    return total, n


def build_tiny_gemma3(out, tokenizer_dir: str, softcap: float | None) -> str:
    """A Gemma 3 text model (3 layers of width 64, two with 8-token sliding attention, tied embeddings
    scaled up so that logits reach a few units) with the tiny GPT-2's tokenizer, saved to ``out``."""
    from transformers import AutoTokenizer, Gemma3ForCausalLM, Gemma3TextConfig

    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    cfg = Gemma3TextConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=3,
                           num_attention_heads=2, num_key_value_heads=1, head_dim=32, max_position_embeddings=128,
                           sliding_window=8, layer_types=["sliding_attention", "sliding_attention", "full_attention"],
                           final_logit_softcapping=softcap, bos_token_id=tok.bos_token_id,
                           eos_token_id=tok.eos_token_id, pad_token_id=None)
    torch.manual_seed(0)
    model = Gemma3ForCausalLM(cfg).eval()
    with torch.no_grad():
        model.model.embed_tokens.weight.mul_(10)  # tied with lm_head: logits of a few units, softcap 3 bites
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return str(out)


@pytest.fixture(scope="session")
def tiny_gemma3(tmp_path_factory, tiny_gpt2) -> str:
    """Tiny Gemma 3: tied, scaled embeddings, final norm, no soft-capping (the real 270M's head)."""
    return build_tiny_gemma3(tmp_path_factory.mktemp("tiny-gemma3"), tiny_gpt2, softcap=None)


@pytest.fixture(scope="session")
def tiny_gemma3_softcap(tmp_path_factory, tiny_gpt2) -> str:
    """Tiny Gemma 3 with ``final_logit_softcapping=3`` (as Gemma 2 ships it, at 30)."""
    return build_tiny_gemma3(tmp_path_factory.mktemp("tiny-gemma3-softcap"), tiny_gpt2, softcap=3.0)
