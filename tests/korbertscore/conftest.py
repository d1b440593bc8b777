"""Fixtures for the korbertscore tests: KorSTS pairs from ../shared/data and a tiny baseline file."""

from __future__ import annotations

import warnings

import pytest


@pytest.fixture(scope="session")
def korsts_pairs(data_dir) -> tuple[list[str], list[str], list[float]]:
    """200 KorSTS dev pairs (sentence1, sentence2, human score 0-5), read where they lie."""
    from kometrics.datasets_scripts.readers import read_korsts

    rows = read_korsts("dev", data_dir)[:200]
    return [r["sentence1"] for r in rows], [r["sentence2"] for r in rows], [r["score"] for r in rows]


@pytest.fixture(scope="session")
def baseline_file(tmp_path_factory, tiny_bert, korean_texts) -> str:
    """A bert_score-format baseline (LAYER,P,R,F) for the tiny model, built by our builder."""
    from kometrics.korbertscore.baseline import build_baseline

    path = tmp_path_factory.mktemp("baseline") / "tiny.tsv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        build_baseline(korean_texts, tiny_bert, path, n_pairs=300, seed=1)
    return str(path)
