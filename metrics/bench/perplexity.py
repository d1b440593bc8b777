"""``kometrics bench perplexity``: this metric against evaluate's perplexity algorithm and a hand loop, in one run.

Corpora (``--corpus``, comma-separated):

- ``klue`` (default without ``--model``): KLUE-DP and KLUE-NER dev sentences plus long paragraphs made by
  joining consecutive sentences (kept within the model's context, since evaluate's algorithm cannot score
  longer texts); model: a GPT-2 of GPT-2 small dimensions with random weights.
- ``short`` and ``mixed`` (default with ``--model``, e.g. Gemma-3-270M): ``short`` = the first 80 KorSTS dev
  sentences; ``mixed`` = 40 of them plus 2 texts of about 1,100 tokens made by joining consecutive KLUE-NER
  dev sentences: real vocabularies make the logits, not the model, decide memory and time.

Arms, each in its own process so that its peak memory is its own (``--threads`` threads each):

- ``hand``: one unpadded forward pass per text, the model's own logits, float64 log-softmax (the reference the
  numbers must equal; texts must fit the context);

All arms load the model in float32.
- ``evaluate``: :func:`reference_perplexity` with the tokenizer prepared as evaluate's metric does, at the
  largest of the ``--batch-size`` values whose logits fit ``--evaluate-max-gib`` and the free memory (it holds
  several batch x longest-text x vocabulary tensors; the skipped sizes are printed with their estimate);
- ``kometrics`` at each ``--batch-size``.

Each arm reports seconds, scored tokens per second, its resident set after loading the model and one warm-up
forward pass (weights resident; ``load``), its peak resident set while scoring, and the largest relative
difference of its per-text NLL from the hand loop. CUDA: peak allocated instead of resident set.

:func:`reference_perplexity` is an independent transcription of what evaluate's ``metrics/perplexity``
(huggingface/evaluate) computes, written from reading it: all texts tokenized at once and padded to the
longest, BOS prepended, ``exp(mean token NLL)`` per text. It needs a tokenizer with a pad token
(:func:`evaluate_tokenizer` assigns one as evaluate does); the tests check it against this metric.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["reference_perplexity", "evaluate_tokenizer", "hand_nll_sums", "build_corpus", "mixed_corpus",
           "short_corpus", "main", "run_arm"]

#: Peak resident set beyond the model's load RSS that the target allows (bytes).
BOUND_BYTES = 1.5e9
#: Float32 batch x length x vocabulary tensors evaluate's algorithm holds at its peak (logits, their shifted
#: contiguous copy, the log-softmax, ...): measured 4.5 on Gemma-3-270M.
EVALUATE_COPIES = 4.5


def reference_perplexity(predictions: list[str], model: Any, tokenizer: Any, batch_size: int = 16,
                         add_start_token: bool = True, device: str = "cpu") -> list[float]:
    """evaluate's perplexity, transcribed: one padded encoding of every text (no special tokens, padding to
    the longest text of the whole input, on the tokenizer's padding side), BOS column prepended per batch,
    cross-entropy of each next token masked by the attention mask, ``exp(sum / count)`` per text."""
    import torch

    if tokenizer.pad_token is None:
        raise ValueError("evaluate's algorithm needs a tokenizer with a pad token (see evaluate_tokenizer)")
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
        shift_logits = logits[..., :-1, :].contiguous()  # as evaluate does (a full copy of the logits)
        nll = torch.nn.functional.cross_entropy(shift_logits.transpose(1, 2), ids[:, 1:], reduction="none")
        m = mask[:, 1:]
        out += torch.exp((nll * m).sum(1) / m.sum(1)).tolist()
    return out


def evaluate_tokenizer(tokenizer: Any, batch_size: int) -> Any:
    """Prepare ``tokenizer`` as evaluate's metric does: when it has no pad token and ``batch_size > 1``, its
    first special token becomes the pad token; the padding side stays what the tokenizer says (Gemma: left).
    (evaluate reads ``special_tokens_map_extended``, which transformers 5 removed, so there it fails; the first
    entry of ``special_tokens_map`` is taken instead.)"""
    if tokenizer.pad_token is None and batch_size > 1:
        mapping = getattr(tokenizer, "special_tokens_map_extended", None) or tokenizer.special_tokens_map
        first = list(mapping.values())[0]
        tokenizer.add_special_tokens({"pad_token": first})
    return tokenizer


def hand_nll_sums(texts: list[str], model: Any, tokenizer: Any, device: str = "cpu",
                  chunk: int = 256) -> list[float]:
    """Per-text -sum_t ln P(w_t | BOS w_<t): one unpadded forward pass per text (its full context), the
    model's own logits, float64 log-softmax over ``chunk`` positions at a time."""
    import torch

    from kometrics.perplexity.modeling import start_token_id

    bos = start_token_id(model, tokenizer)
    out = []
    for text in texts:
        ids = torch.tensor([[bos, *tokenizer(text, add_special_tokens=False)["input_ids"]]], device=device)
        with torch.no_grad():
            logits = model(ids, use_cache=False).logits[0]
            total = 0.0
            for k in range(0, ids.shape[1] - 1, chunk):
                logp = torch.log_softmax(logits[k:k + chunk].double(), -1)
                target = ids[0, k + 1:k + 1 + chunk]
                total -= logp[torch.arange(len(target), device=device), target].sum().item()
        del logits
        out.append(total)
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


