"""Causal perplexity: parity with evaluate's algorithm and a token-by-token loop, invariances, windows,
normalisations and bad input, on Korean sentences from ../shared/data with the tiny local GPT-2."""

from __future__ import annotations

import json
import math
import shutil
import unicodedata

import pytest

from kometrics.bench.perplexity import reference_perplexity
from kometrics.perplexity import (
    causal_nll,
    clear_model_cache,
    load_model,
    score,
    sliding_windows,
    token_surprisals,
)

from ..conftest import METRICS_DIR
from .conftest import hand_nll as _hand_nll
from .conftest import just_over

REL = 1e-5


def _close(a, b, rel=REL):
    return all(math.isclose(x, y, rel_tol=rel) for x, y in zip(a, b, strict=True))


def _ids(tokenizer, text, bos=True):
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    return ([tokenizer.bos_token_id] if bos else []) + ids


def test_parity_with_evaluates_algorithm(tiny_gpt2_pad, sentences):
    """evaluate's metric (transcribed in benchmark.reference_perplexity) on a pad-token tokenizer padding right."""
    model, tokenizer = load_model(tiny_gpt2_pad)
    assert tokenizer.pad_token is not None and tokenizer.padding_side == "right"
    theirs = reference_perplexity(sentences, model, tokenizer, batch_size=4)
    ours = score(sentences, tiny_gpt2_pad, batch_size=4)
    assert _close(ours["perplexities"], theirs)
    assert ours["mean_perplexity"] == pytest.approx(sum(theirs) / len(theirs), rel=REL)


def test_parity_with_token_by_token_loop(tiny_gpt2, sentences):
    model, tokenizer = load_model(tiny_gpt2)
    texts = sentences[:5]
    ours = score(texts, tiny_gpt2, batch_size=3)
    hand = [_hand_nll(model, _ids(tokenizer, t)) for t in texts]
    assert _close(ours["nll_sums"], hand)
    assert ours["token_counts"] == [len(_ids(tokenizer, t)) - 1 for t in texts]
    no_start = score(texts, tiny_gpt2, add_start_token=False)
    assert no_start["token_counts"] == [len(_ids(tokenizer, t, bos=False)) - 1 for t in texts]
    assert _close(no_start["nll_sums"], [_hand_nll(model, _ids(tokenizer, t, bos=False)) for t in texts])


def test_no_pad_token_needed(tiny_gpt2, sentences):
    _, tokenizer = load_model(tiny_gpt2)
    assert tokenizer.pad_token is None
    r = score(sentences, tiny_gpt2, batch_size=5)
    assert all(math.isfinite(p) and p > 1 for p in r["perplexities"])
    assert tokenizer.pad_token is None  # the shared tokenizer was not modified


def test_pad_token_or_not_gives_same_scores(tiny_gpt2, tiny_gpt2_pad, sentences):
    assert _close(score(sentences, tiny_gpt2, batch_size=6)["nll_sums"],
                  score(sentences, tiny_gpt2_pad, batch_size=6)["nll_sums"])


def test_batch_size_and_padding_side_invariance(tiny_gpt2, sentences, paragraphs):
    texts = [sentences[0], paragraphs[1], "짧다.", *sentences[1:6], paragraphs[0]]
    base = score(texts, tiny_gpt2, batch_size=1)
    for bs in (2, 3, 16):
        for side in ("left", "right"):
            r = score(texts, tiny_gpt2, batch_size=bs, padding_side=side)
            assert _close(r["nll_sums"], base["nll_sums"]), (bs, side)
            assert r["token_counts"] == base["token_counts"]


def test_order_invariance(tiny_gpt2, sentences):
    fwd = score(sentences, tiny_gpt2, batch_size=4)
    rev = score(sentences[::-1], tiny_gpt2, batch_size=4)
    assert _close(fwd["perplexities"], rev["perplexities"][::-1])


