"""``kometrics bench perplexity``: this metric against evaluate's perplexity algorithm, in one run.

Corpus: KLUE-DP and KLUE-NER dev sentences plus long paragraphs made by joining consecutive sentences (kept
within the model's context, since evaluate's algorithm cannot score longer texts). Model: a GPT-2 of GPT-2
small dimensions with random weights (``build_tiny_gpt2(dir, texts, **GPT2_SMALL_DIMS)``), or ``--model``.

Each arm runs in its own process so that its peak memory is its own: tokens/s, seconds and peak memory
(CUDA: peak allocated; CPU: peak resident set minus the resident set after loading the model). Ours also runs
on twice the texts to show that its peak memory does not depend on the number of texts.

:func:`reference_perplexity` is an independent transcription of what evaluate's ``metrics/perplexity``
(huggingface/evaluate) computes, written from reading it: all texts tokenized at once and padded to the
longest, BOS prepended, ``exp(mean token NLL)`` per text. It needs a tokenizer with a pad token; the tests
check it against this metric.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["reference_perplexity", "build_corpus", "main", "run_arm"]


def reference_perplexity(predictions: list[str], model: Any, tokenizer: Any, batch_size: int = 16,
                         add_start_token: bool = True, device: str = "cpu") -> list[float]:
    """evaluate's perplexity, transcribed: one padded encoding of every text (no special tokens, padding to
    the longest text of the whole input), BOS column prepended per batch, cross-entropy of each next token
    masked by the attention mask, ``exp(sum / count)`` per text."""
    import torch

    if tokenizer.pad_token is None:
        raise ValueError("evaluate's algorithm needs a tokenizer with a pad token")
    enc = tokenizer(predictions, add_special_tokens=False, padding=True, return_tensors="pt",
                    return_attention_mask=True)
    ids_all, mask_all = enc["input_ids"].to(device), enc["attention_mask"].to(device)
    out: list[float] = []
    for start in range(0, len(ids_all), batch_size):
        ids, mask = ids_all[start:start + batch_size], mask_all[start:start + batch_size]
        if add_start_token and tokenizer.bos_token_id is not None:
            bos = torch.full((ids.shape[0], 1), tokenizer.bos_token_id, dtype=ids.dtype, device=device)
            ids = torch.cat([bos, ids], dim=1)
            mask = torch.cat([torch.ones_like(bos), mask], dim=1)
        with torch.no_grad():
            logits = model(ids, attention_mask=mask).logits
        nll = torch.nn.functional.cross_entropy(logits[:, :-1].transpose(1, 2), ids[:, 1:], reduction="none")
        m = mask[:, 1:]
        out += torch.exp((nll * m).sum(1) / m.sum(1)).tolist()
    return out


def build_corpus(data_dir: str | None, tokenizer: Any, limit: int | None, max_tokens: int,
                 paragraph_every: int = 20) -> list[str]:
    """KLUE-DP + KLUE-NER dev sentences, plus one paragraph (consecutive sentences joined until the next would
    pass ``max_tokens`` tokens) per ``paragraph_every`` sentences. ``limit`` caps the sentences used."""
    from kometrics.datasets_scripts.readers import read_klue_dp, read_klue_ner_sentences

    sentences = [s.text for s in read_klue_dp(data_dir)] + read_klue_ner_sentences(data_dir)
    if limit is not None:
        sentences = sentences[:limit]
    paragraphs, current, n = [], [], 0
    for s in sentences:
        k = len(tokenizer(" " + s, add_special_tokens=False)["input_ids"])
        if current and n + k > max_tokens:
            paragraphs.append(" ".join(current))
            current, n = [], 0
        current.append(s)
        n += k
    wanted = max(1, len(sentences) // paragraph_every)
    return sentences + paragraphs[:wanted]


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # pragma: no cover
        return 0


def _peak_rss_bytes() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _reset_peak_rss() -> None:
    try:  # Linux: writing 5 to clear_refs resets VmHWM
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:  # pragma: no cover
        pass


def run_arm(arm: str, model_dir: str, texts: list[str], batch_size: int, device: str) -> dict[str, Any]:
    """Score ``texts`` with one arm ("evaluate" or "kometrics") in this process; timings and peak memory."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from kometrics.perplexity.modeling import causal_nll, load_model

    if arm == "evaluate":
        model = AutoModelForCausalLM.from_pretrained(model_dir).to(device).eval()
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        tokenizer.pad_token = tokenizer.eos_token  # evaluate assigns an existing special token as pad
        tokenizer.padding_side = "right"
    else:
        model, tokenizer = load_model(model_dir, "causal", device)
    n_tokens = sum(len(x) + 1 for x in tokenizer(texts, add_special_tokens=False)["input_ids"])
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    base = _rss_bytes()
    _reset_peak_rss()
    t0 = time.perf_counter()
    if arm == "evaluate":
        ppl = reference_perplexity(texts, model, tokenizer, batch_size=batch_size, device=device)
    else:
        ppl = [s.nll_sum / max(s.token_count, 1) for s in causal_nll(texts, model, tokenizer, batch_size=batch_size)]
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - sum(p.numel() * p.element_size() for p in model.parameters())
    else:
        peak = _peak_rss_bytes() - base
    seconds = time.perf_counter() - t0
    return {"arm": arm, "texts": len(texts), "tokens": n_tokens, "seconds": seconds,
            "tokens_per_s": n_tokens / seconds, "peak_mib": peak / 2**20, "first": ppl[0]}


