"""The benchmark on real KLUE-STS pairs with the tiny local BERT: every table number equals scipy on the
same columns, the BERT columns equal korbertscore called directly, outputs and CLI work, runs are seeded."""

from __future__ import annotations

import csv
import json
import warnings

import numpy as np
import pytest
from scipy import stats

from kometrics.bench.paraphrase.benchmark import (
    BenchmarkConfig,
    bert_column,
    format_table2,
    run_benchmark,
    select_examples,
    write_outputs,
)
from kometrics.bench.paraphrase.ngram import sentence_scores

N = 40


@pytest.fixture(scope="module")
def result(tiny_bert, klue_corpus, data_dir):
    cfg = BenchmarkConfig(data="klue-sts", model=tiny_bert, limit=N, n_boot=200, seed=0, progress=False,
                          data_dir=str(data_dir), batch_size=16, examples=6)
    return run_benchmark(cfg, corpus=klue_corpus)


def test_subset_is_seeded_and_in_corpus_order(result, klue_corpus):
    order = {r["id"]: k for k, r in enumerate(klue_corpus.records)}
    assert len(result.ids) == N and [order[i] for i in result.ids] == sorted(order[i] for i in result.ids)
    rng = np.random.default_rng(0)
    expect = np.sort(rng.choice(len(klue_corpus), size=N, replace=False))
    assert result.ids == [klue_corpus.records[k]["id"] for k in expect]
    by_id = {r["id"]: r for r in klue_corpus.records}
    np.testing.assert_allclose(result.human, [by_id[i]["human_score"] for i in result.ids])


def test_table2_numbers_equal_scipy_on_the_columns(result):
    assert [r["metric"] for r in result.table2] == [
        "BLEU", "GLEU", "TER", "chrF", "BERT-P", "BERT-R", "BERT-F1", "BERT-P (idf)", "BERT-R (idf)",
        "BERT-F1 (idf)"]
    for row in result.table2:
        col = result.columns[row["column"]]
        assert row["pearson"] == pytest.approx(stats.pearsonr(col, result.human)[0], abs=1e-12)
        assert row["spearman"] == pytest.approx(stats.spearmanr(col, result.human)[0], abs=1e-12)
        assert row["pearson_ci"][0] <= row["pearson"] <= row["pearson_ci"][1]
        assert row["n"] == N
    # tiny_bert has 12 layers and no documented layer: Table 2 uses the paper's 8 of 12
    assert {r["layer"] for r in result.table2 if r["metric"].startswith("BERT")} == {8}


def test_paired_comparisons_of_bert_f1_with_ngram_metrics(result):
    f1 = result.columns[bert_column("F1", 8, False)]
    assert [c["b"] for c in result.comparisons] == ["BLEU", "GLEU", "-TER", "chrF"]
    for c in result.comparisons:
        other = -result.columns["TER"] if c["b"] == "-TER" else result.columns[c["b"]]
        expect = stats.pearsonr(f1, result.human)[0] - stats.pearsonr(other, result.human)[0]
        assert c["difference"] == pytest.approx(expect, abs=1e-12)
        assert c["ci"][0] <= c["difference"] <= c["ci"][1]
    assert "Pearson of BERT-F1@L8 minus" in format_table2(result)


def test_ngram_columns_equal_direct_calls(result):
    direct = sentence_scores(result.candidates, result.references, tokenize="ko-mecab")
    for name, col in direct.items():
        np.testing.assert_allclose(result.columns[name], col)


def test_bert_columns_equal_korbertscore(result, tiny_bert):
    from kometrics.korbertscore import score, score_layers

    for idf in (False, True):
        direct = score_layers(result.candidates, result.references, tiny_bert, idf=idf)
        assert sorted(direct) == list(range(13))
        for layer, prf in direct.items():
            for key, name in (("P", "precision"), ("R", "recall"), ("F1", "f1")):
                np.testing.assert_allclose(result.columns[bert_column(key, layer, idf)], prf[name], atol=1e-6)
    one = score(result.candidates, result.references, model_type=tiny_bert, num_layers=8)
    np.testing.assert_allclose(result.columns[bert_column("F1", 8, False)], one["f1"], atol=1e-5)


