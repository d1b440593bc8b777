"""n-gram language models: the trainer against a hand computation of interpolated Kneser-Ney, the metric
(through evaluate.load) against a hand back-off reading of the ARPA file, units, metadata and bad input."""

from __future__ import annotations

import json
import math
import random
import shutil
import subprocess
import sys
import unicodedata
import warnings
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import require_module

require_module("kenlm", "pip install 'kometrics[ngram]' (kenlm builds from its sdist: C++ compiler and cmake)")
require_module("kaldingram", "pip install 'kometrics[ngram]'")

from kometrics.models.ngram import arpa_log10prob, count_ngrams, estimate, read_arpa, train_ngram  # noqa: E402
from kometrics.perplexity import score  # noqa: E402
from kometrics.perplexity.ngram import EOS, SPACE, UNK, metadata_path, tokenize, tokenize_many  # noqa: E402
from kometrics.perplexity.scoring import unit_counts  # noqa: E402

METRIC = Path(__file__).resolve().parents[2] / "metrics" / "perplexity"
WORDS = "나는 너는 우리는 학교에 집에 간다 온다 밥을 물을 먹는다 마신다 오늘 내일 빨리 천천히 아주 조금 많이 책을 읽는다".split()
NEURAL_KEYS = {"perplexities", "mean_perplexity", "corpus_perplexity", "bits_per_token", "bits_per_character",
               "bits_per_byte", "word_perplexity", "nll_sums", "token_counts", "char_counts", "byte_counts",
               "word_counts", "signature"}


def toy_corpus() -> list[str]:
    """30 sentences of 2-6 words drawn with Zipf weights (seeded): rare and frequent units at every order."""
    rng = random.Random(5)
    weights = [1 / (i + 1) for i in range(len(WORDS))]
    return [" ".join(rng.choices(WORDS, weights=weights, k=rng.randint(2, 6))) for _ in range(30)]


TEST_TEXTS = ["나는 학교에 간다", "우리는 밥을 먹는다", "너는 책을 천천히 읽는다", "오늘 고양이가 온다",
              "빨리  마신다", "집에"]  # an unseen word / characters, a double space


# --------------------------------------------------------------------------------- hand computation


def hand_interpolated_kn(corpus_units: list[list[str]], order: int, smoothing: str):
    """Interpolated Kneser-Ney written from the definitions (Chen & Goodman 1999), independent of the trainer:
    returns P(w | context) as a function."""
    sents = [["<s>", *u, "</s>"] for u in corpus_units]
    c: Counter = Counter()
    for s in sents:
        for i in range(len(s)):
            for n in range(1, order + 1):
                if i + n <= len(s):
                    c[tuple(s[i:i + n])] += 1
    left: dict[tuple, set] = {}
    for g in c:
        if len(g) >= 2:
            left.setdefault(g[1:], set()).add(g[0])

    def a(x: tuple) -> int:
        if len(x) == order or x[0] == "<s>":
            return c[x]
        return len(left.get(x, ()))

    def discounts(m: int) -> tuple[float, float, float]:
        n = Counter(a(g) for g in c if len(g) == m and g != ("<s>",))
        y = n[1] / (n[1] + 2 * n[2])
        if smoothing == "kneser-ney":
            return (y, y, y)
        return (1 - 2 * y * n[2] / n[1], 2 - 3 * y * n[3] / n[2], 3 - 4 * y * n[4] / n[3])

    d = {m: discounts(m) for m in range(1, order + 1)}

    def disc(m: int, count: int) -> float:
        return d[m][min(count, 3) - 1]

    vocab = {g[0] for g in c if len(g) == 1 and g != ("<s>",)} | {"<unk>"}

    def p(w: str, h: tuple) -> float:
        if not h:
            seen = [g for g in c if len(g) == 1 and g != ("<s>",)]
            total = sum(a(g) for g in seen)
            gamma = sum(disc(1, a(g)) for g in seen) / total
            own = max(a((w,)) - disc(1, a((w,))), 0) / total if (w,) in c else 0.0
            return own + gamma / len(vocab)
        m = len(h) + 1
        seen = [g for g in c if len(g) == m and g[:-1] == h]
        if not seen:
            return p(w, h[1:])
        total = sum(a(g) for g in seen)
        gamma = sum(disc(m, a(g)) for g in seen) / total
        own = max(a(h + (w,)) - disc(m, a(h + (w,))), 0) / total if h + (w,) in c else 0.0
        return own + gamma * p(w, h[1:])

    def prob(w: str, context: list[str]) -> float:
        w = w if (w,) in c and w != "<s>" else "<unk>"
        h = tuple(context[max(0, len(context) - (order - 1)):]) if order > 1 else ()
        return p(w, h)

    return prob, vocab


