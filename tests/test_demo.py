"""``kometrics demo`` (the README's first command) runs every metric on the real data, offline."""

from __future__ import annotations

import io

from kometrics import METRICS


def test_demo_runs_every_section_offline(data_dir, tmp_path, monkeypatch):
    """Every section with tiny random stand-ins (``--tiny``); the real-model sections (Gemma-3-270M) are run by
    tests/real_model/test_demo.py."""
    from kometrics.demo import run_demo

    monkeypatch.setenv("KOMETRICS_CACHE", str(tmp_path / "cache"))
    out = io.StringIO()
    code = run_demo(data_dir=str(data_dir), limit=20, offline=True, out=out, real_models=False)
    report = out.getvalue()
    assert code == 0, report
    assert "FAILED" not in report and "skipped: it needs" not in report and "not in this installation" not in report, report
    headers = [line for line in report.splitlines() if line.startswith("== ")]
    assert len(headers) == len(METRICS) + 1, headers  # every metric, then the paraphrase benchmark
    assert "tiny random" in report  # model-based sections say they ran on stand-in models
    assert "could not be loaded" in report  # and the notes say why


def test_demo_reports_a_missing_optional_dependency(data_dir, tmp_path, monkeypatch):
    import sys

    from kometrics.demo import run_demo

    monkeypatch.setitem(sys.modules, "nltk", None)  # importing nltk now raises ModuleNotFoundError
    monkeypatch.setenv("KOMETRICS_CACHE", str(tmp_path / "cache"))
    out = io.StringIO()
    assert run_demo(data_dir=str(data_dir), limit=5, offline=True, only=["klue_sts"], out=out) == 0
    import kometrics.demo as demo

    class Boom:
        @staticmethod
        def run(ctx):
            import nltk  # noqa: F401

    monkeypatch.setattr(demo.importlib, "import_module", lambda name: Boom)
    out = io.StringIO()
    assert run_demo(data_dir=str(data_dir), limit=5, offline=True, only=["klue_sts"], out=out) == 0
    assert "skipped: it needs nltk" in out.getvalue() and "pip install -e '.[bench]'" in out.getvalue()
