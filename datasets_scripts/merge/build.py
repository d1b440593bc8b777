"""Build a Korean MERGE dataset folder: seeds -> MERE variants -> jsonl configs + dataset card; review CSV.

Library::

    from kometrics.datasets_scripts.merge import read_seeds, build_dataset, MLMFillMask, CausalLMScorer
    seeds = read_seeds("klue", limit=200)                       # or "kornli", or a jsonl/csv/tsv file
    summary = build_dataset(seeds, MLMFillMask("klue/bert-base"), "merge_klue", k=5, sample_seed=0,
                            lm_name="klue/bert-base")
    # a causal LM as the source: CausalLMScorer("path/to/gemma-3-270m")

CLI: ``kometrics merge generate --seeds klue --mlm klue/bert-base --out merge_klue`` (or ``--lm PATH`` for a
causal LM), then
``kometrics merge review --dataset merge_klue --out review.csv`` and, once people filled the ``validated``
column, ``kometrics merge validate --dataset merge_klue --review review.csv``.
"""

from __future__ import annotations

import csv
import json
import os
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from kometrics.cli.io import read_jsonl

from .mere import MereOptions, Seed, generate_variants

__all__ = [
    "LABELS",
    "read_seeds",
    "build_rows",
    "sample_variants",
    "build_dataset",
    "write_dataset",
    "read_jsonl",
    "export_review_csv",
    "read_review_csv",
    "apply_review",
]

#: NLI label ids (the KLUE-NLI order): entailment 0, neutral 1, contradiction 2.
LABELS = {"entailment": 0, "neutral": 1, "contradiction": 2}


def _label(value: Any, where: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{where}: label {value!r} is not a class")
    if isinstance(value, int):
        if value not in LABELS.values():
            raise ValueError(f"{where}: label {value} is not one of {sorted(LABELS.values())}")
        return value
    text = str(value).strip().lower()
    if text.isdigit() and int(text) in LABELS.values():
        return int(text)
    if text in LABELS:
        return LABELS[text]
    raise ValueError(f"{where}: unknown label {value!r}; use {', '.join(LABELS)} or 0/1/2")


def _read_table(path: Path) -> list[dict]:
    if path.suffix == ".jsonl":
        return read_jsonl(path)
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, list) else data["data"]
    delimiter = "\t" if path.suffix == ".tsv" else ","
    with open(path, encoding="utf-8", newline="") as f:
        quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
        return list(csv.DictReader(f, delimiter=delimiter, quoting=quoting))


def read_seeds(source: str | os.PathLike, data_dir: str | os.PathLike | None = None, limit: int | None = None,
               skip_unlabelled: bool = True) -> list[Seed]:
    """Seed problems from ``"klue"`` (KLUE-NLI v1.1 dev), ``"kornli"`` (KorNLI xnli.dev.ko.tsv) or a
    jsonl/json/csv/tsv file with ``premise``, ``hypothesis``, ``label`` (also ``sentence1``/``sentence2``/
    ``gold_label``; optional ``id``/``guid``). Labels: names or 0/1/2 (:data:`LABELS`). Rows with an
    unknown label raise, except the unlabelled markers ``-``/``-1`` which are skipped when
    ``skip_unlabelled`` (with a count in the warning)."""
    import warnings

    from kometrics.datasets_scripts.readers import read_klue_nli, read_kornli

    if str(source) == "klue":
        records, prefix = read_klue_nli(data_dir), "klue-nli-dev"
    elif str(source) == "kornli":
        records, prefix = read_kornli(data_dir), "xnli-dev-ko"
    else:
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"--seeds {source!r}: not 'klue', 'kornli' or an existing file")
        records, prefix = _read_table(path), path.stem
    seeds, skipped = [], 0
    for i, rec in enumerate(records):
        premise = rec.get("premise", rec.get("sentence1"))
        hypothesis = rec.get("hypothesis", rec.get("sentence2"))
        raw = rec.get("label", rec.get("gold_label"))
        if premise is None or hypothesis is None or raw is None:
            raise ValueError(f"{source} row {i}: needs premise, hypothesis and label (has {sorted(rec)})")
        if skip_unlabelled and str(raw).strip() in ("-", "-1", ""):
            skipped += 1
            continue
        sid = str(rec.get("guid") or rec.get("id") or f"{prefix}-{i}")
        seeds.append(Seed(sid, str(premise), str(hypothesis), _label(raw, f"{source} row {i}")))
        if limit is not None and len(seeds) >= limit:
            break
    if skipped:
        warnings.warn(f"{skipped} unlabelled seed row(s) skipped in {source}", stacklevel=2)
    ids = Counter(s.seed_id for s in seeds)
    dup = [k for k, v in ids.items() if v > 1]
    if dup:
        raise ValueError(f"{source}: seed id {dup[0]!r} occurs {ids[dup[0]]} times; seed ids must be unique")
    return seeds


