"""``kometrics bench perplexity-real``: its pieces (word shuffle, KLUE sentences, the hand token loop) and the
whole check on the tiny GPT-2, where the answers are known: the metric equals the hand loop, and evaluate's
algorithm equals it only when it pads on the right (GPT-2 has absolute positions, so left padding moves them)."""

from __future__ import annotations

import numpy as np
import pytest


def test_shuffle_words_is_a_different_permutation():
    from kometrics.bench.perplexity_real import shuffle_words

    text = "오늘은 날씨가 정말 맑고 좋다."
    for seed in range(20):
        out = shuffle_words(text, np.random.default_rng(seed))
        assert out != text and sorted(out.split()) == sorted(text.split())
    assert shuffle_words(text, np.random.default_rng(3)) == shuffle_words(text, np.random.default_rng(3))
    with pytest.raises(ValueError, match="two different eojeol"):
        shuffle_words("가 가", np.random.default_rng(0))


def test_klue_sentences_are_distinct_and_long_enough(data_dir):
    from kometrics.bench.perplexity_real import klue_sentences
    from kometrics.datasets_scripts.readers import read_klue_sts

    texts = klue_sentences(50, data_dir)
    assert len(texts) == len(set(texts)) == 50
    assert all(len(t.split()) >= 3 for t in texts)
    first = [" ".join(r["sentence1"].split()) for r in read_klue_sts(data_dir)]
    assert all(t in first for t in texts)
    with pytest.raises(ValueError, match="asked for"):
        klue_sentences(10_000, data_dir)


def test_hand_token_loop_equals_the_metric(tiny_gpt2_pad, sentences):
    from transformers import AutoTokenizer

    from kometrics.bench.perplexity_real import hand_token_loop, relative_differences
    from kometrics.perplexity import score
    from kometrics.perplexity.modeling import load_model

    model, _ = load_model(tiny_gpt2_pad, "causal", "cpu")
    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_pad)
    hand = hand_token_loop(sentences[:5], model, tokenizer)
    ours = score(sentences[:5], tiny_gpt2_pad, batch_size=4, device="cpu")
    assert hand["token_counts"] == ours["token_counts"]
    assert hand["token_counts"] == [len(tokenizer(t, add_special_tokens=False)["input_ids"]) for t in sentences[:5]]
    assert relative_differences(ours["nll_sums"], hand["float64"]).max() < 1e-5
    assert relative_differences(ours["nll_sums"], hand["float32"]).max() < 1e-5


def test_check_on_tiny_gpt2(tiny_gpt2_pad, data_dir):
    import io

    from kometrics.bench.perplexity_real import run

    buf = io.StringIO()
    res = run(tiny_gpt2_pad, n=8, check=5, batch_size=4, data_dir=str(data_dir), out=buf)
    text = buf.getvalue()
    assert "original order has the lower perplexity" in text and "bits per character" in text
    assert 0 <= res["shuffle"]["original_lower"] <= 8
    assert res["exactness"]["vs_hand_loop"] < 1e-5
    assert res["exactness"]["batch1_vs_batch"] < 1e-5 and res["exactness"]["reversed_vs_batch"] < 1e-5
    ev = res["evaluate"]
    assert ev["padding_side"] == "right" and ev["other_padding_side"] == "left"
    assert ev["vs_hand_loop_max"] < 1e-5 and ev["alone_vs_hand_loop_max"] < 1e-5
    assert ev["other_padding_side_vs_hand_loop_max"] > 1e-3  # left padding shifts GPT-2's absolute positions
