"""The Korean BERTScore paper's experiment (Hyeon & Choi 2019, section 3) on public data: how well do sentence similarity metrics agree
with human judgements of graded paraphrase pairs?

For every pair the benchmark computes BLEU, GLEU, TER, chrF (:mod:`.ngram`) and korbertscore P/R/F1 at every
layer, with idf off and/or on (:mod:`.bert`), then correlates each column with the human score (mean of the
raters' z-scores, :mod:`.ratings`) with Pearson and Spearman and bootstrap 95% intervals (:mod:`.correlation`).
It prints the paper's Table 2 (metrics), Table 3 (layers) and Table 4 (example pairs), and writes them as CSV
and JSON with per-pair scores and PNG plots (:mod:`.plotting`).

Library use::

    from kometrics.bench.paraphrase import BenchmarkConfig, run_benchmark, write_outputs
    result = run_benchmark(BenchmarkConfig(data="klue-sts", model="klue/bert-base"))
    print(result.report())
    write_outputs(result, "runs/paraphrase")
"""

from __future__ import annotations

import csv
import json
import math
import os
import sys
import unicodedata
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kometrics.cli.io import jsonable
from kometrics.datasets_scripts.paraphrase.corpus import Corpus, build_named
from kometrics.korbertscore import known_model
from kometrics.korbertscore.model_setup import model_tag

from .bert import PRF, default_layer, layer_scores, model_depth
from .correlation import correlate, paired_difference
from .ngram import NGRAM_METRICS, TOKENIZATIONS, sentence_scores

__all__ = ["BenchmarkConfig", "BenchmarkResult", "run_benchmark", "write_outputs", "bert_column",
           "select_examples", "IDF_CHOICES"]

IDF_CHOICES = ("off", "on", "both")

#: ``default``: this project's choices (smoothed sentence BLEU, special tokens matched as bert_score does,
#: korbertscore's documented layer). ``paper``: the Korean BERTScore paper's protocol in one switch (see :data:`PAPER_PROTOCOL`).
PROTOCOLS = ("default", "paper")

#: What ``protocol="paper"`` sets: unsmoothed sentence BLEU (the paper's Table 4 shows BLEU 0.0000 for pairs
#: that share words), BERTScore over the n word pieces only (no [CLS]/[SEP]), Table 2's layer at 8/12 of the
#: depth (the paper's layer 8 of KorBERT's 12). Per-rater standard scores are the human score in both.
PAPER_PROTOCOL = {"bleu_smooth": "none", "exclude_special_tokens": True}


def paper_layer(depth: int) -> int:
    """The paper's layer (8 of 12, ETRI KorBERT) transferred by depth: ``round(8 / 12 * depth)``."""
    return max(0, min(depth, round(8 / 12 * depth)))


def bert_column(key: str, layer: int, idf: bool) -> str:
    """Name of a per-pair BERT column, e.g. ``BERT-F1@L8`` or ``BERT-F1@L8+idf``."""
    return f"BERT-{key}@L{layer}{'+idf' if idf else ''}"


