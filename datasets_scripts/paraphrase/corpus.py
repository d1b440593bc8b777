"""The graded paraphrase corpus: one record per sentence pair with every rater's score, as a folder that
``datasets.load_dataset(folder)`` loads.

A corpus folder holds ``pairs-<hash>.jsonl`` (the records), ``corpus.json`` (how it was built: scale, human-score
method, ddof, agreement, per-rater statistics) and ``README.md`` (a dataset card whose YAML ``configs:`` and
``dataset_info.features`` point ``datasets`` at the jsonl with declared types).

Record fields (see :data:`FEATURES`):

=============  ==================  ================================================================
id             string              pair id (unique in the corpus)
reference      string              the reference sentence (the paper's 정답 문장; STS: sentence1)
candidate      string              the candidate sentence (the paper's 후보 문장; STS: sentence2)
rater_ids      list of string      who rated the pair, parallel to ``ratings``
ratings        list of float64     the raw scores on the corpus scale
z_scores       list of float64     each rating's per-rater standard score (null: not defined / not used)
rating_mean    float64             mean of the raw ratings
human_score    float64             mean of the z-scores (``method="z_mean"``) or the score (``"score"``)
scale_min/max  float64             the rating scale, e.g. 0 and 6 in the paper
source         string              where the pair comes from
=============  ==================  ================================================================
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import numbers
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kometrics.cli.io import iter_jsonl, jsonable, read_jsonl

from .ratings import agreement, human_scores, rater_statistics, rater_z_scores

__all__ = [
    "Pair",
    "Corpus",
    "FEATURES_YAML",
    "features",
    "build_corpus",
    "write_corpus",
    "load_corpus",
    "read_rating_file",
    "pairs_from_klue_sts",
    "pairs_from_korsts",
    "build_named",
    "NAMED_SOURCES",
    "read_scored_pairs",
]

#: Field name -> datasets feature type, in file order (``datasets.Features._from_yaml_list`` format).
FEATURES_YAML: list[dict[str, str]] = [
    {"name": "id", "dtype": "string"},
    {"name": "reference", "dtype": "string"},
    {"name": "candidate", "dtype": "string"},
    {"name": "rater_ids", "list": "string"},
    {"name": "ratings", "list": "float64"},
    {"name": "z_scores", "list": "float64"},
    {"name": "rating_mean", "dtype": "float64"},
    {"name": "human_score", "dtype": "float64"},
    {"name": "scale_min", "dtype": "float64"},
    {"name": "scale_max", "dtype": "float64"},
    {"name": "source", "dtype": "string"},
]

HUMAN_METHODS = ("z_mean", "score")


def features():
    """The record schema as ``datasets.Features``."""
    import datasets

    return datasets.Features._from_yaml_list(FEATURES_YAML)


@dataclass
class Pair:
    """One rated sentence pair before z-scoring."""

    id: str
    reference: str
    candidate: str
    rater_ids: list[str]
    ratings: list[float]
    source: str = ""


@dataclass
class Corpus:
    """Records (dicts with the :data:`FEATURES_YAML` fields) and the corpus-level facts (``meta``)."""

    name: str
    records: list[dict[str, Any]]
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.records)

    def column(self, key: str) -> list[Any]:
        return [r[key] for r in self.records]


def _validate_pairs(pairs: Sequence[Pair], scale: tuple[float, float]) -> None:
    lo, hi = scale
    if not lo < hi:
        raise ValueError(f"scale must be (min, max) with min < max, got {scale}")
    seen: dict[str, int] = {}
    for i, p in enumerate(pairs):
        if p.id in seen:
            raise ValueError(f"pairs[{i}]: id {p.id!r} repeats pairs[{seen[p.id]}]; ids must be unique")
        seen[p.id] = i
        for name in ("reference", "candidate"):
            text = getattr(p, name)
            if not isinstance(text, str):
                raise TypeError(f"pairs[{i}] (id {p.id!r}): {name} must be a string, got {type(text).__name__}")
            if not text.strip():
                raise ValueError(f"pairs[{i}] (id {p.id!r}): {name} is empty; every pair needs two sentences")
        if not p.ratings:
            raise ValueError(f"pairs[{i}] (id {p.id!r}) has no rating")
        for j, v in enumerate(p.ratings):
            if isinstance(v, bool) or not (isinstance(v, numbers.Real) and math.isfinite(v)):
                raise ValueError(f"pairs[{i}] (id {p.id!r}): rating {j} is {v!r}, not a finite number")
            if not lo <= v <= hi:
                raise ValueError(f"pairs[{i}] (id {p.id!r}): rating {v} of rater {p.rater_ids[j]!r} is outside "
                                 f"the scale [{lo}, {hi}]; pass the right scale")


def build_corpus(pairs: Sequence[Pair], *, name: str, scale: tuple[float, float], method: str = "z_mean",
                 ddof: int = 0, degenerate: str = "drop", description: str = "", source: str = "",
                 license: str = "") -> Corpus:
    """Score the pairs' human ratings and return the corpus.

    ``method="z_mean"``: ``human_score`` = mean of the pair's raters' z-scores, z per rater over all the pairs
    that rater scored (``ddof`` and ``degenerate`` as in :func:`~.ratings.rater_z_scores`).
    ``method="score"``: single-score data (one released score per pair, e.g. KorSTS): the score itself.
    Agreement (:func:`~.ratings.agreement`) and per-rater statistics go into ``meta``.
    """
    if method not in HUMAN_METHODS:
        raise ValueError(f"method must be one of {HUMAN_METHODS}, got {method!r}")
    _validate_pairs(pairs, scale)
    ids = [[str(r) for r in p.rater_ids] for p in pairs]
    vals = [[float(v) for v in p.ratings] for p in pairs]
    if method == "score":
        bad = [p.id for p in pairs if len(p.ratings) != 1]
        if bad:
            raise ValueError(f"method='score' needs exactly one score per pair; {len(bad)} pair(s) have another "
                             f"count, first {bad[:5]}; use method='z_mean'")
        z = [[None] for _ in pairs]
        human = np.array([v[0] for v in vals])
        stats = {}
    else:
        zs = rater_z_scores(ids, vals, ddof=ddof, degenerate=degenerate)
        human = human_scores(zs, ids=[p.id for p in pairs])
        z = [[None if math.isnan(v) else v for v in row] for row in zs]
        stats = rater_statistics(ids, vals, ddof=ddof)
    records = []
    for p, rid, v, zrow, h in zip(pairs, ids, vals, z, human):
        records.append({
            "id": str(p.id), "reference": p.reference, "candidate": p.candidate, "rater_ids": rid,
            "ratings": v, "z_scores": zrow, "rating_mean": float(np.mean(v)),
            "human_score": None if math.isnan(h) else float(h),
            "scale_min": float(scale[0]), "scale_max": float(scale[1]), "source": p.source or source,
        })
    categories = None
    if all(float(v).is_integer() for row in vals for v in row) and float(scale[0]).is_integer():
        categories = [float(c) for c in range(int(scale[0]), int(scale[1]) + 1)]
    meta = {
        "name": name, "description": description, "source": source, "license": license,
        "n_pairs": len(records), "scale": [float(scale[0]), float(scale[1])],
        "human_score": {"method": method, "ddof": ddof if method == "z_mean" else None,
                        "degenerate": degenerate if method == "z_mean" else None},
        "agreement": agreement(ids, vals, categories=categories),
        "raters": {r: {"n": s.n, "mean": s.mean, "sd": s.sd if math.isfinite(s.sd) else None}
                   for r, s in sorted(stats.items())},
    }
    return Corpus(name=name, records=records, meta=meta)


_CARD = """---
{yaml}---