def hand_sentence_log10(prob, units: list[str]) -> float:
    ctx, total = ["<s>"], 0.0
    for u in [*units, "</s>"]:
        total += math.log10(prob(u, ctx))
        ctx.append(u)
    return total


CASES = [(unit, sm, n) for unit in ("char", "eojeol") for sm in ("kneser-ney", "modified-kneser-ney")
         for n in (1, 2, 3) if not (unit == "eojeol" and sm == "modified-kneser-ney" and n == 3)]


@pytest.mark.parametrize("unit,smoothing,order", CASES)
def test_trainer_equals_hand_interpolated_kneser_ney(tmp_path, unit, smoothing, order):
    """The trainer's probabilities (float64) equal the hand computation to 1e-9, and so does the ARPA file
    (it stores log10 values with 17 significant digits, read back here as float64)."""
    corpus = toy_corpus()
    units = tokenize_many(corpus, unit)
    hand, vocab = hand_interpolated_kn(units, order, smoothing)
    model = estimate(count_ngrams(units, order), smoothing=smoothing)
    assert set(model.vocab) == vocab
    meta = train_ngram(corpus, tmp_path, order, unit, smoothing=smoothing)
    probs, bows = read_arpa(meta["arpa"])
    checked = 0
    for text in TEST_TEXTS + corpus[:5]:
        u = tokenize(text, unit)
        want = hand_sentence_log10(hand, u)
        assert model.sentence_log10prob(u) == pytest.approx(want, abs=1e-9)
        assert arpa_log10prob(probs, bows, order, u)[0] == pytest.approx(want, abs=1e-9)
        ctx = ["<s>"]
        for w in [*u, EOS]:
            assert model.prob(w, ctx) == pytest.approx(hand(w, ctx), abs=1e-9)
            ctx.append(w)
            checked += 1
    assert checked > 40


@pytest.mark.parametrize("order", [1, 2, 3])
def test_distributions_sum_to_one(order):
    units = tokenize_many(toy_corpus(), "char")
    model = estimate(count_ngrams(units, order), smoothing="modified-kneser-ney")
    for ctx in (["<s>"], ["<s>", "나"], ["학", "교"], ["쀍", "쀍"], [SPACE, "간"]):
        assert math.fsum(model.prob(w, ctx) for w in model.vocab) == pytest.approx(1.0, abs=1e-12)
    assert 0 < model.prob("쀍", ["<s>"]) == model.prob(UNK, ["<s>"])


def test_discounts_that_cannot_be_estimated_are_an_error():
    units = tokenize_many(["가 나", "가 나", "가 나"], "eojeol")
    with pytest.raises(ValueError, match="order 1 .*counts-of-counts"):
        estimate(count_ngrams(units, 2), smoothing="modified-kneser-ney")
    model = estimate(count_ngrams(units, 2), smoothing="kneser-ney", discounts=[0.5, (0.5, 0.7, 0.9)])
    assert model.discounts == [(0.5, 0.5, 0.5), (0.5, 0.7, 0.9)]
    with pytest.raises(ValueError, match="smoothing must be"):
        estimate(count_ngrams(units, 2), smoothing="witten-bell")


# ------------------------------------------------------------------------------------------- the metric


