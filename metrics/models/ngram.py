"""Train interpolated Kneser-Ney n-gram language models on Korean text and write them as ARPA files.

Counting is done by ``kaldingram`` (its ``NgramCounts``: raw counts of every order and, for the lower orders,
the set of distinct left neighbours of each n-gram, i.e. the Kneser-Ney continuation counts). The smoothing is
done here, because kaldingram's own estimate is *back-off* Kneser-Ney with one discount per order and no
``<unk>`` (SRILM ``-ukndiscount``), and its order-1 file reader keeps only the first word of each line.

The model (interpolated Kneser-Ney, and its modified form, of Chen & Goodman 1999) for order N, units padded as
``<s> u_1 .. u_n </s>``:

- adjusted count a(x) of an n-gram x: its raw count c(x) at the highest order N, or when x starts with
  ``<s>``; otherwise the number of distinct units v with c(v x) > 0;
- discounts per order m from the counts-of-counts n_r of the adjusted counts of that order, with
  Y = n_1 / (n_1 + 2 n_2): ``kneser-ney`` uses D = Y for every count; ``modified-kneser-ney`` uses
  D_1 = 1 - 2Y n_2/n_1, D_2 = 2 - 3Y n_3/n_2, D_3+ = 3 - 4Y n_4/n_3 (Chen & Goodman);
- for a history h seen at order m, with S(h) = sum_w a(h w):
  P_m(w | h) = max(a(h w) - D(a(h w)), 0) / S(h) + gamma(h) P_{m-1}(w | h minus its first unit),
  gamma(h) = 1 - sum_w max(a(h w) - D, 0) / S(h); for an unseen history P_m(w | h) = P_{m-1}(w | ...);
- the unigram level interpolates with the uniform distribution over the vocabulary V (units seen as
  predicted, ``</s>`` included, ``<s>`` excluded, plus ``<unk>``): P_1(w) = max(a(w) - D, 0)/S + gamma / |V|,
  so an unknown unit gets P_1(<unk>) = gamma / |V| and never zero.

The ARPA file stores, for every seen n-gram, the interpolated log10 probability (17 significant digits) and,
for every seen history, log10 gamma(h) as its back-off weight: the standard back-off reading of the file gives
exactly P_N. Metadata (unit, order, smoothing, discounts, tokenizer, training data hash) go to ``model.json``
beside ``model.arpa``; the perplexity metric reads them (see :mod:`kometrics.perplexity.ngram`).
"""

from __future__ import annotations

import datetime
import gc
import hashlib
import json
import math
import os
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kometrics.perplexity.ngram import BOS, EOS, UNITS, UNK, kiwi_info, metadata_path, tokenize_many

__all__ = ["SMOOTHINGS", "KneserNey", "count_ngrams", "estimate", "train_ngram", "read_arpa", "arpa_log10prob"]

SMOOTHINGS = ("modified-kneser-ney", "kneser-ney")


def count_ngrams(unit_lists: Iterable[Sequence[str]], order: int) -> Any:
    """kaldingram ``NgramCounts`` of order ``order`` over sentences given as unit lists (no whitespace inside a
    unit; empty sentences must be left out by the caller). The counts serve every order up to ``order``."""
    from kaldingram.train import NgramCounts

    if not isinstance(order, int) or isinstance(order, bool) or order < 1:
        raise ValueError(f"order must be a positive integer, got {order!r}")
    counts = NgramCounts(order, bos_symbol=BOS, eos_symbol=EOS)
    was_enabled = gc.isenabled()
    gc.disable()  # millions of small containers, no cycles (kaldingram does the same)
    try:
        for units in unit_lists:
            counts.add_raw_counts_from_line(" ".join(units))
    finally:
        if was_enabled:
            gc.enable()
    return counts


def _adjusted(counts: Any, level: int, order: int) -> dict[tuple[str, ...], dict[str, int]]:
    """history -> {unit: adjusted count} for the n-grams of length ``level + 1`` in a model of ``order``."""
    out: dict[tuple[str, ...], dict[str, int]] = {}
    for hist, cfh in counts.counts[level].items():
        raw = level == order - 1 or (hist[:1] == (BOS,))
        row = {}
        for w, c in cfh.word_to_count.items():
            if w == BOS:
                continue  # <s> is never predicted
            row[w] = c if raw else len(cfh.word_to_context[w])
        if row:
            out[hist] = row
    return out


