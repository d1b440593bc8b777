"""Speed of LMRE: the vectorised scorer against a plain Python loop over boundary sets, in the same run.

    kometrics bench lmre [--n 100000] [--refs 5] [--naive-n N]

Random utterances of 3-25 words, one prediction and ``refs`` references each. Every side does the whole
job (read the strings, check the words, score every reference, pick the best, accept); the results are
compared before the times are printed. Two loops: a minimal one (split + sets, no validation of malformed
strings) and one over the library's validating parser (what a straightforward implementation does).
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from kometrics.lmre.formats import parse_annotation
from kometrics.lmre.scoring import lmre_scores, parse_inputs, score

__all__ = ["random_annotations", "naive_score", "library_loop_score", "run_benchmark"]

_SYLLABLES = "가나다라마바사아자차카타파하오늘은날씨정말좋네요학교에갔다"


def random_annotations(n: int, refs: int, seed: int = 0, min_words: int = 3,
                       max_words: int = 25) -> tuple[list[str], list[list[str]]]:
    """``n`` random predictions and ``refs`` references each over the same random words."""
    rng = random.Random(seed)
    marks = ["", "", "", " /", " //"]
    preds, references = [], []
    for _ in range(n):
        words = ["".join(rng.choices(_SYLLABLES, k=rng.randint(1, 4))) for _ in range(rng.randint(min_words, max_words))]

        preds.append(_annotate(words, rng, marks))
        references.append([_annotate(words, rng, marks) for _ in range(refs)])
    return preds, references


def _annotate(words: list[str], rng: random.Random, marks: list[str]) -> str:
    return " ".join(w + (rng.choice(marks) if i < len(words) - 1 else "") for i, w in enumerate(words))


def _naive_parse(text: str) -> tuple[tuple[str, ...], dict[int, str]]:
    words, breaks = [], {}
    for tok in text.split():
        if tok in ("/", "//"):
            breaks[len(words) - 1] = tok
        else:
            words.append(tok)
    breaks.pop(len(words) - 1, None)
    return tuple(words), breaks


def _sets(text: str, break_types: str) -> set:
    _, b = _naive_parse(text)
    return set(b) if break_types == "binary" else set(b.items())


def _set_similarity(h: set, r: set, similarity: str) -> float:
    """EM or F1 of two boundary sets (both empty: 1.0), the plain-Python reference of the scorer."""
    if similarity == "em":
        return 1.0 if h == r else 0.0
    return 1.0 if not h and not r else 2 * len(h & r) / (len(h) + len(r))


def _naive_math(sets: list[tuple[set, list[set]]], similarity: str) -> list[float]:
    best_scores = []
    for h, rs in sets:
        best = -1.0
        for r in rs:
            best = max(best, _set_similarity(h, r, similarity))
        best_scores.append(best)
    return best_scores


def naive_score(predictions: list[str], references: list[list[str]], similarity: str = "f1",
                theta: float = 0.5, break_types: str = "binary") -> dict[str, Any]:
    """The same result as :func:`score` (acceptance and best scores) with one Python loop over sets."""
    best_scores, accepted = [], []
    for pred, refs in zip(predictions, references):
        words, hb = _naive_parse(pred)
        h = set(hb) if break_types == "binary" else set(hb.items())
        best = -1.0
        for ref in refs:
            rwords, rb = _naive_parse(ref)
            if rwords != words:
                raise ValueError("word mismatch")
            r = set(rb) if break_types == "binary" else set(rb.items())
            best = max(best, _set_similarity(h, r, similarity))
        best_scores.append(best)
        accepted.append(best > theta)
    return {"acceptance_rate": sum(accepted) / len(accepted), "best_score": best_scores, "accepted": accepted}


def library_loop_score(predictions: list[str], references: list[list[str]], similarity: str = "f1",
                       theta: float = 0.5, break_types: str = "binary") -> dict[str, Any]:
    """A straightforward loop built on the library's validating parser (``parse_annotation``) and sets."""
    best_scores, accepted = [], []
    for i, (pred, refs) in enumerate(zip(predictions, references)):
        hyp = parse_annotation(pred, name=f"predictions[{i}]")
        h = {(k, c) if break_types == "typed" else k for k, c in enumerate(hyp.breaks) if c}
        best = -1.0
        for j, ref_text in enumerate(refs):
            ref = parse_annotation(ref_text, name=f"references[{i}][{j}]")
            if ref.words != hyp.words:
                raise ValueError(f"references[{i}][{j}]: word mismatch")
            r = {(k, c) if break_types == "typed" else k for k, c in enumerate(ref.breaks) if c}
            best = max(best, _set_similarity(h, r, similarity))
        best_scores.append(best)
        accepted.append(best > theta)
    return {"acceptance_rate": sum(accepted) / len(accepted), "best_score": best_scores, "accepted": accepted}