def short_corpus(data_dir: str | None, n: int = 80) -> list[str]:
    """The first ``n`` KorSTS dev sentences (sentence1 column)."""
    from kometrics.datasets_scripts.readers import read_korsts

    return [r["sentence1"] for r in read_korsts("dev", data_dir)[:n]]


def mixed_corpus(data_dir: str | None, tokenizer: Any, n_short: int = 40, n_long: int = 2,
                 long_tokens: int = 1100) -> list[str]:
    """``n_short`` KorSTS dev sentences plus ``n_long`` texts of consecutive KLUE-NER dev sentences, each
    joined until it reaches ``long_tokens`` tokens (no sentence used twice); the long texts come last."""
    from kometrics.datasets_scripts.readers import read_klue_ner_sentences

    longs, current, n = [], [], 0
    for s in read_klue_ner_sentences(data_dir):
        current.append(s)
        n += len(tokenizer(" " + s, add_special_tokens=False)["input_ids"])
        if n >= long_tokens:
            longs.append(" ".join(current))
            current, n = [], 0
            if len(longs) == n_long:
                break
    return short_corpus(data_dir, n_short) + longs


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


def _available_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover
        pass
    return None


def _scored_tokens(tokenizer: Any, texts: list[str]) -> list[int]:
    """Scored tokens per text with a start token: the text's tokens."""
    return [len(x) for x in tokenizer(texts, add_special_tokens=False)["input_ids"]]


