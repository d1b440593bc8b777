"""``kometrics bench perplexity``: its hand loop, its corpora, evaluate's tokenizer preparation, the batch size
evaluate's algorithm can afford, and one small run in worker processes (ratios, peaks, agreement printed)."""

from __future__ import annotations

import json

import pytest

from kometrics.bench import perplexity as bench
from kometrics.perplexity import load_model

from .conftest import hand_nll


def test_hand_nll_sums_equal_the_token_by_token_loop(tiny_gpt2, sentences):
    model, tokenizer = load_model(tiny_gpt2)
    texts = sentences[:3]
    got = bench.hand_nll_sums(texts, model, tokenizer, chunk=4)  # chunks of positions change nothing
    ids = [[tokenizer.bos_token_id, *tokenizer(t, add_special_tokens=False)["input_ids"]] for t in texts]
    assert got == pytest.approx([hand_nll(model, x) for x in ids], rel=1e-7)  # float32 forward passes


def test_mixed_corpus_short_sentences_then_long_texts(tiny_gpt2, data_dir):
    _, tokenizer = load_model(tiny_gpt2)
    texts = bench.mixed_corpus(data_dir, tokenizer, n_short=5, n_long=2, long_tokens=100)
    assert texts[:5] == bench.short_corpus(data_dir, 5)
    longs = texts[5:]
    assert len(longs) == 2 and longs[0] != longs[1]
    assert all(len(tokenizer(t, add_special_tokens=False)["input_ids"]) >= 100 for t in longs)


def test_evaluate_tokenizer_and_affordable_batch(tiny_gpt2, sentences):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_gpt2)
    assert bench.evaluate_tokenizer(tok, 1).pad_token is None  # evaluate pads only when batching
    assert bench.evaluate_tokenizer(tok, 2).pad_token == "<|endoftext|>"
    texts = sentences[:4]
    width = max(len(x) for x in tok(texts, add_special_tokens=False)["input_ids"]) + 1
    per_row = width * 1000 * 4 * bench.EVALUATE_COPIES  # bytes of logits per row, vocabulary 1,000
    bs, notes = bench._evaluate_plan(texts, tok, 1000, [2, 4], max_gib=2.5 * per_row / 2**30, device="cpu")
    assert bs == 2 and len(notes) == 1 and notes[0].startswith("batch_size 4:")
    bs, notes = bench._evaluate_plan(texts, tok, 1000, [2, 4], max_gib=1.5 * per_row / 2**30, device="cpu")
    assert bs == 1 and "ran at batch_size 1" in notes[-1]


def test_bench_prints_ratios_peaks_and_agreement(tiny_gpt2, data_dir, tmp_path, capsys):
    out = tmp_path / "bench.json"
    bench.main(["--model", tiny_gpt2, "--corpus", "short", "--limit", "6", "--batch-size", "3", "--threads", "1",
                "--data-dir", str(data_dir), "--json", str(out)])
    printed = capsys.readouterr().out
    assert "throughput kometrics / evaluate's algorithm (batch 3): batch 3:" in printed
    assert "peak RSS beyond load, kometrics: batch 3:" in printed and "within" in printed
    (case,) = json.loads(out.read_text(encoding="utf-8"))
    hand, ev, (ours,) = case["hand"], case["evaluate"], case["kometrics"]
    assert ours["nll"] == pytest.approx(hand["nll"], rel=1e-5)
    assert ev["nll"] == pytest.approx(hand["nll"], rel=1e-5)  # GPT-2 pads right: evaluate is right here
    assert ours["counts"] == hand["counts"] and ours["texts"] == 6
    assert all(r["peak_bytes"] >= r["load_bytes"] > 0 for r in (hand, ev, ours))
