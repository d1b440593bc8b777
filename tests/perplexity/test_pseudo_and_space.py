"""Pseudo-perplexity of a masked LM (Salazar et al. 2020; word-l2r of Kauf & Ivanova 2023) against a hand loop
on the tiny BERT, and the Space answering through gradio_client."""

from __future__ import annotations

import math

import pytest

from kometrics.perplexity import load_model, score, token_surprisals

from .conftest import hand_pll_nll as _hand_pll_nll
from .conftest import just_over

REL = 1e-5


@pytest.mark.parametrize("variant", ["original", "word_l2r"])
def test_pseudo_equals_hand_loop(tiny_bert, sentences, variant):
    model, tokenizer = load_model(tiny_bert, "masked")
    texts = sorted(sentences, key=len)[:2]
    r = score(texts, tiny_bert, mode="pseudo", pll_variant=variant, batch_size=16)
    hand = [_hand_pll_nll(model, tokenizer, t, word_l2r=variant == "word_l2r") for t in texts]
    assert r["nll_sums"] == pytest.approx([h[0] for h in hand], rel=REL)
    assert r["token_counts"] == [h[1] for h in hand]
    assert r["perplexities"] == pytest.approx([math.exp(h[0] / h[1]) for h in hand], rel=REL)
    assert f"pll:{variant}" in r["signature"]


def test_word_l2r_differs_only_on_multi_piece_words(tiny_bert, sentences):
    _, tokenizer = load_model(tiny_bert, "masked")
    text = next(t for t in sentences if any(p.startswith("##") for p in tokenizer.tokenize(t)))
    a = score([text], tiny_bert, mode="pseudo")["nll_sums"][0]
    b = score([text], tiny_bert, mode="pseudo", pll_variant="word_l2r")["nll_sums"][0]
    assert a != pytest.approx(b, rel=1e-6)
    single = "가 나 다"  # one piece per word: the two variants mask the same tokens
    if not any(p.startswith("##") for p in tokenizer.tokenize(single)):
        assert score([single], tiny_bert, mode="pseudo")["nll_sums"] == pytest.approx(
            score([single], tiny_bert, mode="pseudo", pll_variant="word_l2r")["nll_sums"], rel=REL)


def test_pseudo_batch_invariance_and_special_tokens(tiny_bert, sentences):
    _, tokenizer = load_model(tiny_bert, "masked")
    texts = sorted(sentences, key=len)[:2]
    base = score(texts, tiny_bert, mode="pseudo", batch_size=1)
    for bs in (7, 64):
        assert score(texts, tiny_bert, mode="pseudo", batch_size=bs)["nll_sums"] == pytest.approx(
            base["nll_sums"], rel=REL)
    special = set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}
    assert base["token_counts"] == [sum(t not in special for t in tokenizer(x)["input_ids"]) for x in texts]


def test_pseudo_long_text_uses_a_window(tiny_bert, paragraphs):
    _, tokenizer = load_model(tiny_bert, "masked")
    text = just_over(tokenizer, paragraphs[0], 130)
    n = len(tokenizer(text, add_special_tokens=False)["input_ids"])
    assert n > 128
    r = score([text], tiny_bert, mode="pseudo", batch_size=64)
    assert r["token_counts"] == [n] and math.isfinite(r["perplexities"][0])


def test_pseudo_bad_input(tiny_bert):
    with pytest.raises(ValueError, match=r"predictions\[1\] is '   ': only spaces .* an empty text"):
        score(["좋은 날이다.", "   "], tiny_bert, mode="pseudo")
    with pytest.raises(ValueError, match="exceeds the model's context"):
        score(["좋은 날이다."], tiny_bert, mode="pseudo", max_length=4096)
    with pytest.raises(ValueError, match="pll_variant"):
        score(["좋은 날이다."], tiny_bert, mode="pseudo", pll_variant="whole_word")


def test_pseudo_token_surprisals(tiny_bert, sentences):
    text = sentences[1]
    pairs = token_surprisals(text, tiny_bert, mode="pseudo")
    r = score([text], tiny_bert, mode="pseudo")
    assert len(pairs) == r["token_counts"][0]
    assert sum(b for _, b in pairs) == pytest.approx(r["nll_sums"][0] / math.log(2), rel=REL)
    assert "".join(p for p, _ in pairs) == text.rstrip()[: len("".join(p for p, _ in pairs))]


def test_space_answers_through_gradio_client(tiny_gpt2, sentences):
    from tests.conftest import METRICS_DIR, serve_app

    with serve_app(METRICS_DIR / "perplexity" / "app.py") as (_, client):
        summary, highlighted, table, used = client.predict(sentences[0], tiny_gpt2, "causal", api_name="/surprisal")
    expected = score([sentences[0]], tiny_gpt2)
    assert summary["bits_per_character"] == pytest.approx(expected["bits_per_character"], rel=REL)
    assert summary["token_count"] == expected["token_counts"][0]
    assert summary["model"] == tiny_gpt2 and used == f"Scored with `{tiny_gpt2}`; signature `{expected['signature']}`."
    rows = table["data"] if isinstance(table, dict) else table
    assert len(rows) == expected["token_counts"][0]
    assert sum(row[1] for row in rows) == pytest.approx(expected["nll_sums"][0] / math.log(2), rel=1e-3)
    spans = highlighted if isinstance(highlighted, list) else highlighted.get("value", highlighted)
    assert len(spans) == len(rows)
