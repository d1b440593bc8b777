"""The layout rule: a metric folder ships alone as a Space, so its files import only their siblings.

Every ``.py`` file of every metric folder is parsed with ``ast``; an ``import kometrics`` /
``from kometrics... import`` or a relative import that leaves the folder (``from .. import``) fails. Lines
of docstrings are not code and are not looked at; the examples there are written ``>>> from kometrics...``
so that a line-based check (evaluate's own import scan, a grep hook) does not take them for imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kometrics import METRICS

from .conftest import METRICS_DIR


def _metric_files() -> list[Path]:
    return sorted(p for name in METRICS for p in (METRICS_DIR / name).rglob("*.py") if "__pycache__" not in p.parts)


def forbidden_imports(source: str, filename: str = "<string>") -> list[str]:
    """``file:line: statement`` for each import of kometrics or from outside the folder in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "kometrics" or alias.name.startswith("kometrics."):
                    found.append(f"{filename}:{node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 0 and (module == "kometrics" or module.startswith("kometrics.")):
                found.append(f"{filename}:{node.lineno}: from {module} import ...")
            elif node.level > 1:
                found.append(f"{filename}:{node.lineno}: from {'.' * node.level}{module} import ...")
    return found


def test_every_metric_folder_has_python_files():
    names = {p.relative_to(METRICS_DIR).parts[0] for p in _metric_files()}
    assert names == set(METRICS)


@pytest.mark.parametrize("path", _metric_files(), ids=lambda p: p.relative_to(METRICS_DIR).as_posix())
def test_metric_file_imports_only_siblings(path):
    assert forbidden_imports(path.read_text(encoding="utf-8"), path.relative_to(METRICS_DIR).as_posix()) == []


@pytest.mark.parametrize("path", _metric_files(), ids=lambda p: p.relative_to(METRICS_DIR).as_posix())
def test_no_line_of_a_metric_file_reads_as_a_kometrics_import(path):
    """evaluate scans a module's lines for imports with a regular expression; a docstring line that starts
    with ``from kometrics`` would read as a dependency on a package a Space does not have."""
    lines = [n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if line.lstrip().startswith(("from kometrics", "import kometrics"))]
    assert lines == [], f"{path}: lines {lines}"


@pytest.mark.parametrize("source, expected", [
    ("import kometrics\n", ["t.py:1: import kometrics"]),
    ("import numpy, kometrics.klue_sts as k\n", ["t.py:1: import kometrics.klue_sts"]),
    ("from kometrics.cli import read_column\n", ["t.py:1: from kometrics.cli import ..."]),
    ("def f():\n    from kometrics import METRICS\n", ["t.py:2: from kometrics import ..."]),
    ("from ..cli import read_column\n", ["t.py:1: from ..cli import ..."]),
    ("from .. import x\n", ["t.py:1: from .. import ..."]),
    ("from .scoring import score\nfrom . import plotting\nimport kometrics_extra\n", []),
    ('"""Example:\n\nfrom kometrics.cli import main\n"""\n', []),
])
def test_the_check_finds_what_it_should(source, expected):
    assert forbidden_imports(source, "t.py") == expected
