"""``tests.conftest.missing`` and its users: skip with a message naming what is missing, fail under ``CI=true``."""

from __future__ import annotations

import pytest

from .conftest import missing, needs, require_module


@pytest.mark.parametrize("ci", ["true", "1", "TRUE"])
def test_missing_fails_under_ci(monkeypatch, ci):
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception, match="missing test dependency: Chromium .*CI=true"):
        missing("Chromium (make browser)")
    with pytest.raises(pytest.fail.Exception, match="'kometrics_no_such_module'.*pip install it"):
        require_module("kometrics_no_such_module", "pip install it")
    with pytest.raises(pytest.fail.Exception, match="metrics/x/x.py"):
        needs(False, "metrics/x/x.py")(lambda: None)()


@pytest.mark.parametrize("ci", [None, "", "false", "0"])
def test_missing_skips_elsewhere(monkeypatch, ci):
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match="missing test dependency: bert-score"):
        missing("bert-score")
    with pytest.raises(pytest.skip.Exception, match="kometrics_no_such_module"):
        require_module("kometrics_no_such_module")


def test_present_dependencies_pass_through(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert require_module("json").dumps([1]) == "[1]"

    def test_fn(a, b=2):
        return a + b

    assert needs(True, "anything")(test_fn) is test_fn
