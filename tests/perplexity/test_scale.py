"""Trainer hook (real Seq2SeqTrainer evaluation with generation), streaming jsonl scoring resumed after a
SIGKILL, and sharded scoring under ``accelerate launch`` with two CPU processes."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import kometrics
from kometrics.perplexity import score

REL = 1e-5


def test_seq2seq_trainer_evaluate_scores_generations(tiny_gpt2, tiny_gpt2_pad, sentences, tmp_path):
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, Seq2SeqTrainer, Seq2SeqTrainingArguments

    from kometrics.perplexity.trainer import decode_predictions, make_compute_metrics

    torch.manual_seed(0)
    gen_model = AutoModelForCausalLM.from_pretrained(tiny_gpt2)
    tok = AutoTokenizer.from_pretrained(tiny_gpt2)
    tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    gen_model.generation_config.pad_token_id = tok.eos_token_id
    prompts = [s[:12] for s in sentences[:5]]
    enc = tok(prompts, add_special_tokens=False)
    ds = Dataset.from_dict({"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"],
                            "labels": enc["input_ids"]})

    def collate(features):
        batch = tok.pad([{"input_ids": f["input_ids"], "attention_mask": f["attention_mask"]} for f in features],
                        return_tensors="pt")
        width = max(len(f["labels"]) for f in features)
        batch["labels"] = torch.tensor([[-100] * (width - len(f["labels"])) + f["labels"] for f in features])
        return batch

    args = Seq2SeqTrainingArguments(output_dir=str(tmp_path), per_device_eval_batch_size=2, report_to=[],
                                    predict_with_generate=True, generation_max_length=24, use_cpu=True,
                                    generation_num_beams=1)
    compute_metrics = make_compute_metrics(tok, tiny_gpt2_pad, batch_size=4)  # a fixed reference LM
    trainer = Seq2SeqTrainer(model=gen_model, args=args, eval_dataset=ds, data_collator=collate,
                             compute_metrics=compute_metrics, processing_class=tok)
    metrics = trainer.evaluate(max_new_tokens=8, do_sample=False)
    for key in ("eval_perplexity", "eval_corpus_perplexity", "eval_bits_per_character", "eval_unscored"):
        assert key in metrics
    # the same generations, decoded and scored independently
    out = trainer.predict(ds, max_new_tokens=8, do_sample=False)
    assert out.predictions.shape[0] == len(prompts)
    texts = decode_predictions(out.predictions, tok)
    assert all(t for t in texts)
    expected = score(texts, tiny_gpt2_pad)
    assert metrics["eval_perplexity"] == pytest.approx(expected["mean_perplexity"], rel=REL)
    assert metrics["eval_bits_per_character"] == pytest.approx(expected["bits_per_character"], rel=REL)
    assert metrics["eval_unscored"] == 0


def test_decode_predictions_handles_minus_100_and_logits(tiny_gpt2):
    import numpy as np
    from transformers import AutoTokenizer

    from kometrics.perplexity.trainer import decode_predictions

    tok = AutoTokenizer.from_pretrained(tiny_gpt2)
    ids = tok(["한국어 문장", "서울"], add_special_tokens=False)["input_ids"]
    width = max(map(len, ids))
    arr = np.array([x + [-100] * (width - len(x)) for x in ids])
    assert decode_predictions(arr, tok) == ["한국어 문장", "서울"]
    logits = np.full(arr.shape + (tok.backend_tokenizer.get_vocab_size(),), -5.0)
    for (i, j), v in np.ndenumerate(np.where(arr < 0, tok.eos_token_id, arr)):
        logits[i, j, v] = 5.0
    assert decode_predictions((logits,), tok) == ["한국어 문장", "서울"]


def _write_jsonl(path: Path, texts: list[str]) -> None:
    path.write_text("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts), encoding="utf-8")


def test_stream_cli_resumes_after_sigkill(tiny_gpt2, data_dir, tmp_path, capsys):
    """``kometrics perplexity stream`` killed (SIGKILL) mid-run in a real process, then run again: every text
    scored exactly once, equal to an uninterrupted run of the same command and to the in-memory score; a run
    on the finished output leaves it as it is. (The uninterrupted and the last run go through the same CLI in
    this process, to save start-ups.)"""
    from kometrics.cli import main
    from kometrics.datasets_scripts.readers import read_klue_sts

    from ..conftest import kill_mid_run

    texts = [r["sentence1"] for r in read_klue_sts(data_dir)[:240]]
    n = len(texts)
    src = tmp_path / "in.jsonl"
    _write_jsonl(src, texts)

    def args(out: Path) -> list[str]:
        return ["perplexity", "stream", "--input", str(src), "--output", str(out), "--model-id", tiny_gpt2,
                "--chunk-size", "2", "--batch-size", "2"]

    cli = [sys.executable, "-m", "kometrics.cli"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    killed, whole = tmp_path / "killed.jsonl", tmp_path / "whole.jsonl"
    kill_mid_run(cli + args(killed), killed, total=n, at_least=n // 5, cwd=tmp_path, env=env)
    resumed = subprocess.run(cli + args(killed), capture_output=True, text=True, cwd=tmp_path, env=env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = json.loads(resumed.stdout[resumed.stdout.index("{"):])
    capsys.readouterr()
    assert main(args(whole)) == 0
    want_summary = json.loads(capsys.readouterr().out)
    got = [json.loads(x) for x in killed.read_text(encoding="utf-8").splitlines()]
    want = [json.loads(x) for x in whole.read_text(encoding="utf-8").splitlines()]
    assert [r["index"] for r in got] == [r["index"] for r in want] == list(range(n))  # each text once, in order
    for a, b in zip(got, want):
        assert a.keys() == b.keys()
        assert {k: v for k, v in a.items() if isinstance(v, int)} == {k: v for k, v in b.items() if isinstance(v, int)}
        assert (a["nll_sum"], a["perplexity"]) == pytest.approx((b["nll_sum"], b["perplexity"]), rel=REL)
    assert summary.keys() == want_summary.keys() and summary["texts"] == n
    for key, value in want_summary.items():
        assert summary[key] == (pytest.approx(value, rel=REL) if isinstance(value, float) else value), key
    full = score(texts, tiny_gpt2, batch_size=4)
    assert [r["nll_sum"] for r in got] == pytest.approx(full["nll_sums"], rel=REL)
    assert [r["token_count"] for r in got] == full["token_counts"]
    assert summary["corpus_perplexity"] == pytest.approx(full["corpus_perplexity"], rel=REL)
    before = killed.read_bytes()
    assert main(args(killed)) == 0 and killed.read_bytes() == before  # a finished output is left as it is


def test_stream_error_names_the_record(tiny_gpt2, tmp_path):
    from kometrics.runners.perplexity import score_jsonl

    src = tmp_path / "in.jsonl"
    _write_jsonl(src, ["좋은 날이다.", "비가 온다.", "", "맑다."])
    with pytest.raises(ValueError, match=r"records 2\.\.3.*predictions\[0\] is empty"):
        score_jsonl(src, tmp_path / "out.jsonl", tiny_gpt2, chunk_size=2, resume=False)


LAUNCHED = textwrap.dedent("""
    import json, sys
    import kometrics
    from kometrics.cli.io import read_jsonl
    from kometrics.runners.perplexity import score_jsonl, score_sharded
    from kometrics.runners.stream import processes
    src, out, model, result = sys.argv[1:5]
    texts = [r["text"] for r in read_jsonl(src)]
    group = processes()
    r = score_sharded(texts, model, batch_size=3)
    s = score_jsonl(src, out, model, chunk_size=4, batch_size=3, resume=False)
    if group.is_main:
        json.dump({"world": group.count, "sharded": r, "stream": s, "kometrics": kometrics.__file__},
                  open(result, "w"))