def _discounts(adjusted: dict[tuple[str, ...], dict[str, int]], smoothing: str, m: int) -> tuple[float, float, float]:
    n = Counter(a for row in adjusted.values() for a in row.values() if a <= 4)
    n1, n2, n3, n4 = (n[r] for r in (1, 2, 3, 4))
    where = f"order {m} (counts-of-counts n1..n4 = {n1}, {n2}, {n3}, {n4})"
    if n1 == 0:
        raise ValueError(f"cannot estimate the Kneser-Ney discount of {where}: no n-gram seen once. Use more "
                         "training text, a lower order, or give fixed discounts")
    y = n1 / (n1 + 2 * n2)
    if smoothing == "kneser-ney":
        return (y, y, y)
    if not (n2 and n3 and n4):
        raise ValueError(f"cannot estimate the modified Kneser-Ney discounts of {where}: a count-of-counts is "
                         "zero. Use more training text, a lower order, smoothing='kneser-ney', or fixed discounts")
    d = (1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3)
    for r, dr in enumerate(d, start=1):
        if not 0 < dr <= r:
            raise ValueError(f"the modified Kneser-Ney discount D{r} of {where} is {dr:.4f}, outside (0, {r}]: "
                             "use more training text, smoothing='kneser-ney', or fixed discounts")
    return d


def _discount(d: tuple[float, float, float], a: int) -> float:
    return d[min(a, 3) - 1]


@dataclass
class KneserNey:
    """An interpolated Kneser-Ney model: ``prob(unit, context)`` in float64, ``write_arpa(path)``.

    ``levels[k]`` maps each history of length k to ``(gamma, {unit: discounted share})`` where the share is
    max(a(h w) - D, 0) / S(h); ``unigram[w]`` is P_1(w) for every unit of ``vocab`` (``<unk>`` included).
    """

    order: int
    smoothing: str
    discounts: list[tuple[float, float, float]]  # per order 1..N: D for adjusted counts 1, 2, 3+
    vocab: list[str]
    unigram: dict[str, float]
    levels: list[dict[tuple[str, ...], tuple[float, dict[str, float]]]] = field(default_factory=list)

    def prob(self, unit: str, context: Sequence[str] = ()) -> float:
        """P(unit | context), context = the preceding units (``<s>`` first for a sentence start); an unknown
        unit is ``<unk>``."""
        w = unit if unit in self.unigram and unit != BOS else UNK
        p = self.unigram[w]
        ctx = tuple(context)[max(0, len(context) - (self.order - 1)):] if self.order > 1 else ()
        for k in range(1, len(ctx) + 1):
            entry = self.levels[k].get(ctx[len(ctx) - k:])
            if entry is not None:
                gamma, share = entry
                p = share.get(w, 0.0) + gamma * p
        return p

    def sentence_log10prob(self, units: Sequence[str], bos: bool = True, eos: bool = True) -> float:
        """log10 P of a sentence's units (``</s>`` predicted when ``eos``)."""
        seq = [*units, EOS] if eos else list(units)
        ctx: list[str] = [BOS] if bos else []
        total = 0.0
        for u in seq:
            total += math.log10(self.prob(u, ctx))
            ctx.append(u)
        return total

    def ngram_counts(self) -> list[int]:
        """Number of n-grams of each order in the ARPA file."""
        return [len(self.unigram) + 1] + [sum(len(s) for _, s in self.levels[k].values())
                                          for k in range(1, self.order)]

    def write_arpa(self, path: str | os.PathLike) -> None:
        """Write the model as an ARPA back-off file (log10 probabilities and back-off weights, 17 digits)."""
        def fmt(x: float) -> str:
            return f"{x:.17g}"

        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write("\\data\\\n")
            # kenlm reads no unigram files: a unigram model gets an empty 2-gram section (same probabilities)
            sizes = self.ngram_counts() + ([0] if self.order == 1 else [])
            for m, n in enumerate(sizes, start=1):
                f.write(f"ngram {m}={n}\n")
            f.write("\n\\1-grams:\n")
            bows = self.levels[1] if self.order > 1 else {}
            for w in [BOS, *self.vocab]:
                lp = "-99" if w == BOS else fmt(math.log10(self.unigram[w]))
                bow = bows.get((w,))
                f.write(f"{lp}\t{w}" + (f"\t{fmt(math.log10(bow[0]))}\n" if bow else "\n"))
            for k in range(1, self.order):
                f.write(f"\n\\{k + 1}-grams:\n")
                nxt = self.levels[k + 1] if k + 1 < self.order else {}
                for hist in sorted(self.levels[k]):
                    for w in sorted(self.levels[k][hist][1]):
                        gram = (*hist, w)
                        lp = fmt(math.log10(self.prob(w, hist)))
                        bow = nxt.get(gram)
                        f.write(f"{lp}\t{' '.join(gram)}" + (f"\t{fmt(math.log10(bow[0]))}\n" if bow else "\n"))
            if self.order == 1:
                f.write("\n\\2-grams:\n")
            f.write("\n\\end\\\n")


