"""The demo's real-model sections run on Gemma-3-270M offline and say so; tiny models only for a masked LM."""

from __future__ import annotations

import io

import pytest

pytestmark = pytest.mark.real_model


def test_demo_real_model_sections(gemma, data_dir, tmp_path, monkeypatch):
    from kometrics.demo import run_demo

    monkeypatch.setenv("KOMETRICS_CACHE", str(tmp_path / "cache"))
    out = io.StringIO()
    code = run_demo(data_dir=str(data_dir), limit=6, offline=True, only=["perplexity", "korbertscore", "paraphrase"],
                    out=out)
    report = out.getvalue()
    assert code == 0, report
    assert "FAILED" not in report, report
    headers = [line for line in report.splitlines() if line.startswith("== ")]
    assert len(headers) == 3, headers
    lines = report.splitlines()
    causal = next(line for line in lines if "causal LM:" in line)
    assert "Gemma-3-270M" in causal and "real model, offline stand-in" in causal and "tiny random" not in causal
    korbert = next(line for line in lines if line.startswith("== korbertscore"))
    assert "Gemma-3-270M" in korbert and "real model" in korbert and "layer" in korbert
    para = next(line for line in lines if line.startswith("== paraphrase"))
    assert "FAILED" not in para and any("model: Gemma-3-270M" in line for line in lines)
    masked = next(line for line in lines if "masked LM pseudo-perplexity" in line)
    assert "tiny random BERT" in masked and "no Korean masked LM" in masked
    assert gemma in report  # the notes say which folder


def test_demo_generators_on_the_real_model(gemma, data_dir, tmp_path, monkeypatch):
    """MERE variants from Gemma (--lm) scored with zero-shot NLI by the same LM; LMRE references built by Gemma
    in-process (--llm local) with the four strategies against them next to the single-reference baseline."""
    from kometrics.demo import run_demo

    monkeypatch.setenv("KOMETRICS_CACHE", str(tmp_path / "cache"))
    out = io.StringIO()
    code = run_demo(data_dir=str(data_dir), limit=3, offline=True, only=["merge_sv_accuracy", "lmre"], out=out)
    report = out.getvalue()
    assert code == 0 and "FAILED" not in report, report
    lines = report.splitlines()
    source = next(line for line in lines if "source LM:" in line)
    assert "Gemma-3-270M" in source and "real causal LM" in source and "tiny" not in source
    assert any("constraint: P(r) > P(o): variant premise and hypothesis" in line for line in lines)
    assert any("ZERO-SHOT NLI by the same LM" in line for line in lines)
    rows = [line.split() for line in lines if line.strip().startswith(("zero-shot NLI, calibrated", "noisy oracle"))]
    assert len(rows) == 2, report
    local = next(i for i, line in enumerate(lines) if "references built by a REAL LM in-process" in line)
    assert "Gemma-3-270M" in lines[local]
    table = lines[local + 3:local + 8]
    assert table[0].split()[:2] == ["strategy", "LMRE"], table
    assert sorted(row.split()[0] for row in table[1:]) == ["comma", "dependency", "length", "rule"], table
