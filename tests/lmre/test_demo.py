"""The demo section runs on real KLUE-DP sentences and reports per-strategy acceptance."""

from __future__ import annotations

from kometrics.demo import DemoContext
from kometrics.demo.lmre import run


def test_demo_section(data_dir, tmp_path):
    # the stand-in part at a useful size; the real-model part is tests/real_model/test_demo.py's
    section = run(DemoContext(data_dir=data_dir, limit=40, offline=True, cache_dir=tmp_path, real_models=False))
    text = "\n".join(section.lines)
    assert "STAND-IN" in text
    results = section.results["strategies"]
    assert set(results) == {"comma", "rule", "length", "dependency"}
    for r in results.values():
        assert 0.0 <= r["em"] <= r["f1"] <= 1.0  # EM acceptance can never exceed F1 acceptance at theta 0.5
    assert section.results["corpus"]["utterances"] == 40
    assert "local_llm" not in section.results and "REAL LM" not in text