def estimate(counts: Any, order: int | None = None, smoothing: str = "modified-kneser-ney",
             discounts: Sequence[Sequence[float] | float] | None = None) -> KneserNey:
    """An interpolated Kneser-Ney model of ``order`` (default the counts' order; any lower order works from
    the same counts) from kaldingram counts. ``discounts``: per order 1..N, one D or (D1, D2, D3+) instead of
    the estimates."""
    if smoothing not in SMOOTHINGS:
        raise ValueError(f"smoothing must be one of {SMOOTHINGS}, got {smoothing!r}")
    order = counts.ngram_order if order is None else order
    if not 1 <= order <= counts.ngram_order:
        raise ValueError(f"order must be between 1 and the counts' order {counts.ngram_order}, got {order}")
    if discounts is not None and len(discounts) != order:
        raise ValueError(f"discounts must give one entry per order (1..{order}), got {len(discounts)}")
    levels_adj = [_adjusted(counts, k, order) for k in range(order)]
    ds: list[tuple[float, float, float]] = []
    for k in range(order):
        if discounts is not None:
            d = discounts[k]
            dk = (float(d),) * 3 if isinstance(d, (int, float)) else tuple(float(x) for x in d)
            if len(dk) != 3 or not all(0 < x <= r for r, x in enumerate(dk, start=1)):
                raise ValueError(f"discounts[{k}] must be one D in (0, 1] or (D1, D2, D3+) with 0 < Dr <= r, "
                                 f"got {d!r}")
            ds.append(dk)  # type: ignore[arg-type]
        else:
            ds.append(_discounts(levels_adj[k], smoothing, k + 1))
    uni = levels_adj[0].get((), {})
    if not uni:
        raise ValueError("no training text: every sentence was empty")
    total = sum(uni.values())
    shares = {w: max(a - _discount(ds[0], a), 0.0) / total for w, a in uni.items()}
    gamma0 = 1.0 - math.fsum(shares.values())
    vocab = sorted(uni) + [UNK]
    unigram = {w: shares.get(w, 0.0) + gamma0 / len(vocab) for w in vocab}
    levels: list[dict[tuple[str, ...], tuple[float, dict[str, float]]]] = [{}]
    for k in range(1, order):
        level = {}
        for hist, row in levels_adj[k].items():
            s = sum(row.values())
            share = {w: max(a - _discount(ds[k], a), 0.0) / s for w, a in row.items()}
            level[hist] = (1.0 - math.fsum(share.values()), share)
        levels.append(level)
    return KneserNey(order=order, smoothing=smoothing, discounts=ds, vocab=vocab, unigram=unigram, levels=levels)


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def train_ngram(texts: Sequence[str], out_dir: str | os.PathLike, order: int, unit: str,
                smoothing: str = "modified-kneser-ney", discounts: Sequence[Any] | None = None,
                source: str | None = None, counts: Any = None, units: Sequence[Sequence[str]] | None = None,
                ) -> dict[str, Any]:
    """Train on ``texts`` (one sentence each) and write ``out_dir/model.arpa`` and ``out_dir/model.json``.

    Empty (or whitespace-only, for eojeol and morpheme units) sentences are left out and counted in the
    metadata. ``counts``/``units``: reuse counts (of at least ``order``) and units made from the same texts
    (order search). Returns the metadata (``arpa`` and ``metadata`` hold the paths).
    """
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] is {type(t).__name__}, not a string")
    if units is None:
        units = tokenize_many(list(texts), unit)
    kept = [i for i, u in enumerate(units) if u]
    if counts is None:
        counts = count_ngrams((units[i] for i in kept), order)
    model = estimate(counts, order=order, smoothing=smoothing, discounts=discounts)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    arpa = out / "model.arpa"
    model.write_arpa(arpa)
    import kaldingram

    digest = hashlib.sha256("\n".join(unicodedata.normalize("NFC", texts[i]) for i in kept).encode("utf-8"))
    meta: dict[str, Any] = {
        "format": "kometrics-ngram/1",
        "unit": unit,
        "order": order,
        "smoothing": smoothing,
        "interpolated": True,
        "discounts": {str(m + 1): list(d) for m, d in enumerate(model.discounts)},
        "discounts_given": discounts is not None,
        "symbols": {"bos": BOS, "eos": EOS, "unk": UNK, "space": "<sp>" if unit != "eojeol" else None},
        "normalization": "NFC",
        "tokenizer": kiwi_info() if unit == "morpheme" else None,
        "vocab_size": len(model.vocab),
        "ngram_counts": model.ngram_counts(),
        "unk_log10prob": math.log10(model.unigram[UNK]),
        "training_data": {"source": source, "sentences": len(kept), "empty_skipped": len(texts) - len(kept),
                          "units": sum(len(units[i]) for i in kept),
                          "sha256": digest.hexdigest()},
        "arpa_sha256": _file_sha256(arpa),
        "trainer": f"kometrics.models.ngram (counts: kaldingram {getattr(kaldingram, '__version__', '?')})",
        "created": datetime.date.today().isoformat(),
    }
    meta_file = metadata_path(arpa)
    meta_file.write_text(json.dumps(meta, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return {**meta, "arpa": str(arpa), "metadata": str(meta_file)}


def read_arpa(path: str | os.PathLike) -> tuple[dict[tuple[str, ...], float], dict[tuple[str, ...], float]]:
    """An ARPA file as two dicts, n-gram -> log10 probability and n-gram -> log10 back-off weight (float64)."""
    probs: dict[tuple[str, ...], float] = {}
    bows: dict[tuple[str, ...], float] = {}
    n = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("\\") and line.endswith("-grams:"):
                n = int(line[1:].split("-")[0])
                continue
            if not n or not line.strip() or line.startswith("\\"):
                continue
            parts = line.split("\t") if "\t" in line else line.split()
            if "\t" in line:
                gram = tuple(parts[1].split(" "))
                bow = parts[2] if len(parts) > 2 else None
            else:
                gram = tuple(parts[1:1 + n])
                bow = parts[1 + n] if len(parts) > 1 + n else None
            probs[gram] = float(parts[0])
            if bow is not None:
                bows[gram] = float(bow)
    return probs, bows


def arpa_log10prob(probs: dict[tuple[str, ...], float], bows: dict[tuple[str, ...], float], order: int,
                   units: Sequence[str], bos: bool = True, eos: bool = True) -> tuple[float, int]:
    """Back-off reading of an ARPA model (the textbook recursion, pure Python): log10 P of a sentence and the
    number of units that were not in the vocabulary (scored as ``<unk>``)."""
    seq = [*units, EOS] if eos else list(units)
    ctx: list[str] = [BOS] if bos else []
    total, unknown = 0.0, 0
    for u in seq:
        w = u if (u,) in probs and u != BOS else UNK
        unknown += w == UNK and u != UNK
        hist = tuple(ctx[max(0, len(ctx) - (order - 1)):]) if order > 1 else ()
        lp = 0.0
        while (*hist, w) not in probs:
            if not hist:  # <unk> missing from the file: kenlm's substitute
                lp -= 100.0
                break
            lp += bows.get(hist, 0.0)
            hist = hist[1:]
        else:
            lp += probs[(*hist, w)]
        total += lp
        ctx.append(w)
    return total, unknown