@pytest.fixture(scope="module")
def char_model(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("ngram-char")
    train_ngram(toy_corpus(), out, 3, "char", source="toy")
    return str(out)


@pytest.fixture(scope="module")
def perplexity_metric():
    import evaluate

    return evaluate.load(str(METRIC))


def test_evaluate_load_scores_an_arpa_model_as_the_hand_back_off(char_model, perplexity_metric):
    """Same result keys as a neural model (plus unknown_units); NLL = the back-off reading of the ARPA file
    (kenlm keeps float32 probabilities, hence 1e-6 relative)."""
    arpa = f"{char_model}/model.arpa"
    probs, bows = read_arpa(arpa)
    with pytest.warns(UserWarning, match="unknown unit"):
        r = perplexity_metric.compute(predictions=TEST_TEXTS, model_id=arpa)
    assert set(r) == NEURAL_KEYS | {"unknown_units"}
    for i, text in enumerate(TEST_TEXTS):
        units = tokenize(text, "char")
        log10, unknown = arpa_log10prob(probs, bows, 3, units)
        assert r["nll_sums"][i] == pytest.approx(-log10 * math.log(10), rel=1e-6)
        assert r["unknown_units"][i] == unknown
        nfc = unicodedata.normalize("NFC", text)
        assert r["token_counts"][i] == len(nfc) + 1  # every character, then </s>
        assert r["char_counts"][i] == unit_counts(text)["chars"] == len(units)
    seen = set("".join(toy_corpus()))
    assert r["unknown_units"] == [sum(c not in seen and not c.isspace() for c in t) for t in TEST_TEXTS]
    assert r["unknown_units"][3] > 0
    total = math.fsum(r["nll_sums"])
    assert r["bits_per_character"] == pytest.approx(total / math.log(2) / sum(r["char_counts"]), rel=1e-12)
    assert r["corpus_perplexity"] == pytest.approx(math.exp(total / sum(r["token_counts"])), rel=1e-12)
    for part in ("mode:ngram", "unit:char", "order:3", "bos:<s>", "eos:</s>", "unk:<unk>=", "space:<sp>",
                 "smoothing:modified-kneser-ney", "data:sha256:"):
        assert part in r["signature"], part
    # the folder written by the trainer is a model id too
    assert score(TEST_TEXTS[:2], char_model)["nll_sums"] == pytest.approx(r["nll_sums"][:2], rel=1e-12)


def test_boundaries_options(char_model):
    texts = TEST_TEXTS[:3]
    arpa = f"{char_model}/model.arpa"
    probs, bows = read_arpa(arpa)
    no_eos = score(texts, char_model, ngram_eos=False)
    no_bos = score(texts, char_model, add_start_token=False)
    for i, text in enumerate(texts):
        units = tokenize(text, "char")
        assert no_eos["token_counts"][i] == len(units) == no_eos["char_counts"][i]
        want = arpa_log10prob(probs, bows, 3, units, eos=False)[0]
        assert no_eos["nll_sums"][i] == pytest.approx(-want * math.log(10), rel=1e-6)
        want = arpa_log10prob(probs, bows, 3, units, bos=False)[0]
        assert no_bos["nll_sums"][i] == pytest.approx(-want * math.log(10), rel=1e-6)
    assert "eos:none" in no_eos["signature"] and "bos:none" in no_bos["signature"]


def test_unit_surprisals_sum_to_the_nll(char_model):
    from kometrics.perplexity import token_surprisals

    text = TEST_TEXTS[3]
    pieces = token_surprisals(text, char_model)
    assert [p for p, _ in pieces] == [*text, EOS]
    r = score([text], char_model)
    assert sum(b for _, b in pieces) == pytest.approx(r["nll_sums"][0] / math.log(2), rel=1e-9)


def test_metadata_is_required_or_the_unit_given(char_model, tmp_path):
    arpa = tmp_path / "plain.arpa"
    shutil.copy(f"{char_model}/model.arpa", arpa)
    with pytest.raises(ValueError, match="no metadata.*ngram_unit="):
        score(TEST_TEXTS, str(arpa))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = score(TEST_TEXTS, str(arpa), ngram_unit="char")
        assert r["nll_sums"] == pytest.approx(score(TEST_TEXTS, char_model)["nll_sums"], rel=1e-12)
    assert "smoothing:unknown" in r["signature"]
    with pytest.raises(ValueError, match="contradicts the model's metadata"):
        score(TEST_TEXTS, char_model, ngram_unit="eojeol")
    with pytest.raises(ValueError, match="ngram_unit must be one of"):
        score(TEST_TEXTS, str(arpa), ngram_unit="syllable")
    meta = json.loads(metadata_path(f"{char_model}/model.arpa").read_text(encoding="utf-8"))
    assert meta["unit"] == "char" and meta["order"] == 3 and meta["training_data"]["sentences"] == 30
    assert meta["symbols"] == {"bos": "<s>", "eos": "</s>", "unk": "<unk>", "space": "<sp>"}
    unigram = tmp_path / "unigram"
    train_ngram(toy_corpus(), unigram, 1, "char")
    assert "order:1" in score(["나는"], str(unigram))["signature"]  # not the 2 of its kenlm file


def test_bad_input_and_neural_options(char_model):
    with pytest.raises(ValueError, match=r"predictions\[1\] is empty"):
        score(["가", ""], char_model)
    with pytest.raises(TypeError, match=r"predictions\[0\]"):
        score([None], char_model)
    with pytest.raises(ValueError, match="max_length=8.*not an option of n-gram models"):
        score(["가"], char_model, max_length=8)
    with pytest.raises(ValueError, match="mode='pseudo'"):
        score(["가"], char_model, mode="pseudo")
    with pytest.warns(UserWarning, match="no scored token"):
        r = score(["가", ""], char_model, empty="nan")
    assert math.isnan(r["perplexities"][1]) and r["token_counts"][1] == 0


def test_units():
    assert tokenize("가 나\t다", "char") == ["가", SPACE, "나", "<U+0009>", "다"]
    # NFC: conjoining jamo become one syllable, one unit, as in bits per character
    assert tokenize(unicodedata.normalize("NFD", "한국"), "char") == ["한", "국"]
    assert tokenize("<s> 나 \\x <unk>", "eojeol") == ["\\<s>", "나", "\\\\x", "\\<unk>"]
    require_module("kiwipiepy", "pip install 'kometrics[ngram]'")
    units = tokenize("오늘은 날씨가  맑다.", "morpheme")
    assert units == ["오늘/NNG", "은/JX", SPACE, "날씨/NNG", "가/JKS", SPACE, "맑/VA", "다/EF", "./SF"]


def test_eojeol_and_morpheme_models(tmp_path):
    corpus = toy_corpus()
    train_ngram(corpus, tmp_path / "eojeol", 2, "eojeol", smoothing="kneser-ney")
    with pytest.warns(UserWarning, match="1 unknown unit"):
        r = score(["나는 고양이를 간다"], str(tmp_path / "eojeol"))
    assert r["token_counts"] == [3 + 1] and r["unknown_units"] == [1]
    require_module("kiwipiepy", "pip install 'kometrics[ngram]'")
    meta = train_ngram(corpus, tmp_path / "morph", 2, "morpheme", smoothing="kneser-ney")
    assert meta["tokenizer"]["name"] == "kiwipiepy" and meta["tokenizer"]["version"]
    r = score(["우리는 밥을 먹는다"], str(tmp_path / "morph"))
    units = tokenize("우리는 밥을 먹는다", "morpheme")
    assert r["token_counts"] == [len(units) + 1]
    assert "unit:morpheme" in r["signature"] and "tokenizer:kiwipiepy-" in r["signature"]


def test_kenlm_binary_format(char_model, tmp_path):
    """kenlm's binary format scores as the ARPA file (needs kenlm's build_binary program on PATH)."""
    build_binary = shutil.which("build_binary")
    if build_binary is None:
        pytest.skip("kenlm's build_binary is not on PATH (pip's kenlm builds only the Python module)")
    shutil.copy(f"{char_model}/model.json", tmp_path / "model.json")
    subprocess.run([build_binary, f"{char_model}/model.arpa", str(tmp_path / "model.bin")], check=True,
                   capture_output=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = score(TEST_TEXTS, char_model)
        b = score(TEST_TEXTS, str(tmp_path / "model.bin"))
        c = score(TEST_TEXTS, str(tmp_path))  # the folder: model.bin is preferred
    assert b["nll_sums"] == pytest.approx(a["nll_sums"], rel=1e-6) == c["nll_sums"]


def test_kenlm_and_kiwipiepy_are_imported_lazily():
    code = ("import sys, evaluate; import kometrics.perplexity; "
            "assert 'kenlm' not in sys.modules and 'kiwipiepy' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_cli_trains_and_scores(tmp_path):
    from kometrics.cli import main

    data = tmp_path / "train.txt"
    data.write_text("\n".join(toy_corpus()) + "\n\n", encoding="utf-8")
    out = tmp_path / "lm"
    assert main(["perplexity", "ngram", "--order", "3", "--unit", "char", "--smoothing", "kneser-ney",
                 "--data", str(data), "--out", str(out)]) == 0
    meta = json.loads((out / "model.json").read_text(encoding="utf-8"))
    assert meta["smoothing"] == "kneser-ney" and meta["training_data"]["empty_skipped"] == 1
    want = estimate(count_ngrams(tokenize_many(toy_corpus(), "char"), 3), smoothing="kneser-ney")
    r = score(["나는 학교에 간다"], str(out))
    assert -r["nll_sums"][0] / math.log(10) == pytest.approx(
        want.sentence_log10prob(tokenize("나는 학교에 간다", "char")), rel=1e-6)


# ------------------------------------------------------------------------------ the generations comparison


def test_generations_hold_the_test_sentences_apart(monkeypatch):
    import kometrics.datasets_scripts.readers as readers
    from kometrics.bench.generations import load_texts, split_dev

    monkeypatch.setattr(readers, "read_korsts", lambda split, d=None: [
        {"sentence1": "가나 다", "sentence2": "라마"}, {"sentence1": " 바사 ", "sentence2": "가나 다"}])
    monkeypatch.setattr(readers, "read_kornli", lambda d=None: [{"sentence1": "아자", "sentence2": "차카"}])
    monkeypatch.setattr(readers, "read_klue_sts", lambda d=None: [{"sentence1": "라마", "sentence2": "타파"}])
    texts = load_texts()
    assert texts["test"] == ["라마", "타파"]
    assert texts["train"] == ["가나 다", "바사", "아자", "차카"]  # stripped, duplicates and the test sentence out
    assert texts["overlap_removed"] == 1 and texts["train_rows"] == 6
    assert texts["train_pairs"] == [("바사", "가나 다"), ("아자", "차카")]
    fit, dev = split_dev(texts["train"], 0.25)
    assert len(dev) == 1 and sorted(fit + dev) == sorted(texts["train"])
    fit, dev = split_dev(texts["train"], 0.25, pairs=texts["train_pairs"])  # a pair stays on one side
    assert sorted(dev) in (["가나 다", "바사"], ["아자", "차카"]) and sorted(fit + dev) == sorted(texts["train"])


def test_generations_table_small(tmp_path, data_dir, tiny_gpt2):
    """A small run: the table's bits per character are the metric's, the causal LM's too."""
    require_module("kiwipiepy", "pip install 'kometrics[ngram]'")
    from kometrics.bench.generations import format_table, load_texts, run

    result = run(data_dir=str(data_dir), out=tmp_path, lm=tiny_gpt2, train_limit=400, test_limit=12,
                 char_order=3, morpheme_order=2, eojeol_order=1, speed_sentences=50)
    rows = {r["model"]: r for r in result["rows"]}
    assert list(rows) == ["char unigram", "char 3-gram", "morpheme 2-gram", "eojeol 1-gram",
                          f"causal LM {Path(tiny_gpt2).name}"]
    test = load_texts(data_dir)["test"][:12]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = score(test, str(tmp_path / "char-3"), ngram_eos=False)
        assert rows["char 3-gram"]["bits_per_character"] == pytest.approx(r["bits_per_character"], rel=1e-12)
        assert rows["char 3-gram"]["tokens"] == sum(r["char_counts"])  # char units without </s>: one per char
        r = score(test, tiny_gpt2)
    assert rows[f"causal LM {Path(tiny_gpt2).name}"]["bits_per_character"] == pytest.approx(
        r["bits_per_character"], rel=1e-6)
    assert result["speed"]["sentences"] == 50 and result["speed"]["max_relative_gap"] < 1e-5
    table = format_table(result)
    assert all(name in table for name in rows)
    assert (tmp_path / "generations.json").is_file()