def run_arm(arm: str, model_dir: str, texts: list[str], batch_size: int, device: str) -> dict[str, Any]:
    """Score ``texts`` with one arm ("hand", "evaluate" or "kometrics") in this process: seconds, per-text NLL
    sums (nats), load and peak memory (bytes)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from kometrics.perplexity.modeling import causal_nll, load_model

    if arm == "kometrics":
        model, tokenizer = load_model(model_dir, "causal", device)
    else:
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(device).eval()
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        if arm == "evaluate":
            evaluate_tokenizer(tokenizer, batch_size)
    counts = _scored_tokens(tokenizer, texts)
    warm = texts[-1][:20] or "가"  # one short forward pass: every weight resident before "load" is read
    if arm == "kometrics":
        causal_nll([warm], model, tokenizer)  # also settles the head plan
    else:
        with torch.no_grad():
            model(torch.tensor([tokenizer(warm)["input_ids"]], device=device))
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        load = torch.cuda.memory_allocated()
    else:
        load = _rss_bytes()
    _reset_peak_rss()
    t0 = time.perf_counter()
    if arm == "evaluate":
        ppl = reference_perplexity(texts, model, tokenizer, batch_size=batch_size, device=device)
        nll = [math.log(p) * c for p, c in zip(ppl, counts)]
    elif arm == "hand":
        nll = hand_nll_sums(texts, model, tokenizer, device)
    else:
        scores = causal_nll(texts, model, tokenizer, batch_size=batch_size)
        nll = [s.nll_sum for s in scores]
        assert [s.token_count for s in scores] == counts
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
    else:
        peak = _peak_rss_bytes()
    seconds = time.perf_counter() - t0
    return {"arm": arm, "batch_size": batch_size, "texts": len(texts), "tokens": sum(counts), "seconds": seconds,
            "tokens_per_s": sum(counts) / seconds, "load_bytes": load, "peak_bytes": peak, "nll": nll,
            "counts": counts}


def _worker(args: argparse.Namespace) -> int:
    texts = json.loads(Path(args.texts).read_text(encoding="utf-8"))
    result = run_arm(args.worker, args.model, texts, int(args.batch_size), args.device)
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


def _max_rel(a: list[float], b: list[float]) -> float:
    return max(abs(x - y) / abs(y) for x, y in zip(a, b, strict=True))


def _mean_ppl(r: dict) -> float:
    return sum(math.exp(n / c) for n, c in zip(r["nll"], r["counts"])) / len(r["nll"])


def _evaluate_plan(texts: list[str], tokenizer: Any, vocab: int, sizes: list[int], max_gib: float,
                   device: str) -> tuple[int | None, list[str]]:
    """The largest batch size evaluate's algorithm can run at within ``max_gib`` (and, on CPU, the free
    memory less 2 GiB), and a note per size left out."""
    width = max(_scored_tokens(tokenizer, texts)) + 1
    limit = max_gib * 2**30
    free = _available_bytes() if not device.startswith("cuda") else None
    if free is not None:
        limit = min(limit, free - 2 * 2**30)
    chosen, notes = None, []
    for bs in sorted({1, *sizes}, reverse=True):
        need = min(bs, len(texts)) * width * vocab * 4 * EVALUATE_COPIES
        if need <= limit:
            chosen = bs if chosen is None else chosen
        elif bs in sizes:
            notes.append(f"batch_size {bs}: about {need / 2**30:.1f} GiB of logits beyond the model, not run "
                         f"(limit {limit / 2**30:.1f} GiB)")
    if chosen is not None and chosen not in sizes:
        notes.append(f"evaluate's algorithm ran at batch_size {chosen} (every text still padded to {width} tokens)")
    return chosen, notes


def _case(name: str, texts: list[str], model: str, tokenizer: Any, vocab: int, sizes: list[int], device: str,
          args: argparse.Namespace) -> dict[str, Any]:
    lengths = sorted(_scored_tokens(tokenizer, texts))
    print(f"\n== {name}: {len(texts)} texts, {sum(lengths):,} scored tokens, median {lengths[len(lengths) // 2]}, "
          f"max {lengths[-1]} tokens", flush=True)
    runs: list[dict] = []
    hand = None
    if not args.no_hand:
        hand = _spawn("hand", model, texts, 1, device, args.threads)
        runs.append(hand)
    ev_bs, notes = _evaluate_plan(texts, tokenizer, vocab, sizes, args.evaluate_max_gib, device)
    ev = _spawn("evaluate", model, texts, ev_bs, device, args.threads) if ev_bs is not None else None
    if ev is not None:
        runs.append(ev)
    ours = []
    for bs in sizes:
        ours.append(_spawn("kometrics", model, texts, bs, device, args.threads))
        runs.append(ours[-1])
    unit = "allocated" if device.startswith("cuda") else "RSS"
    print(f"{'arm':<20}{'batch':>6}{'seconds':>9}{'tok/s':>8}{'load MiB':>10}{'peak MiB':>10}{'peak-load':>11}"
          f"{'mean PPL':>10}{'max rel. diff vs hand':>23}")
    for r in runs:
        diff = f"{_max_rel(r['nll'], hand['nll']):.1e}" if hand is not None else "-"
        print(f"{r['arm']:<20}{r['batch_size']:>6}{r['seconds']:>9.1f}{r['tokens_per_s']:>8.1f}"
              f"{r['load_bytes'] / 2**20:>10.0f}{r['peak_bytes'] / 2**20:>10.0f}"
              f"{(r['peak_bytes'] - r['load_bytes']) / 2**20:>11.0f}{_mean_ppl(r):>10.2f}{diff:>23}")
    for note in notes:
        print(f"  evaluate: {note}")
    if ev is not None:
        ratios = ", ".join(f"batch {r['batch_size']}: {r['tokens_per_s'] / ev['tokens_per_s']:.1f}x" for r in ours)
        print(f"throughput kometrics / evaluate's algorithm (batch {ev['batch_size']}): {ratios}")
    over = [(r["peak_bytes"] - r["load_bytes"]) for r in ours]
    print(f"peak {unit} beyond load, kometrics: " + ", ".join(
        f"batch {r['batch_size']}: {o / 1e9:.2f} GB" for r, o in zip(ours, over))
        + f" (bound {BOUND_BYTES / 1e9:.1f} GB: {'within' if max(over) <= BOUND_BYTES else 'EXCEEDED'})")
    if len(ours) > 1:
        print(f"batch invariance, kometrics: max rel. diff between batch sizes "
              f"{max(_max_rel(r['nll'], ours[0]['nll']) for r in ours[1:]):.1e}")
    return {"name": name, "hand": hand, "evaluate": ev, "kometrics": ours, "notes": notes}


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
    text_cfg = cfg.get_text_config()
    context = getattr(text_cfg, "n_positions", None) or text_cfg.max_position_embeddings
    vocab = text_cfg.vocab_size
    sizes = [int(x) for x in str(args.batch_size).split(",")] if args.batch_size else (
        [4, 16, 64] if args.model else [8])
    corpora = args.corpus.split(",") if args.corpus else (["short", "mixed"] if args.model else ["klue"])
    print(f"model: {model} ({context} positions, {vocab:,} pieces, device {device}, "
          f"threads per worker {args.threads or 'default'}); batch sizes {sizes}")
    results = []
    for name in corpora:
        if name == "klue":
            texts = build_corpus(data_dir, tokenizer, args.limit, max_tokens=context - 8)
        elif name == "short":
            texts = short_corpus(data_dir, args.limit or 80)
        elif name == "mixed":
            texts = mixed_corpus(data_dir, tokenizer)
        else:
            raise SystemExit(f"--corpus: unknown corpus {name!r} (klue, short, mixed)")
        results.append(_case(name, texts, model, tokenizer, vocab, sizes, device, args))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(prog="kometrics bench perplexity", description=__doc__.split("\n")[0])
    parser.add_argument("--model", help="causal LM folder or Hub id (default: GPT-2-small-sized random model)")
    parser.add_argument("--corpus", default=None, help="comma-separated: klue, short, mixed (default: klue, or "
                                                       "short,mixed with --model)")
    parser.add_argument("--data-dir", help="folder with klue/ and korsts/ (default: ../shared/data)")
    parser.add_argument("--limit", type=int, default=None, help="klue: first N sentences; short: N sentences")
    parser.add_argument("--batch-size", default=None, help="one or several, comma-separated (default: 8, or "
                                                           "4,16,64 with --model)")
    parser.add_argument("--evaluate-max-gib", type=float, default=6.0,
                        help="largest estimated logits memory evaluate's algorithm may take (default 6)")
    parser.add_argument("--no-hand", action="store_true", help="skip the hand loop (no agreement column)")
    parser.add_argument("--json", help="also write every arm's figures to this file")
    parser.add_argument("--device", default=None)
    parser.add_argument("--threads", type=int, default=None, help="OMP_NUM_THREADS of the workers")
    parser.add_argument("--worker", choices=["hand", "evaluate", "kometrics"], help=argparse.SUPPRESS)
    parser.add_argument("--texts", help=argparse.SUPPRESS)
    return parser


if __name__ == "__main__":
    sys.exit(main())
