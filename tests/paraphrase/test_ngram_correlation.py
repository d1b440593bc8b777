"""n-gram columns equal sacrebleu / nltk called directly; bootstrap intervals equal scipy on the resamples."""

from __future__ import annotations

import numpy as np
import pytest
import sacrebleu
from nltk.translate.gleu_score import sentence_gleu
from scipy import stats

from kometrics.bench.paraphrase.correlation import correlate, paired_difference
from kometrics.bench.paraphrase.ngram import get_tokenizer, sentence_scores
from kometrics.klue_sts.bootstrap import pearson_rows, spearman_rows


@pytest.fixture(scope="module")
def real_pairs(klue_corpus):
    recs = klue_corpus.records[:25]
    return [r["candidate"] for r in recs], [r["reference"] for r in recs]


@pytest.mark.parametrize("tokenize", ["ko-mecab", "char", "13a"])
def test_sacrebleu_columns_equal_sacrebleu(real_pairs, tokenize):
    cands, refs = real_pairs
    got = sentence_scores(cands, refs, tokenize=tokenize)
    tok = get_tokenizer(tokenize)
    for i, (c, r) in enumerate(zip(cands, refs)):
        assert got["BLEU"][i] == pytest.approx(sacrebleu.sentence_bleu(c, [r], tokenize=tokenize).score / 100)
        assert got["chrF"][i] == pytest.approx(sacrebleu.sentence_chrf(c, [r]).score / 100)
        assert got["TER"][i] == pytest.approx(sacrebleu.sentence_ter(tok(c), [tok(r)]).score / 100)
        assert got["GLEU"][i] == pytest.approx(sentence_gleu([tok(r).split()], tok(c).split()))


def test_tokenizations_differ_and_bad_name(real_pairs):
    cands, refs = real_pairs
    mecab = sentence_scores(cands, refs, tokenize="ko-mecab")
    char = sentence_scores(cands, refs, tokenize="char")
    assert not np.allclose(mecab["BLEU"], char["BLEU"])
    np.testing.assert_allclose(mecab["chrF"], char["chrF"])  # chrF is character-based whatever the tokenizer
    assert get_tokenizer("ko-mecab")("한국어를 배운다") == "한국어 를 배운다"
    with pytest.raises(ValueError, match="tokenize must be one of"):
        sentence_scores(cands, refs, tokenize="spm")
    with pytest.raises(ValueError, match="candidates has 2 items but references has 1"):
        sentence_scores(["a", "b"], ["a"])


def test_identical_pair_scores():
    s = sentence_scores(["오늘은 날씨가 좋다."], ["오늘은 날씨가 좋다."], tokenize="ko-mecab")
    assert s["BLEU"][0] == pytest.approx(1.0) and s["GLEU"][0] == pytest.approx(1.0)
    assert s["TER"][0] == 0.0 and s["chrF"][0] == pytest.approx(1.0)


def _resamples(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """The pairs of each bootstrap resample as scipy.stats.bootstrap(paired=True) draws them from the seed."""
    return np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))


def test_bootstrap_matches_scipy_on_same_resamples():
    rng = np.random.default_rng(3)
    human = rng.normal(size=60)
    metric = human + rng.normal(size=60)
    metric[:5] = metric[5]  # ties for Spearman
    idx = _resamples(60, 300, seed=7)
    out = correlate(metric, human, n_resamples=300, seed=7)
    assert out["pearson"] == pytest.approx(stats.pearsonr(metric, human)[0])
    assert out["spearman"] == pytest.approx(stats.spearmanr(metric, human)[0])
    pears = [stats.pearsonr(metric[i], human[i])[0] for i in idx]
    spear = [stats.spearmanr(metric[i], human[i])[0] for i in idx]
    assert out["pearson_ci"] == pytest.approx(list(np.quantile(pears, [0.025, 0.975])))
    assert out["spearman_ci"] == pytest.approx(list(np.quantile(spear, [0.025, 0.975])))
    assert out["pearson_ci"][0] < out["pearson"] < out["pearson_ci"][1]
    # deterministic given the seed; another seed gives other resamples
    assert correlate(metric, human, n_resamples=300, seed=7) == out
    assert correlate(metric, human, n_resamples=300, seed=8)["pearson_ci"] != out["pearson_ci"]


def test_row_helpers_and_constant_column():
    x = np.array([[1.0, 2, 3, 5], [2, 2, 2, 2]])
    y = np.array([[1.0, 3, 2, 4], [1, 2, 3, 4]])
    assert pearson_rows(x, y)[0] == pytest.approx(stats.pearsonr(x[0], y[0])[0])
    assert spearman_rows(x, y)[0] == pytest.approx(stats.spearmanr(x[0], y[0])[0])
    assert np.isnan(pearson_rows(x, y)[1])
    with pytest.warns(RuntimeWarning) as record:
        out = correlate(np.ones(10), np.arange(10.0), n_resamples=20)
    for method in ("Pearson r", "Spearman rho"):
        assert any(str(w.message).startswith(f"{method} is undefined (the metric's scores are constant")
                   for w in record), [str(w.message) for w in record]
    assert np.isnan(out["pearson"]) and np.isnan(out["pearson_ci"][0])
    with pytest.raises(ValueError, match="finite"):
        correlate(np.array([1.0, np.nan, 2]), np.arange(3.0))
    with pytest.raises(ValueError, match="n_resamples must be an integer of at least 2"):
        correlate(np.arange(5.0), np.arange(5.0) ** 2, n_resamples=1)
    with pytest.warns(RuntimeWarning, match=r"undefined \(fewer than two pairs \(1\)\)"):
        assert np.isnan(correlate(np.array([1.0]), np.array([2.0]))["pearson"])


def test_paired_difference_matches_scipy_on_same_resamples():
    rng = np.random.default_rng(4)
    human = rng.normal(size=50)
    a = human + rng.normal(scale=0.5, size=50)
    b = human + rng.normal(scale=2.0, size=50)
    idx = _resamples(50, 200, seed=1)
    out = paired_difference(a, b, human, n_resamples=200, seed=1)
    assert out["difference"] == pytest.approx(stats.pearsonr(a, human)[0] - stats.pearsonr(b, human)[0])
    diffs = [stats.pearsonr(a[i], human[i])[0] - stats.pearsonr(b[i], human[i])[0] for i in idx]
    assert out["ci"] == pytest.approx(list(np.quantile(diffs, [0.025, 0.975])))
    assert out["ci"][0] > 0  # a is clearly closer to the human scores
    sp = paired_difference(a, b, human, method="spearman", n_resamples=200, seed=1)
    assert sp["difference"] == pytest.approx(stats.spearmanr(a, human)[0] - stats.spearmanr(b, human)[0])
