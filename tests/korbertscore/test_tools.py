"""Face, CLI, tools and scale: evaluate.load == library, layer sweep, the baseline CLI, plots, the Space, the
Seq2SeqTrainer hook, accelerate sharding with 2 CPU processes, streaming resumed after a SIGKILL.

The baseline file itself is checked against bert_score in test_parity.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from kometrics.korbertscore import score

from ..conftest import require_module

REPO = Path(__file__).resolve().parents[2]


def test_evaluate_face_equals_library(tiny_bert, korsts_pairs):
    import evaluate

    cands, refs, _ = korsts_pairs
    metric = evaluate.load(str(REPO / "metrics" / "korbertscore"))
    groups = [[refs[i], cands[(i + 1) % 10]] for i in range(10)]
    for references in (refs[:10], groups):
        got = metric.compute(predictions=cands[:10], references=references, model_type=tiny_bert, num_layers=8,
                             idf=True)
        want = score(cands[:10], references, model_type=tiny_bert, num_layers=8, idf=True)
        assert got == want
    # evaluate's add_batch path gives the same
    for c, r in zip(cands[:6], refs[:6]):
        metric.add(predictions=c, references=r)
    assert metric.compute(model_type=tiny_bert, num_layers=8)["f1"] == \
        score(cands[:6], refs[:6], model_type=tiny_bert, num_layers=8)["f1"]


def test_cli_score_matches_library(tiny_bert, korsts_pairs, tmp_path):
    cands, refs, _ = korsts_pairs
    (tmp_path / "p.txt").write_text("\n".join(cands[:5]) + "\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("\n".join(refs[:5]) + "\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "kometrics.cli", "score", "korbertscore", "--predictions",
                          str(tmp_path / "p.txt"), "--references", str(tmp_path / "r.txt"), "--model_type",
                          tiny_bert, "--num_layers", "6"], capture_output=True, text=True, cwd=REPO, check=True)
    got = json.loads(out.stdout)
    want = score(cands[:5], refs[:5], model_type=tiny_bert, num_layers=6)
    np.testing.assert_allclose(got["f1"], want["f1"], atol=1e-7)


def test_layer_sweep_is_table3_of_the_experiment_and_equals_scipy(tiny_bert, data_dir, capsys):
    from scipy.stats import pearsonr, spearmanr

    from kometrics.bench.paraphrase.benchmark import BenchmarkConfig, format_table3, run_benchmark
    from kometrics.cli import main
    from kometrics.korbertscore import score_layers

    cfg = BenchmarkConfig(data="klue-sts", model=tiny_bert, ngram=False, layers=[2, 8, 12], idf="off", limit=60,
                          n_boot=100, data_dir=str(data_dir), progress=False, examples=0)
    res = run_benchmark(cfg)
    assert len(res.ids) == 60 and [r["metric"] for r in res.table2] == ["BERT-P", "BERT-R", "BERT-F1"]
    assert res.comparisons == [] and "ngram:off" in res.signature
    direct = score_layers(res.candidates, res.references, tiny_bert, layers=[8])[8]["f1"]
    row8 = next(r for r in res.table3 if r["layer"] == 8)
    assert row8["F1_pearson"] == pytest.approx(pearsonr(direct, res.human)[0], abs=1e-9)
    assert row8["F1_spearman"] == pytest.approx(spearmanr(direct, res.human)[0], abs=1e-9)
    best = max(res.table3, key=lambda r: r["F1_pearson"])["layer"]
    assert res.best_layer["no_idf"] == best
    assert f"{best:>4}*" in format_table3(res)
    # the command prints the same Table 3 and the same best layer
    assert main(["korbertscore", "layers", "--model", tiny_bert, "--source", "klue-sts", "--data-dir", str(data_dir),
                 "--limit", "60", "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    full = run_benchmark(BenchmarkConfig(data="klue-sts", model=tiny_bert, ngram=False, idf="off", limit=60,
                                         n_boot=100, data_dir=str(data_dir), progress=False, examples=0))
    assert format_table3(full) in out
    assert f"best layer (F1 Pearson): {full.best_layer['no_idf']} over 60 pairs" in out


def test_layers_cli_writes_table_and_png(tiny_bert, data_dir, tmp_path):
    png = tmp_path / "layers.png"
    out = subprocess.run([sys.executable, "-m", "kometrics.cli", "korbertscore", "layers", "--model", tiny_bert,
                          "--source", "korsts-dev", "--data-dir", str(data_dir), "--limit", "40", "--png", str(png),
                          "--json", str(tmp_path / "t.json")], capture_output=True, text=True, cwd=REPO, check=True)
    assert "best layer (F1 Pearson)" in out.stdout and png.stat().st_size > 1000
    table = json.loads((tmp_path / "t.json").read_text())
    assert sorted(r["layer"] for r in table["table3"]) == list(range(13))
    assert table["n_pairs"] == 40 and table["best_layer"]["no_idf"] in range(13)


def test_similarity_matrix_and_plot(tiny_bert, tmp_path):
    import matplotlib.figure

    from kometrics.korbertscore import plot_alignment, similarity_matrix

    sm = similarity_matrix("오늘은 날씨가 맑다.", "오늘 날씨 맑음", model_type=tiny_bert, num_layers=8)
    m = sm["matrix"]
    assert m.shape == (len(sm["candidate_tokens"]), len(sm["reference_tokens"]))
    assert sm["precision_matches"] == m.argmax(axis=1).tolist()
    fig = plot_alignment("오늘은 날씨가 맑다.", "오늘 날씨 맑음", model_type=tiny_bert, num_layers=8,
                         fname=str(tmp_path / "a.png"))
    assert isinstance(fig, matplotlib.figure.Figure) and (tmp_path / "a.png").stat().st_size > 1000
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == sm["candidate_tokens"]
    assert len(ax.lines) == m.shape[0] + m.shape[1]  # one dot per candidate piece, one ring per reference piece


def test_space_answers_through_gradio_client(tiny_bert):
    from tests.conftest import serve_app

    with serve_app(REPO / "metrics" / "korbertscore" / "app.py") as (_, client):
        result, plot, used = client.predict("오늘은 날씨가 맑다.", "오늘 날씨 맑음", tiny_bert, "8", False,
                                            api_name="/score")
    want = score(["오늘은 날씨가 맑다."], ["오늘 날씨 맑음"], model_type=tiny_bert, num_layers=8)
    assert result["f1"] == pytest.approx(want["f1"][0], abs=1e-7) and result["num_layers"] == 8
    assert result["model"] == tiny_bert and used == f"Scored with `{tiny_bert}` at layer 8."
    assert plot is not None


def test_default_layer_names_the_layer_score_uses(tiny_bert, stand_ins):
    """default_layer (what the Spaces show in the layer box's hint) is the layer score picks without
    num_layers: from the known table for a known id, else round(depth * 8 / 12), and it does not warn."""
    from kometrics.korbertscore import KNOWN_LAYERS, default_layer

    from ..evaluate_harness import stand_in_models

    with stand_in_models(stand_ins):
        for model, expected in (("klue/bert-base", KNOWN_LAYERS["klue/bert-base"][0]), (tiny_bert, round(12 * 8 / 12))):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                layer, why = default_layer(model)
            assert layer == expected and why
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert score(["가나다"], ["가나다"], model_type=model)["num_layers"] == layer
        assert default_layer(None) == default_layer("klue/bert-base")


def test_seq2seq_trainer_compute_metrics(tiny_bert, korsts_pairs, tmp_path):
    import torch
    from datasets import Dataset
    from transformers import (
        AutoTokenizer,
        BartConfig,
        BartForConditionalGeneration,
        DataCollatorForSeq2Seq,
        Seq2SeqTrainer,
        Seq2SeqTrainingArguments,
    )

    from kometrics.korbertscore import make_compute_metrics
    from kometrics.korbertscore.trainer import decode_pairs

    tok = AutoTokenizer.from_pretrained(tiny_bert)
    torch.manual_seed(0)
    cfg = BartConfig(vocab_size=len(tok), d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                     decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
                     pad_token_id=tok.pad_token_id, bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id,
                     decoder_start_token_id=tok.cls_token_id, forced_eos_token_id=None)
    model = BartForConditionalGeneration(cfg)
    cands, refs, _ = korsts_pairs
    ds = Dataset.from_dict({"src": cands[:8], "tgt": refs[:8]})
    ds = ds.map(lambda b: {**tok(b["src"], truncation=True, max_length=32),
                           "labels": tok(b["tgt"], truncation=True, max_length=32)["input_ids"]},
                batched=True, remove_columns=["src", "tgt"])
    args = Seq2SeqTrainingArguments(output_dir=str(tmp_path / "out"), per_device_eval_batch_size=3,
                                    predict_with_generate=True, generation_max_length=12, report_to=[],
                                    use_cpu=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = Seq2SeqTrainer(model=model, args=args, eval_dataset=ds,
                                 data_collator=DataCollatorForSeq2Seq(tok, model=model, label_pad_token_id=-100),
                                 compute_metrics=make_compute_metrics(tok, model_type=tiny_bert, num_layers=8))
        metrics = trainer.evaluate()
        pred = trainer.predict(ds)
    assert (pred.label_ids == -100).any()  # label padding was really there
    texts, labels = decode_pairs(pred, tok)
    assert labels == [tok.decode(tok(t)["input_ids"], skip_special_tokens=True).strip() for t in refs[:8]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = score(texts, labels, model_type=tiny_bert, num_layers=8)
    assert metrics["eval_korbertscore_f1"] == pytest.approx(float(np.mean(want["f1"])), abs=1e-6)
    assert metrics["eval_korbertscore_precision"] == pytest.approx(float(np.mean(want["precision"])), abs=1e-6)


def _jsonl(path: Path, cands, refs) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for i, (c, r) in enumerate(zip(cands, refs)):
            f.write(json.dumps({"id": i, "prediction": c, "reference": r}, ensure_ascii=False) + "\n")


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_stream_cli_resumes_after_sigkill(tiny_bert, korsts_pairs, tmp_path, capsys):
    """``kometrics korbertscore stream`` killed (SIGKILL) mid-run in a real process, then run again: every input
    scored exactly once, equal to an uninterrupted run of the same command; a run on the finished output adds
    nothing. (The uninterrupted and the last run go through the same CLI in this process, to save start-ups.)"""
    from kometrics.cli import main

    from ..conftest import kill_mid_run

    cands, refs, _ = korsts_pairs
    n = len(cands)
    src = tmp_path / "in.jsonl"
    _jsonl(src, cands, refs)

    def args(out: Path) -> list[str]:
        return ["korbertscore", "stream", "--model", tiny_bert, "--num-layers", "6", "--input", str(src), "--output",
                str(out), "--chunk-size", "2", "--batch-size", "2"]

    cli = [sys.executable, "-m", "kometrics.cli"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    killed, whole = tmp_path / "killed.jsonl", tmp_path / "whole.jsonl"
    left = kill_mid_run(cli + args(killed), killed, total=n, at_least=n // 5, cwd=tmp_path, env=env)
    resumed = subprocess.run(cli + args(killed), capture_output=True, text=True, cwd=tmp_path, env=env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"scored {n - left} new records" in resumed.stderr
    assert main(args(whole)) == 0
    got, want = _rows(killed), _rows(whole)
    assert [r["id"] for r in got] == [r["id"] for r in want] == list(range(n))  # each input once, in order
    for a, b in zip(got, want):
        assert a.keys() == b.keys() and a["hashcode"] == b["hashcode"]
        assert (a["prediction"], a["reference"], a["best_reference"]) == (b["prediction"], b["reference"],
                                                                          b["best_reference"])
        assert [a[k] for k in ("precision", "recall", "f1")] == pytest.approx([b[k] for k in ("precision", "recall",
                                                                                             "f1")], abs=1e-6)
    before = killed.read_bytes()
    capsys.readouterr()
    assert main(args(killed)) == 0
    assert "scored 0 new records" in capsys.readouterr().err and killed.read_bytes() == before


def test_stream_refuses_idf_true(tiny_bert, korsts_pairs, tmp_path):
    from kometrics.runners.korbertscore import stream_score

    cands, refs, _ = korsts_pairs
    src = tmp_path / "in.jsonl"
    _jsonl(src, cands[:3], refs[:3])
    with pytest.raises(ValueError, match="idf=True"):
        stream_score(src, tmp_path / "out.jsonl", model_type=tiny_bert, num_layers=6, idf=True)


def test_accelerate_two_cpu_processes_shard_in_order(tiny_bert, korsts_pairs, tmp_path):
    require_module("accelerate", "pip install accelerate")
    cands, refs, _ = korsts_pairs
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _jsonl(src, cands[:23], refs[:23])
    script = tmp_path / "run.py"
    script.write_text(
        "import json, sys, warnings\nwarnings.filterwarnings('ignore')\n"
        "from accelerate import PartialState\n"
        "from kometrics.runners.korbertscore import score_sharded, stream_score\n"
        "model, src, dst, out = sys.argv[1:5]\n"
        "rows = [json.loads(x) for x in open(src, encoding='utf-8')]\n"
        "res = score_sharded([r['prediction'] for r in rows], [r['reference'] for r in rows], model_type=model, "
        "num_layers=6, idf=True)\n"
        "state = PartialState()\n"
        "if state.is_main_process:\n    json.dump({'world': state.num_processes, **res}, open(out, 'w'))\n"
        "stream_score(src, dst, chunk_size=10, model_type=model, num_layers=6)\n",
        encoding="utf-8")
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
                           "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", str(script),
                           tiny_bert, str(src), str(dst), str(tmp_path / "res.json")],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads((tmp_path / "res.json").read_text())
    assert got["world"] == 2
    want = score(cands[:23], refs[:23], model_type=tiny_bert, num_layers=6, idf=True)
    np.testing.assert_allclose(got["f1"], want["f1"], atol=1e-6)
    rows = [json.loads(x) for x in dst.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == list(range(23))
    plain = score(cands[:23], refs[:23], model_type=tiny_bert, num_layers=6)
    np.testing.assert_allclose([r["f1"] for r in rows], plain["f1"], atol=1e-6)


def test_demo_section_on_real_pairs(tiny_bert, data_dir):
    from kometrics.demo import DemoContext
    from kometrics.demo.korbertscore import run

    ctx = DemoContext(data_dir=data_dir, limit=30, offline=True, models={"bert": tiny_bert})
    section = run(ctx)
    assert set(section.results) == {"KLUE-STS dev", "KorSTS dev"}
    for res in section.results.values():
        assert res["n"] == 30 and -1 <= res["pearson_f1"] <= 1
    assert any("Pearson" in line for line in section.lines)


def _evaluate_worker(rank, folder, model, cands, refs, cache_dir, queue):
    import warnings

    import evaluate

    warnings.filterwarnings("ignore")
    metric = evaluate.load(folder, num_process=2, process_id=rank, experiment_id="kbs-dist", cache_dir=cache_dir)
    half = len(cands) // 2
    part = slice(0, half) if rank == 0 else slice(half, None)
    metric.add_batch(predictions=cands[part], references=refs[part])
    queue.put((rank, metric.compute(model_type=model, num_layers=5)))


def test_evaluate_distributed_mode_two_processes(tiny_bert, korsts_pairs, tmp_path):
    import multiprocessing as mp

    cands, refs, _ = korsts_pairs
    c, r = cands[:12], refs[:12]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_evaluate_worker, args=(k, str(REPO / "metrics" / "korbertscore"), tiny_bert, c, r,
                                                          str(tmp_path), queue)) for k in range(2)]
    for p in procs:
        p.start()
    results = dict(queue.get(timeout=240) for _ in procs)
    for p in procs:
        p.join(timeout=60)
    assert results[1] is None
    want = score(c, r, model_type=tiny_bert, num_layers=5)
    np.testing.assert_allclose(results[0]["f1"], want["f1"], atol=1e-6)


def test_layer_sweep_reads_a_user_file(tmp_path):
    from kometrics.datasets_scripts.paraphrase.corpus import build_named

    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps({"sentence1": f"문장 {i}", "sentence2": f"다른 문장 {i}", "score": i / 2},
                                         ensure_ascii=False) for i in range(5)) + "\n", encoding="utf-8")
    corpus = build_named(str(path))
    assert corpus.records[2]["reference"] == "문장 2" and corpus.records[2]["candidate"] == "다른 문장 2"
    assert [r["human_score"] for r in corpus.records] == [0.0, 0.5, 1.0, 1.5, 2.0]
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("sentence1\tsentence2\tscore\n가\t나\t1\n다\t라\t3.5\n", encoding="utf-8")
    assert [r["human_score"] for r in build_named(str(tsv)).records] == [1.0, 3.5]
    (tmp_path / "bad.jsonl").write_text('{"sentence1": "a"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.jsonl:1: missing key\(s\) \['sentence2', 'score'\]"):
        build_named(str(tmp_path / "bad.jsonl"))
    with pytest.raises(ValueError, match="unknown corpus 'nope'"):
        build_named("nope")


def test_stream_and_baseline_cli(tiny_bert, korsts_pairs, tmp_path):
    cands, refs, _ = korsts_pairs
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _jsonl(src, cands[:7], refs[:7])
    text = tmp_path / "ko.txt"
    text.write_text("\n".join(cands[:40]) + "\n", encoding="utf-8")
    base = tmp_path / "base.tsv"
    cmds = [["korbertscore", "baseline", "--model", tiny_bert, "--text", str(text), "--pairs", "60", "--output",
             str(base)],
            ["korbertscore", "stream", "--model", tiny_bert, "--num-layers", "4", "--input", str(src), "--output",
             str(dst), "--chunk-size", "3", "--baseline", str(base)]]
    for cmd in cmds:
        subprocess.run([sys.executable, "-m", "kometrics.cli", *cmd], capture_output=True, text=True, cwd=REPO,
                       check=True)
    rows = [json.loads(x) for x in dst.read_text(encoding="utf-8").splitlines()]
    want = score(cands[:7], refs[:7], model_type=tiny_bert, num_layers=4, rescale_with_baseline=True,
                 baseline_path=str(base))
    np.testing.assert_allclose([r["f1"] for r in rows], want["f1"], atol=1e-6)
    assert rows[0]["hashcode"].endswith("-custom-rescaled") and rows[3]["id"] == 3