@dataclass
class BenchmarkConfig:
    """Options of one run (all recorded in the results).

    ``data``: ``klue-sts`` | ``korsts`` | ``korsts-train`` | a ratings file | a scored-pairs file | a corpus
    folder (see :func:`~kometrics.datasets_scripts.paraphrase.corpus.build_named`).
    ``protocol``: ``default`` or ``paper`` (:data:`PAPER_PROTOCOL`: overrides ``bleu_smooth`` and
    ``exclude_special_tokens``, and Table 2's layer is :func:`paper_layer` unless ``layer`` is given).
    ``layers``: ``None``/``"all"`` = every layer 0..L, or a list. ``layer``: the layer of Table 2's BERT rows
    (``None``: korbertscore's default for the model, else 8/12 of its depth). ``ngram``/``bert``: compute the
    n-gram metrics / the korbertscore columns (``ngram=False`` is the layer sweep, ``kometrics korbertscore
    layers``). ``limit``: a seeded random subset of that many pairs. ``n_boot``: bootstrap resamples (seeded by
    ``seed``).
    """

    data: str = "klue-sts"
    model: str = "klue/bert-base"
    layers: str | list[int] | None = None
    layer: int | None = None
    tokenize: str = "ko-mecab"
    idf: str = "both"
    bert: bool = True
    ngram: bool = True
    limit: int | None = None
    seed: int = 0
    n_boot: int = 1000
    batch_size: int = 64
    device: str | None = None
    data_dir: str | None = None
    scale: tuple[float, float] | None = None
    examples: int = 10
    bleu_smooth: str = "exp"
    exclude_special_tokens: bool = False
    protocol: str = "default"
    progress: bool = True

    def validate(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {PROTOCOLS}, got {self.protocol!r}")
        if self.protocol == "paper":
            for key, value in PAPER_PROTOCOL.items():
                setattr(self, key, value)
        if self.tokenize not in TOKENIZATIONS:
            raise ValueError(f"tokenize must be one of {TOKENIZATIONS}, got {self.tokenize!r}")
        if self.idf not in IDF_CHOICES:
            raise ValueError(f"idf must be one of {IDF_CHOICES}, got {self.idf!r}")
        if self.limit is not None and self.limit < 2:
            raise ValueError(f"limit must be at least 2 pairs, got {self.limit}")
        if self.n_boot < 2:
            raise ValueError(f"n_boot must be >= 2, got {self.n_boot}")
        if not (self.ngram or self.bert):
            raise ValueError("nothing to compute: ngram and bert are both off")
        if self.examples < 0:
            raise ValueError(f"examples must be >= 0, got {self.examples}")


@dataclass
class BenchmarkResult:
    """Everything one run produced (JSON-able through :meth:`to_json`)."""

    config: dict[str, Any]
    corpus: dict[str, Any]
    ids: list[str]
    references: list[str]
    candidates: list[str]
    human: np.ndarray
    rating_mean: np.ndarray
    columns: dict[str, np.ndarray]
    table2: list[dict[str, Any]]
    table3: list[dict[str, Any]]
    table4: list[dict[str, Any]]
    best_layer: dict[str, int]
    signature: str
    model_label: str = ""
    notes: list[str] = field(default_factory=list)
    #: BERT-F1 (Table 2 layer) minus each n-gram metric in Pearson, with paired bootstrap intervals.
    comparisons: list[dict[str, Any]] = field(default_factory=list)

    def correlations(self, column: str) -> dict[str, Any]:
        for row in self.table2:
            if row["column"] == column:
                return row
        raise KeyError(column)

    def best_metric(self) -> dict[str, Any]:
        """The Table 2 row with the largest |Pearson| (TER correlates negatively: lower is better)."""
        rows = [r for r in self.table2 if not math.isnan(r["pearson"])]
        return max(rows, key=lambda r: abs(r["pearson"])) if rows else self.table2[0]

    def report(self) -> str:
        return "\n\n".join(x for x in (format_table2(self), format_table3(self), format_table4(self)) if x)

    def to_json(self) -> dict[str, Any]:
        return _strict({
            "signature": self.signature, "config": self.config, "model": self.model_label,
            "corpus": self.corpus, "n_pairs": len(self.ids), "table2": self.table2, "table3": self.table3,
            "table4": self.table4, "best_layer": self.best_layer, "comparisons": self.comparisons,
            "notes": self.notes,
        })


def _strict(obj: Any) -> Any:
    return jsonable(obj, finite=True)


def _progress_fn(enabled: bool) -> Callable[[Iterable, str, int], Iterable] | None:
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return lambda it, desc, total: tqdm(it, desc=desc, total=total, file=sys.stderr, leave=False)


def _parse_layers(layers: str | Sequence[int] | None, depth: int) -> list[int] | None:
    if layers is None or layers == "all":
        return None
    if isinstance(layers, str):
        out: list[int] = []
        try:
            for part in layers.split(","):
                part = part.strip()
                if "-" in part:
                    lo, hi = part.split("-", 1)
                    out.extend(range(int(lo), int(hi) + 1))
                elif part:
                    out.append(int(part))
        except ValueError:
            raise ValueError(f"layers must be 'all', a range like 0-12 or a list like 4,8,12; got {layers!r}") from None
        if not out:
            raise ValueError(f"layers {layers!r} names no layer")
        layers = out
    bad = [lay for lay in layers if not 0 <= int(lay) <= depth]
    if bad:
        raise ValueError(f"layers {bad} are outside 0..{depth} (the model has {depth} layers; 0 = embeddings)")
    return sorted({int(lay) for lay in layers})


def _ngram_signature(cfg: BenchmarkConfig) -> list[str]:
    if not cfg.ngram:
        return ["ngram:off"]
    import nltk
    import sacrebleu

    return [f"tok:{cfg.tokenize}", f"bleu-smooth:{cfg.bleu_smooth}", f"sacrebleu:{sacrebleu.__version__}",
            f"nltk:{nltk.__version__}"]


def select_examples(human: np.ndarray, k: int) -> list[int]:
    """Indices of ``k`` pairs at evenly spaced ranks of the human score, highest first (the paper's Table 4
    runs from identical paraphrases down to unrelated pairs). Deterministic; ties keep corpus order."""
    if k <= 0 or len(human) == 0:
        return []
    order = np.argsort(-human, kind="stable")
    picks = np.unique(np.round(np.linspace(0, len(human) - 1, min(k, len(human)))).astype(int))
    return [int(order[p]) for p in picks]


def _subset(corpus: Corpus, cfg: BenchmarkConfig) -> tuple[list[dict], list[str]]:
    notes = []
    records = [r for r in corpus.records if r.get("human_score") is not None]
    dropped = len(corpus.records) - len(records)
    if dropped:
        msg = f"{dropped} pair(s) without a human score (no usable rating) are left out of the benchmark"
        warnings.warn(msg, stacklevel=3)
        notes.append(msg)
    if cfg.limit is not None and cfg.limit < len(records):
        rng = np.random.default_rng(cfg.seed)
        keep = np.sort(rng.choice(len(records), size=cfg.limit, replace=False))
        notes.append(f"--limit {cfg.limit}: a random subset (seed {cfg.seed}) of the {len(records)} pairs")
        records = [records[i] for i in keep]
    return records, notes


def describe_model(model: str) -> str:
    """How reports and plots name ``model``: a folder that ``kometrics models prepare`` made is named by the model
    it was made from (``google/gemma-3-270m (prepared: <folder>)``), not by a path that only exists here."""
    known = known_model(model)
    if known is not None and known != str(model).rstrip("/"):
        return f"{known} (prepared: {os.path.basename(str(model).rstrip('/'))})"
    return str(model)


def run_benchmark(cfg: BenchmarkConfig, corpus: Corpus | None = None, model_label: str | None = None
                  ) -> BenchmarkResult:
    """Run the benchmark described by ``cfg`` (on ``corpus`` if given, else the one ``cfg.data`` names)."""
    cfg.validate()
    if corpus is None:
        corpus = build_named(cfg.data, cfg.data_dir, scale=cfg.scale)
    records, notes = _subset(corpus, cfg)
    if len(records) < 2:
        raise ValueError(f"the corpus has {len(records)} usable pair(s); at least 2 are needed")
    cands = [r["candidate"] for r in records]
    refs = [r["reference"] for r in records]
    human = np.array([r["human_score"] for r in records], dtype=np.float64)
    progress = _progress_fn(cfg.progress)

    idf_flags = {"off": [False], "on": [True], "both": [False, True]}[cfg.idf] if cfg.bert else []
    table_layer = None
    layer_list: list[int] = []
    wanted = None
    if cfg.bert:  # resolve the model first: a model that cannot load fails before any work
        depth = model_depth(cfg.model)
        wanted = _parse_layers(cfg.layers, depth)
        if cfg.layer is not None:
            table_layer = cfg.layer
        else:
            table_layer = paper_layer(depth) if cfg.protocol == "paper" else default_layer(cfg.model)
        if not 0 <= table_layer <= depth:
            raise ValueError(f"layer {table_layer} is outside 0..{depth}")
        if wanted is not None and table_layer not in wanted:
            wanted = sorted({*wanted, table_layer})
    ngram_names = NGRAM_METRICS if cfg.ngram else ()
    columns: dict[str, np.ndarray] = {}
    if cfg.ngram:
        columns.update(sentence_scores(cands, refs, tokenize=cfg.tokenize, bleu_smooth=cfg.bleu_smooth,
                                       progress=progress))
    if cfg.bert:
        for flag in idf_flags:
            if cfg.progress:
                print(f"korbertscore: {cfg.model}, all layers in one pass, idf={'on' if flag else 'off'} ...",
                      file=sys.stderr)
            per_layer = layer_scores(cands, refs, cfg.model, layers=wanted, idf=flag, batch_size=cfg.batch_size,
                                     device=cfg.device, exclude_special_tokens=cfg.exclude_special_tokens)
            layer_list = sorted(per_layer)
            for layer, prf in per_layer.items():
                for key in PRF:
                    columns[bert_column(key, layer, flag)] = prf[key]

    corr = {name: correlate(col, human, n_resamples=cfg.n_boot, seed=cfg.seed) for name, col in columns.items()}

    table2 = []
    for name in ngram_names:
        table2.append({"metric": name, "column": name, "layer": None, "idf": None, **corr[name]})
    for flag in idf_flags:
        for key in PRF:
            col = bert_column(key, table_layer, flag)
            table2.append({"metric": f"BERT-{key}{' (idf)' if flag else ''}", "column": col,
                           "layer": table_layer, "idf": flag, **corr[col]})
    comparisons = []
    if cfg.bert:
        f1 = bert_column("F1", table_layer, idf_flags[0])
        for name in ngram_names:
            sign = -1.0 if name == "TER" else 1.0  # TER: lower is better, so compare with -TER
            diff = paired_difference(columns[f1], sign * columns[name], human, n_resamples=cfg.n_boot,
                                     seed=cfg.seed)
            comparisons.append({"a": f1, "b": ("-" if sign < 0 else "") + name, "statistic": "pearson",
                                "difference": diff["difference"], "ci": diff["ci"]})
    table3 = []
    best_layer: dict[str, int] = {}
    for flag in idf_flags:
        best, best_r = None, -math.inf
        for layer in layer_list:
            row: dict[str, Any] = {"layer": layer, "idf": flag}
            for key in PRF:
                c = corr[bert_column(key, layer, flag)]
                for stat in ("pearson", "pearson_ci", "spearman", "spearman_ci"):
                    row[f"{key}_{stat}"] = c[stat]
            if not math.isnan(row["F1_pearson"]) and row["F1_pearson"] > best_r:
                best, best_r = layer, row["F1_pearson"]
            table3.append(row)
        if best is not None:
            best_layer["idf" if flag else "no_idf"] = best

    picks = select_examples(human, cfg.examples)
    f1_col = bert_column("F1", table_layer, False if False in idf_flags else True) if cfg.bert else None
    table4 = []
    for i in picks:
        row = {"id": records[i]["id"], "reference": refs[i], "candidate": cands[i], "human_score": float(human[i]),
               "rating_mean": float(records[i]["rating_mean"])}
        for name in ngram_names:
            row[name] = float(columns[name][i])
        if f1_col:
            row["BERT-F1"] = float(columns[f1_col][i])
        table4.append(row)

    from kometrics import __version__

    layers_txt = (f"{layer_list[0]}-{layer_list[-1]}" if layer_list == list(range(layer_list[0], layer_list[-1] + 1))
                  else ",".join(map(str, layer_list))) if layer_list else "none"
    signature = "|".join([
        "paraphrase", f"protocol:{cfg.protocol}", f"data:{corpus.name}", f"n:{len(human)}",
        f"model:{model_tag(cfg.model) if cfg.bert else 'none'}", f"layers:{layers_txt}", f"table-layer:{table_layer}",
        f"idf:{cfg.idf if cfg.bert else 'none'}",
        f"special:{'excluded' if cfg.exclude_special_tokens else 'included'}", *_ngram_signature(cfg),
        f"boot:{cfg.n_boot}", f"seed:{cfg.seed}", f"human:{corpus.meta.get('human_score', {}).get('method')}",
        f"kometrics:{__version__}",
    ])
    meta = {k: v for k, v in corpus.meta.items() if k != "raters"}
    return BenchmarkResult(
        config=_strict(asdict(cfg)), corpus=_strict(meta), ids=[str(r["id"]) for r in records], references=refs,
        candidates=cands, human=human, rating_mean=np.array([r["rating_mean"] for r in records], dtype=float),
        columns=columns, table2=table2, table3=table3, table4=table4, best_layer=best_layer, signature=signature,
        model_label=model_label or (describe_model(cfg.model) if cfg.bert else "none"), notes=notes, comparisons=comparisons)


# ----------------------------------------------------------------------------------------------- printing
def _ci(lo_hi: Sequence[float]) -> str:
    lo, hi = lo_hi
    return "[   nan,    nan]" if math.isnan(lo) else f"[{lo:+.4f}, {hi:+.4f}]"


def _f(x: float) -> str:
    return "   nan " if x is None or math.isnan(x) else f"{x:+.4f}"


def format_table2(result: BenchmarkResult) -> str:
    """The paper's Table 2: each metric's correlation with the human score."""
    lines = [f"Table 2. Correlation with the human score ({len(result.ids)} pairs of {result.corpus.get('name')}; "
             f"bootstrap 95% intervals)",
             f"{'metric':<14} {'layer':>5}  {'Pearson':>8} {'95% CI':<18}  {'Spearman':>8} {'95% CI':<18}"]
    for r in result.table2:
        layer = "" if r["layer"] is None else str(r["layer"])
        lines.append(f"{r['metric']:<14} {layer:>5}  {_f(r['pearson']):>8} {_ci(r['pearson_ci']):<18}  "
                     f"{_f(r['spearman']):>8} {_ci(r['spearman_ci']):<18}")
    best = result.best_metric()
    lines.append(f"best |Pearson|: {best['metric']} ({best['pearson']:+.4f}); model: {result.model_label}")
    if result.comparisons:
        a = result.comparisons[0]["a"]
        parts = [f"{c['b']} {c['difference']:+.4f} {_ci(c['ci'])}" for c in result.comparisons]
        lines.append(f"Pearson of {a} minus (paired bootstrap 95%): " + "; ".join(parts))
    return "\n".join(lines)


def format_table3(result: BenchmarkResult) -> str:
    """The paper's Table 3: Pearson of P, R and F1 per layer (best F1 layer marked with *)."""
    if not result.table3:
        return ""
    blocks = []
    for flag in sorted({r["idf"] for r in result.table3}):
        key = "idf" if flag else "no_idf"
        lines = [f"Table 3. Pearson by layer (idf {'on' if flag else 'off'}; layer 0 = embeddings)",
                 f"{'layer':>5}  {'Precision':>9} {'Recall':>9} {'F1':>9}  {'F1 95% CI':<18}"]
        for r in result.table3:
            if r["idf"] != flag:
                continue
            mark = "*" if result.best_layer.get(key) == r["layer"] else " "
            lines.append(f"{r['layer']:>4}{mark}  {_f(r['P_pearson']):>9} {_f(r['R_pearson']):>9} "
                         f"{_f(r['F1_pearson']):>9}  {_ci(r['F1_pearson_ci']):<18}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _cells(text: str) -> int:
    """Terminal width of ``text``: Hangul and other wide characters take two cells."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def _short(text: str, width: int = 28) -> str:
    """``text`` on one line, cut to ``width`` terminal cells and padded to exactly that width."""
    text = " ".join(text.split())
    if _cells(text) > width:
        while _cells(text) > width - 1:
            text = text[:-1]
        text += "…"
    return text + " " * (width - _cells(text))


def format_table4(result: BenchmarkResult) -> str:
    """The paper's Table 4: example pairs from the most to the least similar, with every metric."""
    if not result.table4:
        return ""
    metrics = [m for m in (*NGRAM_METRICS, "BERT-F1") if m in result.table4[0]]
    head = f"{'id':<22} {'reference':<28} {'candidate':<28} {'human':>6} {'mean':>5} " + " ".join(
        f"{m:>6}" for m in metrics)
    lines = ["Table 4. Example pairs (human = mean rater z-score; mean = mean raw rating; "
             "BLEU/chrF/TER in 0-1 units)", head]
    for r in result.table4:
        vals = " ".join(f"{r[m]:>6.3f}" for m in metrics)
        lines.append(f"{_short(r['id'], 22)} {_short(r['reference'])} {_short(r['candidate'])} "
                     f"{r['human_score']:>+6.2f} {r['rating_mean']:>5.2f} {vals}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ writing
def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    flat = []
    for r in rows:
        out = {}
        for k, v in r.items():
            if isinstance(v, (list, tuple)) and len(v) == 2 and k.endswith("_ci"):
                out[f"{k}_low"], out[f"{k}_high"] = v
            else:
                out[k] = v
        flat.append(out)
    keys = list(dict.fromkeys(k for r in flat for k in r))
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=keys)
        writer.writeheader()
        writer.writerows(flat)


def write_outputs(result: BenchmarkResult, out_dir: str | os.PathLike, plots: bool = True) -> list[Path]:
    """Write ``table2.csv``, ``table3.csv``, ``table4.csv``, ``scores.csv`` (every column per pair),
    ``results.json`` (tables, config, signature, corpus facts) and, with ``plots``, ``layers.png`` and
    ``scatter.png``. Returns the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, rows in (("table2", result.table2), ("table3", result.table3), ("table4", result.table4)):
        if rows:
            _write_csv(out / f"{name}.csv", rows)
            paths.append(out / f"{name}.csv")
    score_rows = []
    for i, pid in enumerate(result.ids):
        row = {"id": pid, "human_score": float(result.human[i]), "rating_mean": float(result.rating_mean[i])}
        row.update({name: float(col[i]) for name, col in result.columns.items()})
        score_rows.append(row)
    _write_csv(out / "scores.csv", score_rows)
    paths.append(out / "scores.csv")
    (out / "results.json").write_text(json.dumps(result.to_json(), ensure_ascii=False, indent=2) + "\n",
                                      encoding="utf-8")
    paths.append(out / "results.json")
    if plots:
        from .plotting import plot_layers, plot_scatter

        if result.table3:
            paths.append(plot_layers(result, out / "layers.png"))
        paths.append(plot_scatter(result, out / "scatter.png"))
    return paths