def test_tokenized_per_batch_longest_first(tiny_gpt2, sentences):
    model, tokenizer = load_model(tiny_gpt2)
    calls = []

    class Spy:
        def __getattr__(self, name):
            return getattr(tokenizer, name)

        def __call__(self, texts, **kw):
            calls.append(list(texts))
            return tokenizer(texts, **kw)

    causal_nll(sentences, model, Spy(), batch_size=4)
    assert [len(c) for c in calls] == [4, 4, 4]
    flat = [len(t) for c in calls for t in c]
    assert flat == sorted(flat, reverse=True)


# --- sliding windows --------------------------------------------------------------------------------------

def _context_start(t: int, length: int, window: int, stride: int) -> int:
    """From the definition: window k ends at min(k * stride + window, length) and starts ``window`` ids earlier
    (not before 0); target t is scored by the first window that ends after it, so it sees ids from the start
    of that window. Closed form of that first window's k."""
    if length <= window or t < window:
        return 0
    k = (t - window) // stride + 1  # the smallest k with k * stride + window > t
    return min(k * stride + window, length) - window


@pytest.mark.parametrize("length,window,stride", [(5, 8, 4), (8, 8, 4), (9, 8, 4), (300, 128, 64), (300, 128, 1),
                                                  (300, 128, 127), (129, 128, 100), (17, 5, 3)])
def test_sliding_windows_score_each_position_once(length, window, stride):
    wins = sliding_windows(length, window, stride)
    targets = [t for b, e, f in wins for t in range(f, e)]
    assert targets == list(range(1, length))
    for b, e, f in wins:
        assert 0 <= b < f <= e <= length and e - b <= window
        assert f - b >= (1 if b == 0 else window - stride)  # every target sees >= window - stride tokens
    if length <= window:
        assert wins == [(0, length, 1)]
    # the same windows as the definition: group the targets by the start of the window that scores them
    groups: dict[int, list[int]] = {}
    for t in range(1, length):
        groups.setdefault(_context_start(t, length, window, stride), []).append(t)
    assert wins == [(b, ts[-1] + 1, ts[0]) for b, ts in sorted(groups.items())]


def test_sliding_windows_by_hand():
    assert sliding_windows(9, 8, 4) == [(0, 8, 1), (1, 9, 8)]
    assert sliding_windows(17, 5, 3) == [(0, 5, 1), (3, 8, 5), (6, 11, 8), (9, 14, 11), (12, 17, 14)]
    assert sliding_windows(300, 128, 64) == [(0, 128, 1), (64, 192, 128), (128, 256, 192), (172, 300, 256)]


@pytest.mark.parametrize("stride", [0, 128, 200])
def test_bad_stride(stride):
    with pytest.raises(ValueError, match="stride"):
        sliding_windows(300, 128, stride)


def test_long_texts_windowed_like_a_hand_loop(tiny_gpt2, paragraphs):
    model, tokenizer = load_model(tiny_gpt2)
    text = just_over(tokenizer, paragraphs[0], 170)
    ids = _ids(tokenizer, text)
    assert len(ids) > 128 + 10  # longer than the tiny GPT-2's 128 positions
    stride = 48
    start = {t: _context_start(t, len(ids), 128, stride) for t in range(1, len(ids))}  # not from the code
    assert len(set(start.values())) >= 2  # more than one window
    r = score([text], tiny_gpt2, stride=stride)
    assert r["token_counts"] == [len(ids) - 1]  # every token once, none truncated
    assert r["nll_sums"][0] == pytest.approx(_hand_nll(model, ids, start), rel=REL)
    assert "window:128" in r["signature"] and f"stride:{stride}" in r["signature"]


