"""Readers of the raw Korean evaluation files (KLUE, KorSTS, KorNLI) as distributed upstream.

The files are read where they lie (by default ``../shared/data`` next to a checkout, or the folder named by
the ``KOMETRICS_DATA`` environment variable); nothing here copies them.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "default_data_dir",
    "read_klue_sts",
    "read_klue_nli",
    "read_klue_dp",
    "read_klue_ner_sentences",
    "read_korsts",
    "read_kornli",
    "DPWord",
    "DPSentence",
]


def default_data_dir() -> Path:
    """The folder holding ``klue/``, ``korsts/`` and ``kornli/``.

    Order: the ``KOMETRICS_DATA`` environment variable; else the first ``shared/data`` found beside the
    current directory or one of its parents, or beside the package source. Raises ``FileNotFoundError``
    naming what was tried.
    """
    env = os.environ.get("KOMETRICS_DATA")
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise FileNotFoundError(f"KOMETRICS_DATA={env!r} is not a folder")
        return path
    tried = []
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for folder in (start, *start.parents):
            candidate = folder / "shared" / "data"
            tried.append(str(candidate))
            if (candidate / "klue").is_dir():
                return candidate
    raise FileNotFoundError(
        "no Korean data folder found: set KOMETRICS_DATA or pass --data-dir (tried ../shared/data "
        f"beside the current folder and its parents; e.g. {tried[:3]})"
    )


def _resolve(data_dir: str | os.PathLike | None, *parts: str) -> Path:
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    path = root.joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist (data folder: {root})")
    return path


def read_klue_sts(data_dir: str | os.PathLike | None = None) -> list[dict]:
    """The 519 KLUE-STS v1.1 dev pairs as the official JSON records (guid, source, sentence1, sentence2,
    labels{label, real-label, binary-label}, annotations{agreement, annotators, annotations})."""
    with open(_resolve(data_dir, "klue", "klue-sts-v1.1_dev.json"), encoding="utf-8") as f:
        return json.load(f)


def read_klue_nli(data_dir: str | os.PathLike | None = None) -> list[dict]:
    """The 3,000 KLUE-NLI v1.1 dev problems (guid, source, premise, hypothesis, gold_label, ...)."""
    with open(_resolve(data_dir, "klue", "klue-nli-v1.1_dev.json"), encoding="utf-8") as f:
        return json.load(f)


def _read_tsv(path: Path) -> list[dict]:
    # QUOTE_NONE: quote characters inside sentences would otherwise swallow rows.
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def read_korsts(split: str = "dev", data_dir: str | os.PathLike | None = None) -> list[dict]:
    """KorSTS ``train`` (5,749) or ``dev`` (1,500) rows: genre, filename, year, id, score (float 0-5),
    sentence1, sentence2."""
    if split not in ("train", "dev"):
        raise ValueError(f"split must be 'train' or 'dev', got {split!r}")
    rows = _read_tsv(_resolve(data_dir, "korsts", f"sts-{split}.tsv"))
    for row in rows:
        row["score"] = float(row["score"])
    return rows


def read_kornli(data_dir: str | os.PathLike | None = None) -> list[dict]:
    """KorNLI XNLI dev (2,490 rows): sentence1 (premise), sentence2 (hypothesis), gold_label."""
    return _read_tsv(_resolve(data_dir, "kornli", "xnli.dev.ko.tsv"))


@dataclass(frozen=True)
class DPWord:
    """One eojeol of a KLUE-DP sentence."""

    index: int  # 1-based
    form: str  # the eojeol as written
    lemma: str  # morphemes separated by spaces
    pos: str  # morpheme POS tags joined by '+', e.g. 'NNP+JKS'
    head: int  # 0 for the root
    deprel: str


@dataclass(frozen=True)
class DPSentence:
    guid: str
    text: str
    words: tuple[DPWord, ...]


def read_klue_dp(data_dir: str | os.PathLike | None = None) -> list[DPSentence]:
    """The 2,000 KLUE-DP v1.1 dev sentences with their eojeol rows (form, lemma, POS, head, deprel)."""
    path = _resolve(data_dir, "klue", "klue-dp-v1.1_dev.tsv")
    sentences: list[DPSentence] = []
    guid, text, words = None, None, []
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("## klue-dp"):
                if guid is not None:
                    sentences.append(DPSentence(guid, text, tuple(words)))
                guid, text = line[3:].split("\t", 1)
                words = []
            elif line.startswith("##") or not line.strip():
                continue
            else:
                idx, form, lemma, pos, head, rel = line.split("\t")
                words.append(DPWord(int(idx), form, lemma, pos, int(head), rel))
    if guid is not None:
        sentences.append(DPSentence(guid, text, tuple(words)))
    return sentences


_NER_MARK = re.compile(r"<([^<>:]+):([A-Z]{2})>")


def read_klue_ner_sentences(data_dir: str | os.PathLike | None = None) -> list[str]:
    """The 5,000 KLUE-NER v1.1 dev sentences as plain text (entity marks ``<text:TAG>`` removed)."""
    path = _resolve(data_dir, "klue", "klue-ner-v1.1_dev.tsv")
    out = []
    with open(path, encoding="utf-8") as f:
        for raw in f:
            if raw.startswith("## klue-ner"):
                marked = raw.rstrip("\n").split("\t", 1)[1]
                out.append(_NER_MARK.sub(r"\1", marked))
    return out


def iter_korean_text(data_dir: str | os.PathLike | None = None) -> Iterator[str]:
    """Every Korean sentence in the data folder (for training tiny tokenizers, sampling baselines)."""
    for rec in read_klue_sts(data_dir):
        yield rec["sentence1"]
        yield rec["sentence2"]
    for rec in read_klue_nli(data_dir):
        yield rec["premise"]
        yield rec["hypothesis"]
    for sent in read_klue_dp(data_dir):
        yield sent.text
    yield from read_klue_ner_sentences(data_dir)
    for row in read_korsts("train", data_dir):
        yield row["sentence1"]
        yield row["sentence2"]