def _worker(args: argparse.Namespace) -> int:
    texts = json.loads(Path(args.texts).read_text(encoding="utf-8"))
    result = run_arm(args.worker, args.model, texts, args.batch_size, args.device)
    print("RESULT " + json.dumps(result))
    return 0


def _spawn(arm: str, model: str, texts: list[str], batch_size: int, device: str, threads: int | None) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        json.dump(texts, f, ensure_ascii=False)
    env = dict(os.environ)
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    cmd = [sys.executable, "-m", "kometrics.bench.perplexity", "--worker", arm, "--texts", f.name,
           "--model", model, "--batch-size", str(batch_size), "--device", device]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    finally:
        os.unlink(f.name)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{arm} worker failed:\n{proc.stderr[-3000:]}")


def main(argv: list[str] | None = None, args: argparse.Namespace | None = None) -> int:
    args = args or build_parser().parse_args(argv)
    if getattr(args, "worker", None):
        return _worker(args)
    from transformers import AutoConfig, AutoTokenizer

    from kometrics.datasets_scripts.readers import default_data_dir, iter_korean_text
    from kometrics.models.tiny import GPT2_SMALL_DIMS, build_tiny_gpt2
    from kometrics.perplexity.model_setup import resolve_device

    device = str(resolve_device(args.device))
    data_dir = args.data_dir or str(default_data_dir())
    model = args.model
    if model is None:
        cache = Path(os.environ.get("KOMETRICS_CACHE", Path(tempfile.gettempdir()) / "kometrics-bench"))
        print("building a GPT-2-small-sized random model (once) ...", file=sys.stderr)
        model = build_tiny_gpt2(cache / "gpt2-small-random", iter_korean_text(data_dir), **GPT2_SMALL_DIMS)
    tokenizer = AutoTokenizer.from_pretrained(model)
    cfg = AutoConfig.from_pretrained(model)
    context = getattr(cfg, "n_positions", None) or cfg.max_position_embeddings
    texts = build_corpus(data_dir, tokenizer, args.limit, max_tokens=context - 8)
    lengths = sorted(len(x) for x in tokenizer(texts, add_special_tokens=False)["input_ids"])
    print(f"model: {model} ({context} positions, device {device}, batch size {args.batch_size})")
    print(f"corpus: {len(texts)} texts, {sum(lengths)} tokens, median {lengths[len(lengths) // 2]}, "
          f"max {lengths[-1]} tokens")
    ev = _spawn("evaluate", model, texts, args.batch_size, device, args.threads)
    ours = _spawn("kometrics", model, texts, args.batch_size, device, args.threads)
    ours2 = _spawn("kometrics", model, texts + texts, args.batch_size, device, args.threads)
    mem = "peak allocated beyond the weights" if device.startswith("cuda") else "peak RSS beyond the loaded model"
    print(f"{'arm':<28}{'texts':>7}{'tokens/s':>11}{'seconds':>9}{'peak MiB':>10}")
    for name, r in (("evaluate algorithm", ev), ("kometrics", ours), ("kometrics, texts x2", ours2)):
        print(f"{name:<28}{r['texts']:>7}{r['tokens_per_s']:>11.0f}{r['seconds']:>9.1f}{r['peak_mib']:>10.0f}")
    print(f"throughput ratio kometrics / evaluate: {ours['tokens_per_s'] / ev['tokens_per_s']:.2f}x (target >= 2x)")
    print(f"peak memory ({mem}): x{ours2['peak_mib'] / max(ours['peak_mib'], 1e-9):.2f} for twice the texts")
    return 0


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(prog="kometrics bench perplexity", description=__doc__.split("\n")[0])
    parser.add_argument("--model", help="causal LM folder or Hub id (default: GPT-2-small-sized random model)")
    parser.add_argument("--data-dir", help="folder with klue/ (default: ../shared/data)")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N sentences")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--device", default=None)
    parser.add_argument("--threads", type=int, default=None, help="OMP_NUM_THREADS of the workers")
    parser.add_argument("--worker", choices=["evaluate", "kometrics"], help=argparse.SUPPRESS)
    parser.add_argument("--texts", help=argparse.SUPPRESS)
    return parser


if __name__ == "__main__":
    sys.exit(main())