def run_benchmark(n: int = 100_000, refs: int = 5, naive_n: int | None = None, seed: int = 0,
                  similarity: str = "f1", break_types: str = "binary", repeat: int = 2, out=None) -> dict[str, float]:
    """Time both scorers, check that they agree, print and return the figures."""
    preds, references = random_annotations(n, refs, seed)
    t_fast = float("inf")
    for _ in range(repeat):  # best of ``repeat``: the first run also pays for page faults of new arrays
        t0 = time.perf_counter()
        fast = score(preds, references, similarity=similarity, break_types=break_types)
        t_fast = min(t_fast, time.perf_counter() - t0)
    m = n if naive_n is None else min(naive_n, n)
    t0 = time.perf_counter()
    slow = naive_score(preds[:m], references[:m], similarity=similarity, break_types=break_types)
    t_naive = (time.perf_counter() - t0) * (n / m)
    t0 = time.perf_counter()
    lib = library_loop_score(preds[:m], references[:m], similarity=similarity, break_types=break_types)
    t_lib = (time.perf_counter() - t0) * (n / m)
    # the scoring alone, on inputs read beforehand (a reference lookup reused across systems)
    parsed = parse_inputs(preds, references)
    t0 = time.perf_counter()
    lmre_scores(parsed, similarity=similarity, break_types=break_types)
    t_math = time.perf_counter() - t0
    sets = [(_sets(p, break_types), [_sets(r, break_types) for r in rs]) for p, rs in zip(preds[:m], references[:m])]
    t0 = time.perf_counter()
    _naive_math(sets, similarity)
    t_math_naive = (time.perf_counter() - t0) * (n / m)
    for other in (slow, lib):
        if fast["best_score"][:m] != other["best_score"] or fast["accepted"][:m] != other["accepted"]:
            raise AssertionError("the vectorised and the loop scorers disagree")
    figures = {"n": n, "refs": refs, "vectorised_s": t_fast, "naive_s": t_naive, "ratio": t_naive / t_fast,
               "library_loop_s": t_lib, "library_ratio": t_lib / t_fast, "naive_measured_on": m,
               "scoring_only_s": t_math, "scoring_only_naive_s": t_math_naive, "scoring_only_ratio": t_math_naive / t_math}
    print(f"lmre {similarity}/{break_types}: {n:,} predictions x {refs} references "
          f"({n * refs:,} pairs, parsing included)", file=out)
    print(f"  vectorised (numpy): {t_fast:.2f} s  ({n / t_fast:,.0f} predictions/s)", file=out)
    print(f"  naive Python loop:  {t_naive:.2f} s{'' if m == n else f' (measured on {m:,}, scaled)'}", file=out)
    print(f"  loop over the library's validating parser: {t_lib:.2f} s", file=out)
    print(f"  ratio naive / vectorised: {t_naive / t_fast:.2f}x; library loop / vectorised: {t_lib / t_fast:.2f}x; "
          "results identical", file=out)
    print(f"  scoring only, inputs read beforehand: vectorised {t_math:.3f} s, loop over sets {t_math_naive:.2f} s "
          f"({t_math_naive / t_math:.1f}x)", file=out)
    return figures


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=int, default=100_000, help="predictions (default 100,000)")
    parser.add_argument("--refs", type=int, default=5, help="references per prediction (default 5)")
    parser.add_argument("--naive-n", type=int, default=None, help="time the naive loop on this many and scale")
    parser.add_argument("--similarity", choices=["f1", "em"], default="f1")
    parser.add_argument("--break-types", choices=["binary", "typed"], default="binary")
    parser.add_argument("--seed", type=int, default=0)
