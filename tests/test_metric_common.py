"""The checks every metric folder must pass (each ships alone as a Space).

- the folder alone, copied elsewhere, loads with ``evaluate.load`` offline (it is self-contained);
- its docstring examples run as doctests (at least two), as evaluate's own module test runs them;
- it has a metric card whose YAML front matter is a Gradio Space config, an ``app.py`` that builds a Gradio
  app without launching it, and a ``requirements.txt``.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys

import pytest
import yaml

from .conftest import METRICS_DIR, metric_names
from .evaluate_harness import run_doctests, stand_in_models

NAMES = metric_names()


def _isolated_copy(name: str, tmp_path):
    """``<tmp>/metrics/<name>``: the folder alone, laid out as in a checkout (examples load "metrics/<name>")."""
    dest = tmp_path / "metrics" / name
    shutil.copytree(METRICS_DIR / name, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


def test_all_metrics_present():
    from kometrics import METRICS

    assert set(NAMES) <= set(METRICS), f"metric folders not registered in kometrics.METRICS: {set(NAMES) - set(METRICS)}"


@pytest.mark.parametrize("name", NAMES)
def test_folder_loads_alone_and_doctests_pass(name, tmp_path, stand_ins, monkeypatch):
    """The isolated copy's doctests run as evaluate's test runs them (``testmod``, marker ``[...]``), with
    the Hub ids of the examples patched to local stand-ins (tests/evaluate_harness.py)."""
    import evaluate

    folder = _isolated_copy(name, tmp_path)
    monkeypatch.chdir(tmp_path)  # so that the examples' evaluate.load("metrics/<name>") finds the copy
    metric = evaluate.load(str(folder))
    assert metric.name == name or metric.name.replace("-", "_") == name
    module = sys.modules[type(metric).__module__]
    # It really is the isolated copy that was imported (not the installed package).
    assert not module.__file__.startswith(str(METRICS_DIR)), module.__file__

    _count_examples_blocks(module)
    with stand_in_models(stand_ins):
        results = run_doctests(module)
    assert results.failed == 0
    assert results.attempted >= 2, f"{name}: at least two doctest examples are needed"


def _count_examples_blocks(module) -> None:
    """The kwargs description documents at least two 'Example' sections, each with doctest lines."""
    text = getattr(module, "_KWARGS_DESCRIPTION", "")
    sections = [s for s in text.split("Example")[1:] if ">>> " in s]
    assert len(sections) >= 2, "the _KWARGS_DESCRIPTION must carry at least two 'Example' sections"


@pytest.mark.parametrize("name", NAMES)
def test_space_files(name, tmp_path):
    folder = _isolated_copy(name, tmp_path)
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n"), "README.md must start with YAML front matter"
    meta = yaml.safe_load(card.split("---\n", 2)[1])
    assert meta.get("title"), "front matter needs a title"
    assert meta.get("sdk") == "gradio"
    assert meta.get("app_file") == "app.py"
    assert {"evaluate", "metric"} <= set(meta.get("tags", []))
    reqs = (folder / "requirements.txt").read_text(encoding="utf-8").split()
    assert any(r.startswith("evaluate") for r in reqs) and any(r.startswith("gradio") for r in reqs)
    assert (folder / "app.py").is_file()


@pytest.mark.parametrize("name", NAMES)
def test_app_builds_without_launching(name, tmp_path, monkeypatch):
    import gradio as gr

    folder = _isolated_copy(name, tmp_path)
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))
    spec = importlib.util.spec_from_file_location(f"_space_app_{name}", folder / "app.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    assert isinstance(app.demo, gr.Blocks)