def test_window_equals_full_context_when_text_fits(tiny_gpt2, sentences, paragraphs):
    model, tokenizer = load_model(tiny_gpt2)
    text = max(sentences, key=len)
    n = len(_ids(tokenizer, text))
    assert n < 128
    full = score([text], tiny_gpt2)["nll_sums"][0]
    assert score([text], tiny_gpt2, max_length=n, stride=1)["nll_sums"][0] == pytest.approx(full, rel=REL)
    # A shorter window than the text changes the number (less context), proving the window is used.
    short = score([text], tiny_gpt2, max_length=8, stride=4)["nll_sums"][0]
    assert short != pytest.approx(full, rel=1e-4)
    with pytest.raises(ValueError, match="exceeds the model's context"):
        score([text], tiny_gpt2, max_length=129)


# --- normalisations ------------------------------------------------------------------------------------------

def test_normalised_figures_from_the_same_nll(tiny_gpt2, sentences):
    r = score(sentences, tiny_gpt2, batch_size=4)
    total_bits = sum(r["nll_sums"]) / math.log(2)
    chars = [len(unicodedata.normalize("NFC", t)) for t in sentences]
    assert r["char_counts"] == chars
    assert r["byte_counts"] == [len(unicodedata.normalize("NFC", t).encode("utf-8")) for t in sentences]
    assert r["word_counts"] == [len(t.split()) for t in sentences]
    assert r["bits_per_character"] == pytest.approx(total_bits / sum(chars), rel=1e-12)
    assert r["bits_per_byte"] == pytest.approx(total_bits / sum(r["byte_counts"]), rel=1e-12)
    assert r["bits_per_token"] == pytest.approx(total_bits / sum(r["token_counts"]), rel=1e-12)
    assert r["corpus_perplexity"] == pytest.approx(2 ** r["bits_per_token"], rel=1e-12)
    assert r["word_perplexity"] == pytest.approx(math.exp(sum(r["nll_sums"]) / sum(r["word_counts"])), rel=1e-12)
    assert r["perplexities"] == pytest.approx([math.exp(n / c) for n, c in zip(r["nll_sums"], r["token_counts"])])
    assert r["mean_perplexity"] == pytest.approx(sum(r["perplexities"]) / len(sentences))


def test_characters_counted_after_nfc(tiny_gpt2):
    nfc = "한국어 문장"
    nfd = unicodedata.normalize("NFD", nfc)
    assert len(nfd) > len(nfc)
    r = score([nfc, nfd], tiny_gpt2)
    assert r["char_counts"] == [6, 6] and r["byte_counts"] == [16, 16]


def test_token_surprisals_sum_to_the_nll(tiny_gpt2, sentences, paragraphs):
    for text in (sentences[2], paragraphs[0]):
        pairs = token_surprisals(text, tiny_gpt2)
        r = score([text], tiny_gpt2)
        assert len(pairs) == r["token_counts"][0]
        assert sum(b for _, b in pairs) == pytest.approx(r["nll_sums"][0] / math.log(2), rel=REL)
        assert "".join(p for p, _ in pairs) == text  # byte-level pieces give the text back
        assert all(b > 0 for _, b in pairs)


# --- bad input, model cache, evaluate face -------------------------------------------------------------------

@pytest.mark.parametrize("bad,error,match", [
    (["좋다", None], TypeError, r"predictions\[1\] is NoneType"),
    (["좋다", 3], TypeError, r"predictions\[1\] is int"),
    (["좋다", "", "나쁘다"], ValueError, r"predictions\[1\] is empty"),
    ("한 문장", TypeError, "list of strings"),
    ([], ValueError, "predictions is empty"),
])
def test_bad_predictions(tiny_gpt2, bad, error, match):
    with pytest.raises(error, match=match):
        score(bad, tiny_gpt2)


def test_bad_options(tiny_gpt2):
    with pytest.raises(ValueError, match="mode must be"):
        score(["좋다"], tiny_gpt2, mode="masked")
    with pytest.raises(ValueError, match="batch_size"):
        score(["좋다"], tiny_gpt2, batch_size=0)
    with pytest.raises(ValueError, match="stride"):
        score(["좋다"], tiny_gpt2, stride=128)
    with pytest.raises(ValueError, match="dtype"):
        score(["좋다"], tiny_gpt2, dtype="int8")