""")


def test_accelerate_launch_two_cpu_processes(tiny_gpt2, sentences, paragraphs, tmp_path):
    texts = sentences[:7] + paragraphs[:1]
    src, out, res = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "result.json"
    _write_jsonl(src, texts)
    script = tmp_path / "launched.py"
    script.write_text(LAUNCHED, encoding="utf-8")
    # The running interpreter's environment as it is: the launched processes import the kometrics that this
    # test imports (the checkout under test, installed editable), checked below.
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--num_processes", "2", "--multi_gpu",
           "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port",
           str(_free_port()), str(script), str(src), str(out), tiny_gpt2, str(res)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(res.read_text(encoding="utf-8"))
    assert got["world"] == 2
    assert Path(got["kometrics"]).resolve() == Path(kometrics.__file__).resolve()
    single = score(texts, tiny_gpt2, batch_size=3)
    assert got["sharded"]["nll_sums"] == pytest.approx(single["nll_sums"], rel=REL)
    assert got["sharded"]["token_counts"] == single["token_counts"]
    assert got["sharded"]["corpus_perplexity"] == pytest.approx(single["corpus_perplexity"], rel=REL)
    recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["index"] for r in recs] == list(range(len(texts)))
    assert [r["nll_sum"] for r in recs] == pytest.approx(single["nll_sums"], rel=REL)
    assert got["stream"]["bits_per_character"] == pytest.approx(single["bits_per_character"], rel=REL)
    assert not math.isnan(got["stream"]["word_perplexity"])


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


EVALUATE_DISTRIBUTED = textwrap.dedent("""
    import json, sys
    import evaluate
    folder, model, cache, rank, texts_file, out = sys.argv[1:7]
    texts = json.load(open(texts_file, encoding="utf-8"))
    rank = int(rank)
    metric = evaluate.load(folder, num_process=2, process_id=rank, experiment_id="ppl-test", cache_dir=cache)
    half = len(texts) // 2
    metric.add_batch(predictions=texts[:half] if rank == 0 else texts[half:])
    result = metric.compute(model_id=model, batch_size=3)
    if rank == 0:
        json.dump(result, open(out, "w"))
    else:
        assert result is None
""")


def test_evaluate_distributed_mode_two_processes(tiny_gpt2, sentences, tmp_path):
    """evaluate's own distributed mode (num_process, process_id, experiment_id): each process adds half."""
    from tests.conftest import METRICS_DIR

    texts = sentences[:7]
    (tmp_path / "texts.json").write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    script = tmp_path / "dist.py"
    script.write_text(EVALUATE_DISTRIBUTED, encoding="utf-8")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_EVALUATE_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    procs = [subprocess.Popen([sys.executable, str(script), str(METRICS_DIR / "perplexity"), tiny_gpt2,
                               str(tmp_path / "cache"), str(rank), str(tmp_path / "texts.json"),
                               str(tmp_path / "result.json")], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for rank in (0, 1)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
    got = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))
    single = score(texts, tiny_gpt2, batch_size=3)
    assert got["nll_sums"] == pytest.approx(single["nll_sums"], rel=REL)
    assert got["corpus_perplexity"] == pytest.approx(single["corpus_perplexity"], rel=REL)
