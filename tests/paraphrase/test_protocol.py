"""`--protocol paper`: the Korean BERTScore paper's settings in one switch (unsmoothed sentence BLEU, BERTScore over the word
pieces only, Table 2 at layer round(8/12 * depth), per-rater standard scores), recorded in the signature."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sacrebleu

from kometrics.bench.paraphrase.benchmark import BenchmarkConfig, bert_column, run_benchmark

N = 30


@pytest.fixture(scope="module")
def runs(tiny_bert, klue_corpus, data_dir):
    common = dict(data="klue-sts", model=tiny_bert, limit=N, n_boot=50, seed=0, progress=False, layers="4",
                  idf="off", data_dir=str(data_dir), batch_size=16, examples=0, tokenize="char")
    paper = run_benchmark(BenchmarkConfig(protocol="paper", **common), corpus=klue_corpus)
    default = run_benchmark(BenchmarkConfig(**common), corpus=klue_corpus)
    return paper, default


def test_paper_bleu_is_sacrebleu_unsmoothed(runs):
    paper, default = runs
    want = np.array([sacrebleu.sentence_bleu(c, [r], smooth_method="none", tokenize="char").score / 100
                     for c, r in zip(paper.candidates, paper.references)])
    np.testing.assert_allclose(paper.columns["BLEU"], want, rtol=0, atol=1e-12)
    smoothed = np.array([sacrebleu.sentence_bleu(c, [r], tokenize="char").score / 100
                         for c, r in zip(default.candidates, default.references)])
    np.testing.assert_allclose(default.columns["BLEU"], smoothed, rtol=0, atol=1e-12)
    # pairs that share characters but no 4-gram: 0 without smoothing, > 0 with it (the paper's Table 4 zeros)
    zero = (want == 0) & (smoothed > 0)
    assert zero.any()


def test_paper_matches_word_pieces_only_at_the_papers_layer(runs, tiny_bert):
    from kometrics.korbertscore import score_layers

    paper, default = runs
    assert paper.config["exclude_special_tokens"] is True and default.config["exclude_special_tokens"] is False
    # tiny_bert has 12 layers: the paper's layer 8 of 12 (the default protocol uses korbertscore's default)
    assert paper.table2[-1]["layer"] == 8
    direct = score_layers(paper.candidates, paper.references, tiny_bert, layers=[4, 8], exclude_special_tokens=True)
    with_special = score_layers(paper.candidates, paper.references, tiny_bert, layers=[4, 8])
    for layer in (4, 8):
        np.testing.assert_allclose(paper.columns[bert_column("F1", layer, False)], direct[layer]["f1"], atol=1e-6)
        np.testing.assert_allclose(default.columns[bert_column("F1", layer, False)], with_special[layer]["f1"],
                                   atol=1e-6)
    assert not np.allclose(direct[8]["f1"], with_special[8]["f1"])
    assert "protocol:paper" in paper.signature and "special:excluded" in paper.signature
    assert "protocol:default" in default.signature and "bleu-smooth:exp" in default.signature
    assert "bleu-smooth:none" in paper.signature
    # the human score is the per-rater standard score under both protocols
    assert paper.corpus["human_score"]["method"] == default.corpus["human_score"]["method"]
    assert "z" in paper.corpus["human_score"]["method"]


def test_cli_protocol_paper(tmp_path, data_dir, capsys):
    from kometrics.cli import main

    assert main(["bench", "paraphrase", "--data", "klue-sts", "--data-dir", str(data_dir), "--no-bert",
                 "--protocol", "paper", "--limit", "20", "--bootstrap", "20", "--quiet", "--no-plots",
                 "--examples", "0", "--tokenize", "char", "--out", str(tmp_path / "run")]) == 0
    capsys.readouterr()
    data = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    assert "protocol:paper" in data["signature"] and data["config"]["bleu_smooth"] == "none"
    with pytest.raises(ValueError, match="protocol"):
        BenchmarkConfig(protocol="acl").validate()