def _seed_row(seed: Seed) -> dict[str, Any]:
    return {"seed_id": seed.seed_id, "variant_id": seed.seed_id, "is_seed": True, "premise": seed.premise,
            "hypothesis": seed.hypothesis, "label": seed.label, "word_class": "", "tag": "", "original": "",
            "replacement": "", "p_original_premise": None, "p_replacement_premise": None,
            "p_original_hypothesis": None, "p_replacement_hypothesis": None, "logp_seed_premise": None,
            "logp_variant_premise": None, "logp_seed_hypothesis": None, "logp_variant_hypothesis": None,
            "source_lm": "", "source_kind": ""}


def build_rows(seeds: Iterable[Seed], scorer, kiwi=None, options: MereOptions | None = None,
               lm_name: str = "", progress=None) -> tuple[list[dict[str, Any]], Counter]:
    """Seed rows and variant rows (each seed followed by its variants) and the counts of every outcome."""
    if kiwi is None:
        from kiwipiepy import Kiwi

        kiwi = Kiwi()
    counts: Counter = Counter()
    rows: list[dict[str, Any]] = []
    seeds = list(seeds)
    for seed in (progress(seeds) if progress else seeds):
        counts["seeds"] += 1
        variants = generate_variants(seed, scorer, kiwi, options, counts, lm_name)
        if not variants:
            counts["seeds_without_variants"] += 1
        rows.append(_seed_row(seed))
        rows.extend(variants)
    return rows, counts