def test_text_with_nothing_to_score(tiny_gpt2):
    model, tokenizer = load_model(tiny_gpt2)
    one = next(t for t in ("가", "a", ".") if len(_ids(tokenizer, t, bos=False)) == 1)
    with pytest.raises(ValueError, match=r"predictions\[1\] tokenizes to 1 token"):
        score(["좋은 날이다.", one], tiny_gpt2, add_start_token=False)
    with pytest.warns(UserWarning, match=r"indices \[1, 2\]"):
        r = score(["좋은 날이다.", one, ""], tiny_gpt2, add_start_token=False, empty="nan")
    assert math.isnan(r["perplexities"][1]) and math.isnan(r["perplexities"][2])
    assert r["token_counts"][1:] == [0, 0]
    alone = score(["좋은 날이다."], tiny_gpt2, add_start_token=False)
    assert r["corpus_perplexity"] == pytest.approx(alone["corpus_perplexity"])
    assert r["bits_per_character"] == pytest.approx(alone["bits_per_character"])  # NaN texts left out


def test_model_without_start_token_warns(tiny_gpt2, sentences, tmp_path):
    import shutil

    from transformers import AutoConfig, AutoTokenizer

    for name in ("model.safetensors",):
        shutil.copy(f"{tiny_gpt2}/{name}", tmp_path / name)
    cfg = AutoConfig.from_pretrained(tiny_gpt2)
    cfg.bos_token_id = cfg.eos_token_id = None
    cfg.save_pretrained(tmp_path)
    tok = AutoTokenizer.from_pretrained(tiny_gpt2)
    tok.bos_token = tok.eos_token = tok.unk_token = None
    tok.save_pretrained(tmp_path)
    with pytest.warns(UserWarning, match="no BOS or EOS"):
        r = score(sentences[:2], str(tmp_path))
    assert r["nll_sums"] == pytest.approx(score(sentences[:2], tiny_gpt2, add_start_token=False)["nll_sums"],
                                          rel=REL)
    assert "start:none" in r["signature"]


def test_model_loaded_once(tiny_gpt2, monkeypatch):
    import transformers

    clear_model_cache()
    loads = []
    original = transformers.AutoModelForCausalLM.from_pretrained

    def counting(*args, **kwargs):
        loads.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", counting)
    score(["첫 번째 문장."], tiny_gpt2)
    score(["두 번째 문장."], tiny_gpt2, batch_size=2)
    token_surprisals("세 번째 문장.", tiny_gpt2)
    assert len(loads) == 1
    score(["네 번째 문장."], tiny_gpt2, dtype="float64")  # another dtype is another model
    assert len(loads) == 2


def test_evaluate_module_equals_library(tiny_gpt2, sentences):
    import evaluate

    from tests.conftest import METRICS_DIR

    metric = evaluate.load(str(METRICS_DIR / "perplexity"))
    r = metric.compute(predictions=sentences[:4], model_id=tiny_gpt2, batch_size=2)
    lib = score(sentences[:4], tiny_gpt2, batch_size=2)
    assert r == lib
    with pytest.raises(ValueError, match=r"predictions\[0\] is empty"):
        metric.compute(predictions=[""], model_id=tiny_gpt2)
    with pytest.raises(TypeError, match=r"predictions\[1\] is int"):  # not silently cast to "3"
        metric.compute(predictions=["좋다", 3], model_id=tiny_gpt2)
    with pytest.raises(TypeError, match=r"predictions\[0\] is NoneType"):
        metric.add_batch(predictions=[None])


