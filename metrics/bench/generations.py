"""Model generations compared on the same Korean text in bits per character: unigram, n-grams, a neural LM.

``kometrics bench generations``: train on KorSTS train + KorNLI (XNLI dev) sentences, test on the KLUE-STS dev
sentences (held apart: a test sentence found in the training text is removed from it, and the run says how
many), and score with the perplexity metric

- a character unigram, a character n-gram (order chosen on a dev split carved from the training text) and a
  morpheme n-gram (kiwipiepy; order chosen the same way), all interpolated modified Kneser-Ney, plus an
  eojeol n-gram (whose per-token perplexity shows why per-token figures do not compare);
- a real causal LM (Gemma-3-270M from its local safetensors folder by default).

One table: bits per character (the text only: ``</s>`` not predicted, as for the causal LM with its start
token; the n-gram figure with ``</s>`` beside it), and per-token perplexity with its unit. A plot (PNG) and a
JSON file of the figures go to ``--out``. A speed line times the n-gram metric on 10,000 sentences against
the pure-Python back-off reading of the same ARPA file, in the same run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
import tempfile
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["GEMMA_DIR", "CARD_ORDERS", "default_lm", "load_texts", "split_dev", "choose_order", "run", "format_table",
           "plot", "speed", "main", "build_parser"]

#: The real causal LM of the comparison (Gemma-3-270M converted to a plain safetensors folder).
GEMMA_DIR = Path("/root/.cache/kometrics/models/gemma-3-270m")
CHAR_ORDERS = (2, 3, 4, 5, 6)
MORPHEME_ORDERS = (2, 3, 4, 5, 6)
EOJEOL_ORDERS = (1, 2, 3, 4)
#: Bits to name a character the speller never saw: uniform over all Unicode code points.
CODE_POINT_BITS = math.log2(0x110000)
#: The orders the full run (metric card) chose on its dev split; the demo uses them without searching.
CARD_ORDERS = {"char": 6, "morpheme": 6, "eojeol": 4}


def default_lm() -> str | None:
    """The causal LM of the comparison: Gemma-3-270M (``kometrics.models.gemma.prepare()`` when available,
    else its folder), or ``None`` when it is not on this machine."""
    try:
        from kometrics.models.gemma import prepare  # type: ignore[import-not-found]

        return str(prepare())
    except Exception:  # noqa: BLE001 - the helper is optional; fall back to the folder
        pass
    return str(GEMMA_DIR) if (GEMMA_DIR / "config.json").is_file() else None


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


def load_texts(data_dir: str | os.PathLike | None = None) -> dict[str, Any]:
    """Training text (KorSTS train and KorNLI sentences, NFC, stripped, duplicates removed) and test text (the
    KLUE-STS dev sentences, likewise); a test sentence also in the training text is removed from training.
    ``train_pairs`` keeps which training sentences came in one row (a pair of paraphrases, a premise and its
    hypotheses), for a dev split that does not cut pairs."""
    from kometrics.datasets_scripts.readers import read_klue_sts, read_kornli, read_korsts

    rows = [(r["sentence1"], r["sentence2"]) for r in read_korsts("train", data_dir)]
    rows += [(r["sentence1"], r["sentence2"]) for r in read_kornli(data_dir)]
    test = list(dict.fromkeys(t for t in (_nfc(x) for r in read_klue_sts(data_dir)
                                          for x in (r["sentence1"], r["sentence2"])) if t))
    train_all = list(dict.fromkeys(t for t in (_nfc(x) for row in rows for x in row) if t))
    held = set(test)
    train = [t for t in train_all if t not in held]
    pairs = [(a, b) for a, b in ((_nfc(x), _nfc(y)) for x, y in rows) if a and b and a not in held and b not in held]
    return {"train": train, "test": test, "train_pairs": pairs, "train_rows": 2 * len(rows),
            "overlap_removed": len(train_all) - len(train),
            "sources": {"train": "KorSTS sts-train.tsv + KorNLI xnli.dev.ko.tsv (sentence1, sentence2)",
                        "test": "KLUE-STS v1.1 dev (sentence1, sentence2)"}}


def split_dev(texts: Sequence[str], fraction: float = 0.1, seed: int = 0,
              pairs: Sequence[tuple[str, str]] = ()) -> tuple[list[str], list[str]]:
    """A seeded random ``fraction`` (at least) of ``texts`` as a dev split; the rest to fit on. Sentences linked
    by ``pairs`` (directly or through others) go to the same side, so that a paraphrase of a dev sentence is
    never in the fitting text (it would favour long n-grams)."""
    parent = {t: t for t in texts}

    def root(t: str) -> str:
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    for a, b in pairs:
        if a in parent and b in parent:
            parent[root(a)] = root(b)
    groups: dict[str, list[str]] = {}
    for t in texts:
        groups.setdefault(root(t), []).append(t)
    order = list(groups.values())
    random.Random(seed).shuffle(order)
    dev: set[str] = set()
    want = max(1, round(len(texts) * fraction))
    for group in order:
        if len(dev) >= want:
            break
        dev.update(group)
    return [t for t in texts if t not in dev], [t for t in texts if t in dev]


def _quiet_score(texts: Sequence[str], model: str, **kw: Any) -> dict[str, Any]:
    import warnings

    from kometrics.perplexity import score

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*unknown unit")
        return score(list(texts), model, **kw)


def choose_order(fit: Sequence[str], dev: Sequence[str], unit: str, orders: Sequence[int], workdir: Path,
                 smoothing: str = "modified-kneser-ney") -> tuple[int, dict[int, float]]:
    """Train one model per order on ``fit`` (one count pass at the largest order) and keep the order with the
    lowest bits per character on ``dev``. Returns (order, {order: dev bits per character})."""
    from kometrics.models.ngram import count_ngrams, train_ngram
    from kometrics.perplexity.ngram import tokenize_many

    units = tokenize_many(list(fit), unit)
    counts = count_ngrams([u for u in units if u], max(orders))
    dev_bpc = {}
    for n in orders:
        folder = workdir / f"dev-{unit}-{n}"
        train_ngram(fit, folder, n, unit, smoothing=smoothing, counts=counts, units=units)
        dev_bpc[n] = _quiet_score(dev, str(folder))["bits_per_character"]
        print(f"  dev {unit} order {n}: {dev_bpc[n]:.4f} bits/char", file=sys.stderr)
    return min(dev_bpc, key=dev_bpc.get), dev_bpc


def spelled_unknown_bits(texts: Sequence[str], model_dir: Path, speller_dir: Path) -> list[float]:
    """Per text, the bits that turn an n-gram model's score into a code length of the text. A unit the model
    does not know cost only P(<unk>), which names no particular unit; here each such unit is spelled out: a
    character as one of all Unicode code points (``CODE_POINT_BITS``), an eojeol or a morpheme's form character
    by character with the character unigram ``speller_dir`` (its ``</s>`` ends the word; a character it does
    not know costs ``CODE_POINT_BITS`` more)."""
    from kometrics.perplexity.ngram import load_ngram_model, resolve_model_file, tokenize_many

    meta = json.loads((model_dir / "model.json").read_text(encoding="utf-8"))
    model = load_ngram_model(resolve_model_file(model_dir))
    unknown = [[u for u in units if u not in model] for units in tokenize_many(list(texts), meta["unit"])]
    if meta["unit"] == "char":
        return [len(u) * CODE_POINT_BITS for u in unknown]
    if meta["unit"] == "eojeol":
        forms = [[u[1:] if u.startswith("\\") else u for u in us] for us in unknown]
    else:
        forms = [[u.rsplit("/", 1)[0] for u in us] for us in unknown]
    flat = [f for fs in forms for f in fs if f]
    if not flat:
        return [0.0] * len(texts)
    spelled = _quiet_score(flat, str(speller_dir))
    cost = iter(n / math.log(2) + k * CODE_POINT_BITS for n, k in zip(spelled["nll_sums"], spelled["unknown_units"]))
    return [math.fsum(next(cost) for f in fs if f) for fs in forms]


def _row(name: str, unit: str, r_text: dict[str, Any], r_eos: dict[str, Any] | None,
         spelled_bits: Sequence[float] | None = None, **extra: Any) -> dict[str, Any]:
    tokens = sum(r_text["token_counts"])
    chars = sum(r_text["char_counts"])
    spelled = math.fsum(spelled_bits) if spelled_bits is not None else 0.0
    return {"model": name, "unit": unit, "tokens": tokens,
            "tokens_per_char": tokens / sum(r_text["char_counts"]),
            "token_perplexity": r_text["corpus_perplexity"], "bits_per_token": r_text["bits_per_token"],
            "bits_per_character": r_text["bits_per_character"], "bits_per_byte": r_text["bits_per_byte"],
            "bits_per_character_spelled": r_text["bits_per_character"] + spelled / chars,
            "unknown_spelling_bits": spelled,
            "bits_per_character_eos": None if r_eos is None else r_eos["bits_per_character"],
            "token_perplexity_eos": None if r_eos is None else r_eos["corpus_perplexity"],
            "unknown_units": sum(r_text.get("unknown_units", [])) if "unknown_units" in r_text else None,
            "signature": r_text["signature"], **extra}


def _ngram_row(name: str, folder: Path, unit: str, test: Sequence[str], speller: Path, **extra: Any) -> dict[str, Any]:
    meta = json.loads((folder / "model.json").read_text(encoding="utf-8"))
    r_eos = _quiet_score(test, str(folder))
    r_text = _quiet_score(test, str(folder), ngram_eos=False)
    return _row(name, unit, r_text, r_eos, spelled_unknown_bits(test, folder, speller), order=meta["order"], vocab=meta["vocab_size"],
                ngrams=sum(meta["ngram_counts"]), **extra)


def run(data_dir: str | None = None, out: str | os.PathLike | None = None, lm: str | None = None,
        train_limit: int | None = None, test_limit: int | None = None, char_order: int | None = None,
        morpheme_order: int | None = None, eojeol_order: int | None = None, dev_fraction: float = 0.1,
        lm_batch_size: int = 8, device: str | None = None, speed_sentences: int = 10_000) -> dict[str, Any]:
    """The whole comparison; returns ``{"rows": [...], "data": {...}, "orders": {...}, "speed": {...}}``.

    ``*_order=None`` chooses the order on the dev split; a number skips the search (the demo does).
    ``lm=None``: Gemma-3-270M if present (``lm="none"`` skips the causal LM).
    """
    from kometrics.models.ngram import train_ngram

    work = Path(out) if out else Path(tempfile.mkdtemp(prefix="kometrics-generations-"))
    work.mkdir(parents=True, exist_ok=True)
    texts = load_texts(data_dir)
    train = texts["train"][:train_limit] if train_limit else texts["train"]
    test = texts["test"][:test_limit] if test_limit else texts["test"]
    assert not set(test) & set(train), "test sentences must be held apart from the training text"
    fit, dev = split_dev(train, dev_fraction, pairs=texts["train_pairs"])
    data = {"train_sentences": len(train), "train_chars": sum(map(len, train)), "test_sentences": len(test),
            "test_chars": sum(map(len, test)), "dev_sentences": len(dev), "overlap_removed": texts["overlap_removed"],
            "train_rows": texts["train_rows"], "sources": texts["sources"],
            "test_sha256": hashlib.sha256("\n".join(test).encode("utf-8")).hexdigest()}
    print(f"train {len(train)} sentences ({data['train_chars']} chars; {len(dev)} of them as dev split for the "
          f"order), test {len(test)} sentences ({data['test_chars']} chars); {texts['overlap_removed']} test "
          "sentences removed from the training text", file=sys.stderr)
    orders: dict[str, Any] = {}
    timings: dict[str, float] = {}
    choices = [("char", char_order, CHAR_ORDERS), ("morpheme", morpheme_order, MORPHEME_ORDERS),
               ("eojeol", eojeol_order, EOJEOL_ORDERS)]
    for unit, fixed, candidates in choices:
        if fixed is None:
            start = time.perf_counter()
            best, dev_bpc = choose_order(fit, dev, unit, candidates, work)
            orders[unit] = {"chosen": best, "dev_bits_per_character": dev_bpc,
                            "search_seconds": time.perf_counter() - start}
        else:
            orders[unit] = {"chosen": fixed, "dev_bits_per_character": None}
    rows = []
    specs = [("char unigram", "char", 1), (f"char {orders['char']['chosen']}-gram", "char", orders["char"]["chosen"]),
             (f"morpheme {orders['morpheme']['chosen']}-gram", "morpheme", orders["morpheme"]["chosen"]),
             (f"eojeol {orders['eojeol']['chosen']}-gram", "eojeol", orders["eojeol"]["chosen"])]
    for name, unit, order in specs:
        folder = work / f"{unit}-{order}"
        start = time.perf_counter()
        train_ngram(train, folder, order, unit, source="KorSTS train + KorNLI")
        timings[f"train {name}"] = time.perf_counter() - start
        rows.append(_ngram_row(name, folder, unit, test, work / "char-1", model_dir=str(folder),
                               train_seconds=timings[f"train {name}"]))
        print(f"  {name}: {rows[-1]['bits_per_character']:.4f} bits/char", file=sys.stderr)
    lm = default_lm() if lm is None else (None if lm == "none" else lm)
    if lm is not None:
        r, seconds = _lm_scores(test, lm, work, data["test_sha256"], lm_batch_size, device)
        from transformers import AutoTokenizer

        vocab = len(AutoTokenizer.from_pretrained(lm))
        # byte-level fallback: no unknown pieces, the score is already a code length of the text
        rows.append(_row(f"causal LM {Path(lm).name}", f"subword ({vocab:,} pieces)", r, None, vocab=vocab,
                         model_dir=lm, score_seconds=seconds))
        print(f"  {Path(lm).name}: {rows[-1]['bits_per_character']:.4f} bits/char ({seconds:.0f} s)",
              file=sys.stderr)
    result = {"rows": rows, "data": data, "orders": orders, "timings": timings}
    if speed_sentences:
        result["speed"] = speed(Path(rows[1]["model_dir"]), test, speed_sentences)
    (work / "generations.json").write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n",
                                           encoding="utf-8")
    result["out"] = str(work)
    return result


def _lm_scores(test: Sequence[str], lm: str, work: Path, test_sha256: str, batch_size: int,
               device: str | None) -> tuple[dict[str, Any], float]:
    """The causal LM's scores of the test text, kept in ``work/lm-scores.json`` and reused by a rerun on the same
    model and test text (the slow part of the comparison on a CPU)."""
    cache = work / "lm-scores.json"
    key = {"lm": str(Path(lm).resolve()) if Path(lm).exists() else lm, "test_sha256": test_sha256}
    if cache.is_file():
        kept = json.loads(cache.read_text(encoding="utf-8"))
        if kept.get("key") == key:
            print(f"  {Path(lm).name}: scores reused from {cache}", file=sys.stderr)
            return kept["result"], kept["seconds"]
    start = time.perf_counter()
    r = _quiet_score(test, lm, batch_size=batch_size, device=device)
    seconds = time.perf_counter() - start
    cache.write_text(json.dumps({"key": key, "seconds": seconds, "result": r}, ensure_ascii=False) + "\n",
                     encoding="utf-8")
    return r, seconds


def speed(model_dir: Path, sentences: Sequence[str], n: int = 10_000) -> dict[str, Any]:
    """Time the metric on ``n`` sentences (``sentences`` cycled) with an n-gram model, against the pure-Python
    back-off reading of the same ARPA file (the reference), in the same run."""
    from kometrics.models.ngram import arpa_log10prob, read_arpa
    from kometrics.perplexity.ngram import load_ngram_model, resolve_model_file, tokenize_many

    texts = [sentences[i % len(sentences)] for i in range(n)]
    load_ngram_model(resolve_model_file(model_dir))  # loading is timed apart
    start = time.perf_counter()
    r = _quiet_score(texts, str(model_dir))
    ours = time.perf_counter() - start
    start = time.perf_counter()
    probs, bows = read_arpa(resolve_model_file(model_dir))
    parse = time.perf_counter() - start
    meta = json.loads((model_dir / "model.json").read_text(encoding="utf-8"))
    start = time.perf_counter()
    units = tokenize_many(texts, meta["unit"])
    ref = [arpa_log10prob(probs, bows, meta["order"], u)[0] for u in units]
    theirs = time.perf_counter() - start
    gap = max(abs(-a * math.log(10) - b) / b for a, b in zip(ref, r["nll_sums"]))
    return {"sentences": n, "units": sum(r["token_counts"]), "metric_seconds": ours, "reference_seconds": theirs,
            "reference_parse_seconds": parse, "ratio": theirs / ours, "max_relative_gap": gap,
            "model": f"{meta['unit']} {meta['order']}-gram"}


def _fmt(x: Any, spec: str) -> str:
    return "–" if x is None else format(x, spec)


def format_table(result: dict[str, Any]) -> str:
    """The comparison as a Markdown table (bits per character first; per-token perplexity with its unit)."""
    lines = ["| model | unit | tokens / char | **bits / char** (unknown units spelled) | bits / char as scored "
             "(unknown = <unk>) | bits / char with </s> | per-token PPL (its unit) | unknown units |",
             "|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        unknown = "–" if r["unknown_units"] is None else f"{r['unknown_units']:,} ({r['unknown_units'] / r['tokens']:.1%})"
        lines.append(f"| {r['model']} | {r['unit']} | {r['tokens_per_char']:.3f} | "
                     f"**{r['bits_per_character_spelled']:.3f}** | {r['bits_per_character']:.3f} | "
                     f"{_fmt(r['bits_per_character_eos'], '.3f')} | {r['token_perplexity']:,.2f} | {unknown} |")
    return "\n".join(lines)


def plot(result: dict[str, Any], path: str | os.PathLike) -> Path:
    """Two panels: bits per character (comparable) and per-token perplexity on a log scale (not comparable:
    each bar has its own unit)."""
    from kometrics.bench.paraphrase.plotting import _pyplot, _save

    plt = _pyplot()
    rows = result["rows"]
    names = [r["model"].replace("causal LM ", "") for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), dpi=120)
    colors = ["tab:gray", "tab:blue", "tab:green", "tab:olive", "tab:red"][: len(rows)]
    bars = left.bar(names, [r["bits_per_character_spelled"] for r in rows], color=colors)
    left.bar_label(bars, fmt="%.2f", fontsize=8)
    left.set_ylabel("bits per character, unknown units spelled (lower is better)", fontsize=8)
    left.set_title("Same text, same unit: comparable", fontsize=9)
    bars = right.bar(names, [r["token_perplexity"] for r in rows], color=colors)
    right.bar_label(bars, labels=[f"{r['token_perplexity']:,.0f}\n{r['tokens_per_char']:.2f} tok/char"
                                  for r in rows], fontsize=7)
    right.set_yscale("log")
    right.set_ylim(top=max(r["token_perplexity"] for r in rows) * 12)
    left.set_ylim(top=max(r["bits_per_character_spelled"] for r in rows) * 1.12)
    right.set_ylabel("per-token perplexity (log scale)")
    right.set_title("Per-token perplexity: each bar has its own token", fontsize=9)
    for ax in (left, right):
        ax.tick_params(axis="x", labelrotation=25, labelsize=8)
        ax.grid(axis="y", alpha=0.3)
    d = result["data"]
    fig.suptitle(f"KLUE-STS dev sentences ({d['test_sentences']:,}, {d['test_chars']:,} chars); n-grams trained "
                 f"on KorSTS train + KorNLI ({d['train_sentences']:,} sentences)", fontsize=9)
    return _save(plt, fig, path)


def main(argv: list[str] | None = None, args: argparse.Namespace | None = None) -> int:
    args = args or build_parser().parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    result = run(data_dir=args.data_dir, out=args.out, lm=args.lm, train_limit=args.train_limit,
                 test_limit=args.limit, char_order=args.char_order, morpheme_order=args.morpheme_order,
                 eojeol_order=args.eojeol_order, lm_batch_size=args.batch_size, device=args.device,
                 speed_sentences=args.speed_sentences)
    d = result["data"]
    print(f"test: {d['test_sentences']} KLUE-STS dev sentences, {d['test_chars']} characters; train: "
          f"{d['train_sentences']} sentences, {d['train_chars']} characters ({d['overlap_removed']} test sentences "
          "found in the training text and removed)")
    for unit, o in result["orders"].items():
        if o["dev_bits_per_character"]:
            scores = ", ".join(f"{n}: {v:.3f}" for n, v in o["dev_bits_per_character"].items())
            print(f"{unit} order chosen on the dev split ({d['dev_sentences']} sentences): {o['chosen']} "
                  f"(bits/char {scores})")
    print(format_table(result))
    s = result.get("speed")
    if s:
        print(f"speed: {s['sentences']:,} sentences ({s['units']:,} units) with the {s['model']}: metric "
              f"{s['metric_seconds']:.2f} s, pure-Python back-off reference {s['reference_seconds']:.2f} s "
              f"(+{s['reference_parse_seconds']:.1f} s to read the ARPA): {s['ratio']:.1f}x; NLL agree to "
              f"{s['max_relative_gap']:.1e} (relative)")
    png = plot(result, Path(result["out"]) / "generations.png")
    print(f"figures: {Path(result['out']) / 'generations.json'}, {png}")
    return 0


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(prog="kometrics bench generations",
                                               description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", help="folder with klue/, korsts/, kornli/ (default: ../shared/data)")
    parser.add_argument("--out", help="folder for the models, generations.json and generations.png "
                                      "(default: a new temporary folder)")
    parser.add_argument("--lm", default=None, help="causal LM folder or Hub id (default: Gemma-3-270M's local "
                                                    "folder); 'none' to leave it out")
    parser.add_argument("--limit", type=int, default=None, help="first N test sentences only")
    parser.add_argument("--train-limit", type=int, default=None, help="first N training sentences only")
    parser.add_argument("--char-order", type=int, default=None, help="fixed order (default: chosen on dev)")
    parser.add_argument("--morpheme-order", type=int, default=None, help="fixed order (default: chosen on dev)")
    parser.add_argument("--eojeol-order", type=int, default=None, help="fixed order (default: chosen on dev)")
    parser.add_argument("--batch-size", type=int, default=8, help="causal LM batch size")
    parser.add_argument("--device", default=None, help="causal LM device (default: CUDA if available)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--speed-sentences", type=int, default=10_000,
                        help="sentences for the speed line (0: skip)")
    return parser


if __name__ == "__main__":
    sys.exit(main())
