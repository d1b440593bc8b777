"""Trainer hook (real Seq2SeqTrainer evaluation with generation), streaming jsonl scoring with resume, and
sharded scoring under ``accelerate launch`` with two CPU processes."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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


def test_stream_jsonl_resumes_and_matches_in_memory(tiny_gpt2, sentences, paragraphs, tmp_path):
    from kometrics.runners.perplexity import score_jsonl

    texts = sentences + paragraphs[:1]
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write_jsonl(src, texts)
    full = score(texts, tiny_gpt2, batch_size=4)
    # a first run that stopped after 5 records, the last one cut mid-line by a crash
    score_jsonl(src, out, tiny_gpt2, chunk_size=5, batch_size=4, resume=False)
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    out.write_text("".join(lines[:5]) + lines[5][:10], encoding="utf-8")
    summary = score_jsonl(src, out, tiny_gpt2, chunk_size=5, batch_size=4)
    recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["index"] for r in recs] == list(range(len(texts)))
    assert [r["nll_sum"] for r in recs] == pytest.approx(full["nll_sums"], rel=REL)
    assert [r["token_count"] for r in recs] == full["token_counts"]
    for key in ("corpus_perplexity", "bits_per_character", "bits_per_byte", "word_perplexity", "mean_perplexity"):
        assert summary[key] == pytest.approx(full[key], rel=REL), key
    assert summary["texts"] == len(texts) and summary["signature"] == full["signature"]
    # a finished output is left as it is
    again = score_jsonl(src, out, tiny_gpt2, chunk_size=5)
    assert again["corpus_perplexity"] == summary["corpus_perplexity"]
    assert len(out.read_text(encoding="utf-8").splitlines()) == len(texts)


def test_stream_error_names_the_record(tiny_gpt2, tmp_path):
    from kometrics.runners.perplexity import score_jsonl

    src = tmp_path / "in.jsonl"
    _write_jsonl(src, ["좋은 날이다.", "비가 온다.", "", "맑다."])
    with pytest.raises(ValueError, match=r"records 2\.\.3.*predictions\[0\] is empty"):
        score_jsonl(src, tmp_path / "out.jsonl", tiny_gpt2, chunk_size=2, resume=False)


LAUNCHED = textwrap.dedent("""
    import json, sys
    from kometrics.runners.perplexity import _state, score_jsonl, score_sharded, iter_jsonl_texts
    src, out, model, result = sys.argv[1:5]
    texts = list(iter_jsonl_texts(src))
    state = _state()
    r = score_sharded(texts, model, batch_size=3)
    s = score_jsonl(src, out, model, chunk_size=4, batch_size=3, resume=False)
    if state.is_main_process:
        json.dump({"world": state.num_processes, "sharded": r, "stream": s}, open(result, "w"))
""")


def test_accelerate_launch_two_cpu_processes(tiny_gpt2, sentences, paragraphs, tmp_path):
    texts = sentences[:7] + paragraphs[:1]
    src, out, res = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "result.json"
    _write_jsonl(src, texts)
    script = tmp_path / "launched.py"
    script.write_text(LAUNCHED, encoding="utf-8")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--num_processes", "2", "--multi_gpu",
           "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port",
           str(_free_port()), str(script), str(src), str(out), tiny_gpt2, str(res)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(res.read_text(encoding="utf-8"))
    assert got["world"] == 2
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
