"""The real-model tier (marker ``real_model``): Gemma-3-270M (the session fixture ``gemma`` of tests/conftest.py,
converted once by ``kometrics.models.gemma.prepare`` and reused by every later run). Few sentences per test: the
whole tier is sized for 2 CPU cores."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def klue_pairs(data_dir) -> tuple[list[str], list[str]]:
    """Six KLUE-STS dev pairs of varied length and similarity."""
    from kometrics.datasets_scripts.readers import read_klue_sts

    recs = read_klue_sts(data_dir)
    picked = [recs[i] for i in (0, 7, 50, 120, 300, 480)]
    return [r["sentence1"] for r in picked], [r["sentence2"] for r in picked]