def test_table3_equals_scipy_and_marks_best_layer(result):
    for flag in (False, True):
        rows = [r for r in result.table3 if r["idf"] is flag]
        assert [r["layer"] for r in rows] == list(range(13))
        for r in rows:
            for key in ("P", "R", "F1"):
                col = result.columns[bert_column(key, r["layer"], flag)]
                assert r[f"{key}_pearson"] == pytest.approx(stats.pearsonr(col, result.human)[0], abs=1e-12)
                assert r[f"{key}_spearman"] == pytest.approx(stats.spearmanr(col, result.human)[0], abs=1e-12)
        best = max(rows, key=lambda r: r["F1_pearson"])["layer"]
        assert result.best_layer["idf" if flag else "no_idf"] == best


def test_table4_examples_span_the_human_scores(result):
    picks = select_examples(result.human, 6)
    assert [result.ids[i] for i in picks] == [r["id"] for r in result.table4]
    hs = [r["human_score"] for r in result.table4]
    assert hs == sorted(hs, reverse=True)
    assert hs[0] == pytest.approx(result.human.max()) and hs[-1] == pytest.approx(result.human.min())
    for r, i in zip(result.table4, picks):
        assert r["BLEU"] == result.columns["BLEU"][i]
        assert r["BERT-F1"] == result.columns[bert_column("F1", 8, False)][i]
    assert select_examples(np.array([3.0, 1.0, 2.0]), 10) == [0, 2, 1]


def test_printed_tables_carry_the_numbers(result):
    text = result.report()
    for title in ("Table 2.", "Table 3. Pearson by layer (idf off", "Table 3. Pearson by layer (idf on",
                  "Table 4."):
        assert title in text
    row = result.correlations("chrF")
    assert f"{row['pearson']:+.4f}" in format_table2(result)
    assert "model:" in result.signature and "tok:ko-mecab" in result.signature and "seed:0" in result.signature