def sample_variants(rows: Sequence[dict[str, Any]], k: int, sample_seed: int = 0) -> list[dict[str, Any]]:
    """The ``var`` config: every seed row plus at most ``k`` of its variants, drawn without replacement
    with ``random.Random(f"{sample_seed}:{seed_id}")`` from the seed's variants sorted by ``variant_id``
    (independent of the other seeds and of the row order), kept in their original order."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    by_seed: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        if not row["is_seed"]:
            by_seed.setdefault(row["seed_id"], []).append(i)
    keep = set()
    for sid, idx in by_seed.items():
        if len(idx) > k:  # draw from the variants sorted by id, so the row order does not matter
            idx = random.Random(f"{sample_seed}:{sid}").sample(sorted(idx, key=lambda i: rows[i]["variant_id"]), k)
        keep.update(idx)
    return [row for i, row in enumerate(rows) if row["is_seed"] or i in keep]


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_dataset(out_dir: str | os.PathLike, rows: Sequence[dict[str, Any]], counts: Counter,
                  meta: dict[str, Any], k: int, sample_seed: int) -> dict[str, Any]:
    """Write ``data/all.jsonl``, ``data/var.jsonl``, ``stats.json`` and the dataset card ``README.md``."""
    out = Path(out_dir)
    var = sample_variants(rows, k, sample_seed)
    _write_jsonl(out / "data" / "all.jsonl", rows)
    _write_jsonl(out / "data" / "var.jsonl", var)
    stats = {
        **meta, "k": k, "sample_seed": sample_seed,
        "rows_all": len(rows), "rows_var": len(var),
        "variants_all": sum(not r["is_seed"] for r in rows), "variants_var": sum(not r["is_seed"] for r in var),
        "variants_by_word_class": dict(sorted(Counter(r["word_class"] for r in rows if not r["is_seed"]).items())),
        "counts": dict(sorted(counts.items())),
    }
    (out / "stats.json").write_text(json.dumps(stats, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (out / "README.md").write_text(render_card(stats, validated=(out / "data" / "validated.jsonl").is_file()),
                                   encoding="utf-8")
    return stats


def build_dataset(seeds: Sequence[Seed], scorer, out_dir: str | os.PathLike, *, k: int = 5,
                  sample_seed: int = 0, options: MereOptions | None = None, lm_name: str = "",
                  seed_source: str = "", kiwi=None, progress=None) -> dict[str, Any]:
    """Generate the variants of ``seeds`` and write the dataset folder; returns its statistics."""
    options = options or MereOptions()
    rows, counts = build_rows(seeds, scorer, kiwi, options, lm_name, progress)
    meta = {"source_lm": lm_name, "source_kind": getattr(scorer, "kind", "masked"), "seeds_source": seed_source, "top_k": options.top_k,
            "probability_floor": options.probability_floor,
            "max_variants_per_target": options.max_variants_per_target,
            "word_classes": list(options.word_classes)}
    return write_dataset(out_dir, rows, counts, meta, k, sample_seed)


REVIEW_COLUMNS = ("variant_id", "seed_id", "word_class", "original", "replacement", "label", "premise",
                  "hypothesis", "seed_premise", "seed_hypothesis", "source_kind", "source_lm", "validated", "note")


def export_review_csv(dataset_dir: str | os.PathLike, out_csv: str | os.PathLike, config: str = "var") -> int:
    """A CSV (UTF-8 with BOM, for spreadsheet apps) with one line per variant of ``config`` and an empty
    ``validated`` column to fill with yes/no (fluent and the label still holds). Returns the line count."""
    rows = read_jsonl(Path(dataset_dir) / "data" / f"{config}.jsonl")
    seeds = {r["seed_id"]: r for r in rows if r["is_seed"]}
    n = 0
    with open(out_csv, "w", encoding="utf-8-sig", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=REVIEW_COLUMNS)
        writer.writeheader()
        for r in rows:
            if r["is_seed"]:
                continue
            seed = seeds.get(r["seed_id"], {})
            writer.writerow({**{c: r.get(c, "") for c in REVIEW_COLUMNS}, "seed_premise": seed.get("premise", ""),
                             "seed_hypothesis": seed.get("hypothesis", ""),
                             "validated": "" if r.get("validated") is None else ("yes" if r["validated"] else "no"),
                             "note": r.get("review_note", "")})
            n += 1
    return n


_YES = {"yes", "y", "true", "1", "o", "예", "네"}
_NO = {"no", "n", "false", "0", "x", "아니오", "아니요"}


def read_review_csv(path: str | os.PathLike) -> dict[str, tuple[bool | None, str]]:
    """``{variant_id: (validated, note)}`` from a filled review CSV; an empty cell is ``None`` (not
    reviewed). Raises on an unknown answer, naming the line."""
    out: dict[str, tuple[bool | None, str]] = {}
    with open(path, encoding="utf-8-sig", newline="") as f:
        reader = csv.DictReader(f)
        missing = {"variant_id", "validated"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}: the review CSV needs the columns {sorted(missing)}")
        for line, row in enumerate(reader, start=2):
            cell = (row["validated"] or "").strip().lower()
            if cell in _YES:
                value: bool | None = True
            elif cell in _NO:
                value = False
            elif cell == "":
                value = None
            else:
                raise ValueError(f"{path}:{line}: validated={row['validated']!r}; write yes, no or leave empty")
            out[row["variant_id"]] = (value, (row.get("note") or "").strip())
    return out


def apply_review(dataset_dir: str | os.PathLike, review_csv: str | os.PathLike) -> dict[str, int]:
    """Write the ``validated`` flag (True/False/None) into ``all.jsonl`` and ``var.jsonl`` and the
    ``validated`` config (seed rows + variants marked yes, from ``var``); refresh the card. Returns counts."""
    folder = Path(dataset_dir)
    review = read_review_csv(review_csv)
    known = set()
    for config in ("all", "var"):
        path = folder / "data" / f"{config}.jsonl"
        rows = read_jsonl(path)
        for r in rows:
            if r["is_seed"]:
                continue
            known.add(r["variant_id"])
            value, note = review.get(r["variant_id"], (None, ""))
            r["validated"] = value
            if note:
                r["review_note"] = note
        _write_jsonl(path, rows)
        if config == "var":
            _write_jsonl(folder / "data" / "validated.jsonl",
                         [r for r in rows if r["is_seed"] or r["validated"] is True])
    unknown = sorted(set(review) - known)
    if unknown:
        raise ValueError(f"{review_csv}: variant_id {unknown[0]!r} is not in {folder} ({len(unknown)} unknown)")
    values = [v for v, _ in review.values()]
    counts = {"reviewed": sum(v is not None for v in values), "validated": sum(v is True for v in values),
              "rejected": sum(v is False for v in values), "not_reviewed": sum(v is None for v in values)}
    stats_path = folder / "stats.json"
    stats = json.loads(stats_path.read_text(encoding="utf-8")) if stats_path.is_file() else {}
    stats["review"] = counts
    stats_path.write_text(json.dumps(stats, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (folder / "README.md").write_text(render_card(stats, validated=True), encoding="utf-8")
    return counts


def render_card(stats: dict[str, Any] | None = None, validated: bool = False) -> str:
    """The dataset card (YAML ``configs:`` + description); ``stats`` adds the build section."""
    template = (Path(__file__).with_name("card_template.md")).read_text(encoding="utf-8")
    configs = ["all", "var"] + (["validated"] if validated else [])
    yaml_configs = "\n".join(
        f"- config_name: {c}\n" + ("  default: true\n" if c == "var" else "")
        + f"  data_files:\n  - split: test\n    path: data/{c}.jsonl" for c in configs)
    card = template.replace("{{configs}}", yaml_configs)
    if stats:
        card += "\n## This build\n\n```json\n" + json.dumps(stats, ensure_ascii=False, indent=2) + "\n```\n"
    return card