# {title}

{description}

Built by `kometrics paraphrase build` (kometrics.datasets_scripts.paraphrase) for the paraphrase benchmark
(`kometrics bench paraphrase`). Load it with:

```python
import datasets
pairs = datasets.load_dataset("{folder}", split="test")
```

- Source: {source}
- License: {license}
- Pairs: {n}; rating scale {lo:g}-{hi:g}
- Human score: {human}
- Rater agreement: {agreement}

## Fields

| field | type | meaning |
|---|---|---|
| id | string | pair id |
| reference | string | reference sentence |
| candidate | string | candidate sentence |
| rater_ids | list of string | raters of the pair, parallel to `ratings` |
| ratings | list of float64 | raw scores on the scale |
| z_scores | list of float64 | per-rater standard score of each rating (null: undefined or not used) |
| rating_mean | float64 | mean of the raw ratings |
| human_score | float64 | the score metrics are correlated with |
| scale_min, scale_max | float64 | the rating scale |
| source | string | origin of the pair |

`corpus.json` beside this card has the per-rater statistics and the full agreement report.
"""


def _human_text(meta: dict[str, Any]) -> str:
    h = meta["human_score"]
    if h["method"] == "score":
        return "the pair's single released score, unchanged"
    return (f"mean of the pair's raters' z-scores; z = (x - mean_r) / sd_r per rater r over all pairs r scored, "
            f"sd with ddof={h['ddof']}; raters with one rating or zero variance: degenerate='{h['degenerate']}'")


def _agreement_text(a: dict[str, Any]) -> str:
    if "note" in a:
        return a["note"]
    parts = [f"{a['raters']} raters"]
    if "cohen_kappa" in a:
        parts.append(f"Cohen's kappa {a['cohen_kappa']:.4f} (quadratic-weighted {a['cohen_kappa_quadratic']:.4f})")
    parts.append(f"Krippendorff's alpha (interval) {a['krippendorff_alpha_interval']:.4f}")
    parts.append(f"mean pairwise Pearson {a['mean_pairwise_pearson']:.4f} over "
                 f"{a['mean_pairwise_pearson_rater_pairs']} rater pairs")
    return "; ".join(parts)


def write_corpus(corpus: Corpus, out_dir: str | os.PathLike) -> Path:
    """Write ``pairs-<hash>.jsonl``, ``corpus.json`` and the card ``README.md`` into ``out_dir``; return it.

    The jsonl name carries the first 12 hex digits of the SHA-256 of its content: ``datasets`` 5.x keys its
    cache of a local folder with YAML ``configs`` on the config text alone, so a rebuilt folder with the
    same file name would silently load the old cached rows. Older ``pairs*.jsonl`` files in ``out_dir`` are
    removed.
    """
    import yaml

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(jsonable(rec, finite=True), ensure_ascii=False, allow_nan=False) + "\n"
                   for rec in corpus.records)
    data_file = f"pairs-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}.jsonl"
    for old in out.glob("pairs*.jsonl"):
        if old.name != data_file:
            old.unlink()
    (out / data_file).write_text(text, encoding="utf-8")
    meta = {**corpus.meta, "data_file": data_file}
    (out / "corpus.json").write_text(
        json.dumps(jsonable(meta, finite=True), ensure_ascii=False, indent=2, allow_nan=False) + "\n",
        encoding="utf-8")
    header = {
        "pretty_name": f"kometrics paraphrase pairs: {corpus.name}",
        "language": ["ko"],
        "task_categories": ["sentence-similarity"],
        "configs": [{"config_name": "default", "data_files": [{"split": "test", "path": data_file}]}],
        "dataset_info": {"config_name": "default", "features": FEATURES_YAML},
    }
    m = corpus.meta
    card = _CARD.format(
        yaml=yaml.safe_dump(header, allow_unicode=True, sort_keys=False), title=header["pretty_name"],
        description=m.get("description") or "Graded paraphrase pairs.", folder=out.as_posix(),
        source=m.get("source") or "unspecified", license=m.get("license") or "unspecified", n=len(corpus),
        lo=m["scale"][0], hi=m["scale"][1], human=_human_text(m), agreement=_agreement_text(m["agreement"]))
    (out / "README.md").write_text(card, encoding="utf-8")
    return out


def load_corpus(path: str | os.PathLike) -> Corpus:
    """Read a folder written by :func:`write_corpus` (the jsonl and ``corpus.json``; no ``datasets`` needed)."""
    folder = Path(path)
    meta_path = folder / "corpus.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
    files = [folder / meta["data_file"]] if "data_file" in meta else sorted(folder.glob("pairs*.jsonl"))
    if len(files) != 1 or not files[0].is_file():
        raise FileNotFoundError(f"{folder} is not a paraphrase corpus folder (expected one pairs-*.jsonl named "
                                "by corpus.json); build one with `kometrics paraphrase build`")
    return Corpus(name=meta.get("name", folder.name), records=read_jsonl(files[0]), meta=meta)


def read_rating_file(path: str | os.PathLike, delimiter: str | None = None) -> list[Pair]:
    """Read a user's ratings file in the paper's layout (one pair per row, one column per rater).

    Format: a header row, then one row per pair. Columns ``id``, ``reference`` and ``candidate`` are required
    (any order, header case-insensitive); every other column is a rater whose header is the rater id, and
    holds that rater's score of the pair (an empty cell: the rater did not rate it). ``.tsv`` files are
    tab-separated and read without quote processing (a quote inside a sentence is just a character);
    ``.csv`` files are comma-separated with standard CSV quoting. ``delimiter`` overrides the extension.

    Example (the paper's Table 1, raters 0-6)::

        id<TAB>reference<TAB>candidate<TAB>rater1<TAB>rater2
        303<TAB>SK텔레콤은 ...<TAB>추가로 SK텔레콤 ...<TAB>6<TAB>5
    """
    p = Path(path)
    if delimiter is None:
        delimiter = "," if p.suffix.lower() == ".csv" else "\t"
    quoting = csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE
    with open(p, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f, delimiter=delimiter, quoting=quoting))
    if not rows:
        raise ValueError(f"{p} is empty; expected a header row id, reference, candidate, <rater ids...>")
    header = [h.strip() for h in rows[0]]
    lower = [h.lower() for h in header]
    missing = [c for c in ("id", "reference", "candidate") if c not in lower]
    if missing:
        raise ValueError(f"{p}: header {header} lacks column(s) {missing}; the header must name id, reference, "
                         "candidate and then one column per rater")
    col = {c: lower.index(c) for c in ("id", "reference", "candidate")}
    raters = [(k, h) for k, h in enumerate(header) if k not in col.values()]
    if not raters:
        raise ValueError(f"{p}: no rater column; add one column per rater after id, reference, candidate")
    dup = sorted({h for _, h in raters if [x for _, x in raters].count(h) > 1})
    if dup or any(not h for _, h in raters):
        raise ValueError(f"{p}: rater columns need distinct non-empty headers (the rater ids), got {header}")
    pairs = []
    for line_no, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise ValueError(f"{p}:{line_no}: {len(row)} cells but the header has {len(header)}"
                             f"{' (a tab inside a sentence?)' if delimiter == chr(9) else ''}")
        ids, vals = [], []
        for k, rater in raters:
            cell = row[k].strip()
            if not cell:
                continue
            try:
                vals.append(float(cell))
            except ValueError:
                raise ValueError(f"{p}:{line_no}: rater {rater!r} cell {cell!r} is not a number") from None
            ids.append(rater)
        if not ids:
            raise ValueError(f"{p}:{line_no}: pair {row[col['id']]!r} has no rating")
        pairs.append(Pair(id=row[col["id"]].strip(), reference=row[col["reference"]],
                          candidate=row[col["candidate"]], rater_ids=ids, ratings=vals, source=p.name))
    if not pairs:
        raise ValueError(f"{p}: no pair rows after the header")
    return pairs


#: Columns of a scored-pairs file (one released score per pair, as KorSTS).
SCORED_COLUMNS = ("sentence1", "sentence2", "score")


def _is_scored_pairs(path: Path) -> bool:
    """A ``.jsonl`` file, or a ``.tsv``/``.csv`` whose header names sentence1, sentence2 and score."""
    if path.suffix.lower() == ".jsonl":
        return True
    with open(path, encoding="utf-8-sig") as f:
        header = f.readline().lower()
    cells = {c.strip() for c in header.replace(",", "\t").split("\t")}
    return set(SCORED_COLUMNS) <= cells


def read_scored_pairs(path: str | os.PathLike) -> list[Pair]:
    """Pairs with one score each from a ``.jsonl`` file (objects with ``sentence1``, ``sentence2``, ``score``;
    optional ``id``) or a ``.tsv``/``.csv`` with those columns. The reference is ``sentence1``, the candidate
    ``sentence2`` (as for KLUE-STS and KorSTS); the score's rater id is ``gold``."""
    p = Path(path)
    if p.suffix.lower() == ".jsonl":
        rows = list(iter_jsonl(p, objects=True))
    else:
        delimiter = "," if p.suffix.lower() == ".csv" else "\t"
        with open(p, encoding="utf-8-sig", newline="") as f:
            reader = csv.DictReader(f, delimiter=delimiter, quoting=csv.QUOTE_MINIMAL if delimiter == "," else
                                    csv.QUOTE_NONE)
            rows = [(n, {k.strip().lower(): v for k, v in rec.items() if k}) for n, rec in enumerate(reader, 2)]
    pairs = []
    for n, rec in rows:
        missing = [c for c in SCORED_COLUMNS if rec.get(c) in (None, "")]
        if missing:
            raise ValueError(f"{p}:{n}: missing key(s) {missing}; a scored pair needs {', '.join(SCORED_COLUMNS)}")
        try:
            score = float(rec["score"])
        except (TypeError, ValueError):
            raise ValueError(f"{p}:{n}: score {rec['score']!r} is not a number") from None
        pairs.append(Pair(id=str(rec.get("id") or f"{p.stem}-{n}"), reference=rec["sentence1"],
                          candidate=rec["sentence2"], rater_ids=["gold"], ratings=[score], source=p.name))
    if not pairs:
        raise ValueError(f"{p}: no scored pair in the file")
    return pairs


def pairs_from_klue_sts(data_dir: str | os.PathLike | None = None) -> list[Pair]:
    """The 519 KLUE-STS v1.1 dev pairs with their 5-7 per-annotator votes (0-5) and annotator ids."""
    from kometrics.datasets_scripts.readers import read_klue_sts

    out = []
    for row in read_klue_sts(data_dir):
        ann = row["annotations"]
        out.append(Pair(id=row["guid"], reference=row["sentence1"], candidate=row["sentence2"],
                        rater_ids=[str(a) for a in ann["annotators"]],
                        ratings=[float(v) for v in ann["annotations"]], source=row["source"]))
    return out


def pairs_from_korsts(split: str = "dev", data_dir: str | os.PathLike | None = None) -> list[Pair]:
    """KorSTS ``dev`` (1,500) or ``train`` (5,749) pairs with their one released score (0-5, rater id
    ``gold``). The id is ``<split>-<row number>`` (the upstream ``id`` column repeats across genres)."""
    from kometrics.datasets_scripts.readers import read_korsts

    return [Pair(id=f"{split}-{i:05d}", reference=row["sentence1"], candidate=row["sentence2"],
                 rater_ids=["gold"], ratings=[row["score"]], source=f"{row['genre']}/{row['filename']}")
            for i, row in enumerate(read_korsts(split, data_dir))]


#: Named corpora that can be built from ../shared/data.
NAMED_SOURCES = {
    "klue-sts": dict(
        description="KLUE-STS v1.1 dev: 519 Korean sentence pairs, each rated 0-5 by 5-7 of 17 annotators "
                    "(per-annotator votes with annotator ids).",
        source="KLUE-benchmark/KLUE @ 3efd9870, klue_benchmark/klue-sts-v1.1/klue-sts-v1.1_dev.json",
        license="CC BY-SA 4.0", scale=(0.0, 5.0), method="z_mean"),
    "korsts-dev": dict(
        description="KorSTS dev: 1,500 Korean sentence pairs (machine-translated STS-B, human-checked) with one "
                    "released 0-5 similarity score each.",
        source="kakaobrain/KorNLUDatasets @ 0df0fe7d, KorSTS/sts-dev.tsv", license="CC BY-SA 4.0",
        scale=(0.0, 5.0), method="score"),
    "korsts-train": dict(
        description="KorSTS train: 5,749 Korean sentence pairs with one released 0-5 similarity score each.",
        source="kakaobrain/KorNLUDatasets @ 0df0fe7d, KorSTS/sts-train.tsv", license="CC BY-SA 4.0",
        scale=(0.0, 5.0), method="score"),
}


def build_named(name: str, data_dir: str | os.PathLike | None = None, *, ddof: int = 0,
                degenerate: str = "drop", scale: tuple[float, float] | None = None) -> Corpus:
    """Build a corpus: ``klue-sts``, ``korsts`` (= ``korsts-dev``), ``korsts-train``, or the path of a user's
    ratings file (:func:`read_rating_file`; scale default 0-6 as in the paper), of a scored-pairs file
    (:func:`read_scored_pairs`: ``sentence1``, ``sentence2``, ``score``) or of a built corpus folder."""
    key = "korsts-dev" if name == "korsts" else name
    if key in NAMED_SOURCES:
        spec = NAMED_SOURCES[key]
        if key == "klue-sts":
            pairs = pairs_from_klue_sts(data_dir)
        else:
            pairs = pairs_from_korsts(key.split("-", 1)[1], data_dir)
        return build_corpus(pairs, name=key, scale=scale or spec["scale"], method=spec["method"], ddof=ddof,
                            degenerate=degenerate, description=spec["description"], source=spec["source"],
                            license=spec["license"])
    path = Path(name)
    if path.is_dir():
        return load_corpus(path)
    if path.is_file() and _is_scored_pairs(path):
        pairs = read_scored_pairs(path)
        scores = [p.ratings[0] for p in pairs]
        if scale is None:  # single scores need no scale but their range (no z-scores are taken)
            scale = (min(scores), max(scores)) if min(scores) < max(scores) else (min(scores), min(scores) + 1.0)
        return build_corpus(pairs, name=path.stem, scale=scale, method="score", description=f"Scored sentence "
                            f"pairs read from {path.name}.", source=path.name, license="as the source file")
    if path.is_file():
        pairs = read_rating_file(path)
        if scale is None:
            scale = (0.0, 6.0)
            warnings.warn(f"{path.name}: no scale given; assuming the paper's 0-6 Likert scale (pass scale=)",
                          stacklevel=2)
        return build_corpus(pairs, name=path.stem, scale=scale, ddof=ddof, degenerate=degenerate,
                            description=f"Graded paraphrase pairs read from {path.name}.", source=path.name,
                            license="as the source file")
    raise ValueError(f"unknown corpus {name!r}: use klue-sts, korsts, korsts-train, a ratings file (.tsv/.csv), "
                     "a scored-pairs file (.jsonl/.tsv/.csv with sentence1, sentence2, score) or a corpus folder")