def test_write_outputs(result, tmp_path):
    paths = write_outputs(result, tmp_path)
    names = {p.name for p in paths}
    assert names == {"table2.csv", "table3.csv", "table4.csv", "scores.csv", "results.json", "layers.png",
                     "scatter.png"}
    for png in ("layers.png", "scatter.png"):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert data["signature"] == result.signature and data["n_pairs"] == N
    assert data["table2"][0]["pearson"] == pytest.approx(result.table2[0]["pearson"])
    with open(tmp_path / "scores.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["id"] for r in rows] == result.ids
    np.testing.assert_allclose([float(r["BERT-F1@L8"]) for r in rows], result.columns["BERT-F1@L8"])
    with open(tmp_path / "table2.csv", encoding="utf-8") as f:
        t2 = list(csv.DictReader(f))
    assert float(t2[3]["pearson_ci_low"]) == pytest.approx(result.table2[3]["pearson_ci"][0])


def test_deterministic_given_seed(klue_corpus):
    def run(seed):
        cfg = BenchmarkConfig(bert=False, limit=60, n_boot=100, seed=seed, progress=False, examples=3)
        return run_benchmark(cfg, corpus=klue_corpus)

    a, b, c = run(5), run(5), run(6)
    assert a.table2 == b.table2 and a.ids == b.ids and a.table4 == b.table4
    assert a.ids != c.ids
    assert a.table3 == [] and "BERT-F1" not in a.table4[0]


def test_ratings_file_with_unusable_pair_and_bad_options(tmp_path, klue_corpus):
    recs = klue_corpus.records[:8]
    lines = ["id\treference\tcandidate\tr1\tr2\tlonely"]
    for i, r in enumerate(recs):
        lines.append(f"p{i}\t{r['reference']}\t{r['candidate']}\t{i % 7}\t{(i * 3) % 7}\t")
    lines.append(f"p8\t{recs[0]['reference']}\t{recs[1]['candidate']}\t\t\t4")
    path = tmp_path / "mine.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cfg = BenchmarkConfig(data=str(path), bert=False, n_boot=50, progress=False, scale=(0, 6))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = run_benchmark(cfg)
    messages = " | ".join(str(w.message) for w in caught)
    assert "lonely (n=1" in messages and "left out of the benchmark" in messages
    assert len(res.ids) == 8 and "p8" not in res.ids
    for bad, msg in ((dict(tokenize="spm"), "tokenize must be"), (dict(idf="maybe"), "idf must be"),
                     (dict(limit=1), "limit must be")):
        with pytest.raises(ValueError, match=msg):
            run_benchmark(BenchmarkConfig(bert=False, **bad), corpus=klue_corpus)


def test_cli_build_and_bench(tmp_path, tiny_bert, data_dir, capsys):
    import datasets

    from kometrics.cli import main

    assert main(["paraphrase", "build", "klue-sts", "--out", str(tmp_path / "klue"), "--data-dir",
                 str(data_dir)]) == 0
    assert "krippendorff_alpha_interval" in capsys.readouterr().out
    ds = datasets.load_dataset(str(tmp_path / "klue"), split="test")
    assert len(ds) == 519
    rc = main(["bench", "paraphrase", "--data", str(tmp_path / "klue"), "--model", tiny_bert, "--layers", "0,4",
               "--idf", "off", "--limit", "30", "--bootstrap", "50", "--quiet", "--no-plots", "--examples", "3",
               "--tokenize", "char", "--out", str(tmp_path / "run")])
    assert rc == 0
    out = capsys.readouterr().out
    assert "Table 2." in out and "Table 3." in out and "tok:char" in out
    data = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    assert [r["layer"] for r in data["table3"]] == [0, 4, 8]  # the Table 2 layer joins the sweep
    assert not (tmp_path / "run" / "layers.png").exists()
    with pytest.raises(SystemExit):
        main(["bench", "paraphrase", "--tokenize", "spm"])


def test_demo_section(tmp_path, data_dir, tiny_bert):
    from kometrics.demo import DemoContext
    from kometrics.demo import paraphrase as demo

    ctx = DemoContext(data_dir=data_dir, limit=30, offline=True, models={"bert": tiny_bert}, cache_dir=tmp_path)
    section = demo.run(ctx)
    text = "\n".join(section.lines)
    assert "Table 2" in text and "Pearson" in text
    assert section.results["n_pairs"] == 30


def test_layer_specs():
    from kometrics.bench.paraphrase.benchmark import _parse_layers

    assert _parse_layers("all", 12) is None and _parse_layers(None, 12) is None
    assert _parse_layers("0-3, 8", 12) == [0, 1, 2, 3, 8]
    assert _parse_layers([8, 4, 8], 12) == [4, 8]
    with pytest.raises(ValueError, match="outside 0..12"):
        _parse_layers("13", 12)
    with pytest.raises(ValueError, match="layers must be 'all'"):
        _parse_layers("x", 12)


def test_bert_columns_in_slices_equal_one_call(result, tiny_bert, monkeypatch):
    """The benchmark scores big corpora a slice of pairs at a time (memory); with idf the weights still come
    from every reference, so the columns equal one score_layers call over all pairs."""
    from kometrics.bench.paraphrase import bert
    from kometrics.korbertscore import score_layers

    monkeypatch.setattr(bert, "PAIRS_PER_CALL", 7)
    for idf in (False, True):
        sliced = bert.layer_scores(result.candidates, result.references, tiny_bert, layers=[0, 5, 12], idf=idf)
        whole = score_layers(result.candidates, result.references, tiny_bert, layers=[0, 5, 12], idf=idf)
        assert sorted(sliced) == [0, 5, 12]
        for layer in sliced:
            for key, name in (("P", "precision"), ("R", "recall"), ("F1", "f1")):
                assert len(sliced[layer][key]) == N
                np.testing.assert_allclose(sliced[layer][key], whole[layer][name], atol=1e-6)


def test_layer_axes_have_whole_number_ticks():
    from matplotlib.figure import Figure

    from kometrics.bench.paraphrase.plotting import layer_ticks

    for depth in (5, 18, 48):
        ax = Figure().add_subplot(1, 1, 1)
        ax.plot(range(depth + 1), range(depth + 1))
        layer_ticks(ax, list(range(depth + 1)))
        ticks = [t for t in ax.get_xticks() if 0 <= t <= depth]
        assert ticks and all(float(t).is_integer() for t in ticks)
        if depth <= 24:
            assert ticks == list(range(depth + 1))