def test_log_softmax_in_chunks_changes_nothing(tiny_gpt2, sentences, monkeypatch):
    from kometrics.perplexity import modeling

    model, _ = load_model(tiny_gpt2)
    whole = score(sentences[:4], tiny_gpt2, batch_size=4)["nll_sums"]
    monkeypatch.setattr(modeling, "_LOGIT_ELEMENTS", 7 * model.config.vocab_size)  # 7 positions at a time
    assert _close(score(sentences[:4], tiny_gpt2, batch_size=4)["nll_sums"], whole, rel=1e-9)


# --- issue 14: Unicode forms, invisible text, masked LMs in causal mode -------------------------------------

def test_nfd_input_scores_as_nfc_and_counts_see_the_scored_text(tiny_gpt2, sentences):
    nfc = sentences[:3]
    nfd = [unicodedata.normalize("NFD", t) for t in nfc]
    assert nfd != nfc
    a, b = score(nfc, tiny_gpt2), score(nfd, tiny_gpt2)
    for key in ("nll_sums", "token_counts", "char_counts", "byte_counts", "perplexities", "bits_per_character"):
        assert a[key] == b[key], key
    assert "|norm:NFC|" in a["signature"]
    raw = score(nfd, tiny_gpt2, normalize=None)
    assert "|norm:none|" in raw["signature"]
    # off: the model sees the decomposed jamo and the characters are counted in the same text
    assert raw["char_counts"] == [len(t) for t in nfd]
    assert raw["byte_counts"] == [len(t.encode("utf-8")) for t in nfd]
    assert raw["token_counts"] != a["token_counts"]
    bits = sum(raw["nll_sums"]) / math.log(2)
    assert raw["bits_per_character"] == pytest.approx(bits / sum(len(t) for t in nfd), rel=1e-12)
    nfd_pairs = token_surprisals(nfd[0], tiny_gpt2)
    assert "".join(p for p, _ in nfd_pairs) == nfc[0]  # the pieces are of the normalised text
    with pytest.raises(ValueError, match="normalize must be one of"):
        score(nfc, tiny_gpt2, normalize="NFD")


@pytest.mark.parametrize("invisible", ["\u200b\u200b", "\ufeff", "\x00\x01", "\u2028 \u200b"])
def test_invisible_only_text_is_empty_text(tiny_gpt2, invisible):
    with pytest.raises(ValueError, match=r"predictions\[1\] is .*an empty text"):
        score(["오늘은 날씨가 맑다.", invisible], tiny_gpt2)
    with pytest.warns(UserWarning, match=r"indices \[1\]"):
        r = score(["오늘은 날씨가 맑다.", invisible], tiny_gpt2, empty="nan")
    assert math.isnan(r["perplexities"][1]) and r["char_counts"][1] == 0 and r["token_counts"][1] == 0


def test_causal_mode_refuses_a_masked_lm(tiny_bert, tmp_path):
    import evaluate

    with pytest.raises(ValueError, match=r'is a masked LM \(BertForMaskedLM\).*mode="pseudo"'):
        score(["오늘은 날씨가 맑다."], tiny_bert)
    metric = evaluate.load(str(METRICS_DIR / "perplexity"))
    with pytest.raises(ValueError, match='mode="pseudo"'):
        metric.compute(predictions=["오늘은 날씨가 맑다."], model_id=tiny_bert)
    # a config that does not say "masked": the model itself shows that later tokens change earlier predictions
    disguised = tmp_path / "bert-lm-head"
    shutil.copytree(tiny_bert, disguised)
    cfg = json.loads((disguised / "config.json").read_text())
    cfg["architectures"] = ["BertLMHeadModel"]
    (disguised / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match=r'changes with later tokens.*mode="pseudo"'):
        score(["오늘은 날씨가 맑다."], str(disguised))
    # the same checkpoint in pseudo mode is fine
    assert score(["오늘은 날씨가 맑다."], tiny_bert, mode="pseudo")["token_counts"][0] > 0
