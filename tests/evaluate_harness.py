"""evaluate's own module test (``LocalModuleTest.test_load`` of huggingface/evaluate), for these metrics.

The docstring and card examples name the models a user would pass (``klue/bert-base``,
``skt/kogpt2-base-v2``). Offline, :func:`stand_in_models` maps those Hub ids to local folders the way
evaluate's test registers an "intensive calls patcher" for bertscore: it patches the model loader, here
``from_pretrained`` of transformers' Auto classes and base classes, so that the metric module, imported by
evaluate under a dynamic name, loads the local model wherever it calls transformers from. The examples
themselves run unchanged, and print only what holds for the real model too.

The doctests run as evaluate runs them: ``doctest.testmod(module, raise_on_error=True)`` with evaluate's
ellipsis marker ``[...]`` and no option flag beyond those written on the examples.

This file imports nothing of kometrics and nothing of pytest (tests/test_publish.py executes it inside an
isolated interpreter that cannot import the project).
"""

from __future__ import annotations

import contextlib
import doctest
import importlib
import inspect
import os
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

#: evaluate's ellipsis marker (its test sets ``doctest.ELLIPSIS_MARKER = "[...]"``).
EVALUATE_ELLIPSIS = "[...]"

#: The Hub ids the examples use, and which tiny local model (tests/conftest.py) stands in for each.
STAND_INS = {"klue/bert-base": "tiny_bert", "skt/kogpt2-base-v2": "tiny_gpt2"}


def _loader_classes() -> list[type]:
    """Every class whose own ``from_pretrained`` may receive a Hub id: each Auto class (transformers gives
    every ``AutoModelFor...`` its own copy), and the base classes that concrete classes inherit it from."""
    import transformers
    from transformers.models.auto import configuration_auto, modeling_auto, tokenization_auto
    from transformers.models.auto.auto_factory import _BaseAutoModelClass

    autos = [v for v in vars(modeling_auto).values()
             if isinstance(v, type) and issubclass(v, _BaseAutoModelClass) and v is not _BaseAutoModelClass]
    bases = [transformers.PreTrainedModel, transformers.PreTrainedTokenizerBase, transformers.PretrainedConfig]
    found = autos + [tokenization_auto.AutoTokenizer, configuration_auto.AutoConfig] + bases
    return [cls for cls in dict.fromkeys(found) if isinstance(cls.__dict__.get("from_pretrained"), classmethod)]


def _redirecting(original: classmethod, mapping: Mapping[str, str]) -> classmethod:
    func = original.__func__

    def from_pretrained(cls, *args, **kwargs):
        key = "pretrained_model_name_or_path"
        if args and isinstance(args[0], (str, os.PathLike)):
            args = (mapping.get(os.fspath(args[0]), args[0]), *args[1:])
        elif isinstance(kwargs.get(key), (str, os.PathLike)):
            kwargs[key] = mapping.get(os.fspath(kwargs[key]), kwargs[key])
        return func(cls, *args, **kwargs)

    from_pretrained.__doc__, from_pretrained.__name__ = func.__doc__, func.__name__
    return classmethod(from_pretrained)


def _forget(ids: set[str]) -> None:
    """Drop what module-level model caches hold under the redirected ids (the metrics cache loaded models
    under tuple keys that start with the id, e.g. ``{(model_id, kind, device, dtype): ...}``), so that an id
    means the stand-in only inside the context. Tables keyed by the id alone (known layers) are kept."""
    for module in list(sys.modules.values()):
        for value in list(getattr(module, "__dict__", {}).values()):
            if type(value) is not dict or not value:  # plain dicts only: no lazy or magic mappings
                continue
            for key in [k for k in list(value) if isinstance(k, tuple) and k and isinstance(k[0], str)
                        and k[0] in ids]:
                value.pop(key, None)


@contextlib.contextmanager
def stand_in_models(mapping: Mapping[str, str]) -> Iterator[None]:
    """Inside the context, ``from_pretrained("klue/bert-base")`` (any Auto class, tokenizer or config, and
    the concrete classes) loads ``mapping["klue/bert-base"]`` instead. Nothing else changes: the metric still
    sees and reports the Hub id it was given."""
    mapping = {str(k): str(v) for k, v in mapping.items()}
    classes = _loader_classes()
    originals = {cls: cls.__dict__["from_pretrained"] for cls in classes}
    try:
        for cls, original in originals.items():
            cls.from_pretrained = _redirecting(original, mapping)
        yield
    finally:
        for cls, original in originals.items():
            cls.from_pretrained = original
        _forget(set(mapping))


@contextlib.contextmanager
def evaluate_ellipsis() -> Iterator[None]:
    """``doctest.ELLIPSIS_MARKER = "[...]"`` as evaluate's test sets it (restored afterwards)."""
    before = doctest.ELLIPSIS_MARKER
    doctest.ELLIPSIS_MARKER = EVALUATE_ELLIPSIS
    try:
        yield
    finally:
        doctest.ELLIPSIS_MARKER = before


@contextlib.contextmanager
def use_local_metrics(root: str | os.PathLike) -> Iterator[None]:
    """evaluate's ``use_local_metrics``: ``evaluate.load(name)`` loads ``<root>/metrics/<last part of name>``,
    so that an example's ``evaluate.load("metrics/korbertscore")`` (or ``"ORG/korbertscore"``) is the local
    folder."""
    import evaluate

    load = evaluate.load

    def load_local_metric(path: str, *args: Any, **kwargs: Any):
        local = Path(root) / "metrics" / Path(str(path)).name
        return load(str(local) if local.is_dir() else path, *args, **kwargs)

    with mock.patch("evaluate.load", side_effect=load_local_metric):
        yield


def _failure_report(error: Exception) -> str:
    if isinstance(error, doctest.DocTestFailure):
        ex = error.example
        return (f"{error.test.name} (line {(error.test.lineno or 0) + ex.lineno + 1}):\n{ex.source}"
                f"expected:\n{ex.want}got:\n{error.got}")
    return str(error)


def run_doctests(module: ModuleType) -> doctest.TestResults:
    """``doctest.testmod(module, raise_on_error=True)`` with evaluate's marker, as evaluate's test runs it; a
    failing example raises AssertionError with its source, expected and actual output; an unexpected exception
    is re-raised (as evaluate does)."""
    with evaluate_ellipsis():
        try:
            return doctest.testmod(module, verbose=False, raise_on_error=True, report=False)
        except doctest.UnexpectedException as e:
            raise e.exc_info[1].with_traceback(e.exc_info[2]) from None
        except doctest.DocTestFailure as e:
            raise AssertionError(_failure_report(e)) from None


def load_metric_module(name: str) -> ModuleType:
    """evaluate's import: ``evaluation_module_factory("metrics/<name>", module_type="metric")`` (relative to
    the current directory), then the module under its dynamic name in the HF modules cache."""
    import evaluate

    path = evaluate.loading.evaluation_module_factory(os.path.join("metrics", name), module_type="metric").module_path
    return importlib.import_module(path)


def module_test_load(name: str, root: str | os.PathLike, models: Mapping[str, str]) -> doctest.TestResults:
    """``LocalModuleTest.test_load`` for ``metrics/<name>`` under ``root``: import through the factory, no
    ``**kwargs`` in ``_compute``, doctests with ``[...]``, the model patch and local metrics; at least two
    examples attempted, none failed."""
    import evaluate

    cwd = os.getcwd()
    os.chdir(root)
    try:
        module = load_metric_module(name)
        instance = evaluate.loading.import_main_class(module.__name__)
        parameters = inspect.signature(instance._compute).parameters
        assert all(p.kind != p.VAR_KEYWORD for p in parameters.values()), f"{name}: _compute takes **kwargs"
        with stand_in_models(models), use_local_metrics(root):
            results = run_doctests(module)
    finally:
        os.chdir(cwd)
    assert results.failed == 0, results
    assert results.attempted > 1, f"{name}: {results.attempted} example(s) attempted"
    return results


_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def card_examples(card: str) -> tuple[str, list[str]]:
    """The doctest blocks of a metric card: the card's text with everything outside the fenced blocks that
    hold ``>>>`` lines blanked (so a fence never reads as expected output and line numbers stay the card's),
    and the other ``python`` blocks that call ``evaluate.load`` (which should be doctest blocks)."""
    kept = [""] * card.count("\n")
    untested = []
    for match in _FENCE.finditer(card):
        lang, body = match.group(1), match.group(2)
        if re.search(r"^\s*>>> ", body, re.MULTILINE):
            first = card.count("\n", 0, match.start(2))
            for i, line in enumerate(body.split("\n")[:-1]):
                kept[first + i] = line
        elif lang in ("python", "py") and "evaluate.load(" in body:
            untested.append(body)
    return "\n".join(kept) + "\n", untested


def run_card(path: str | os.PathLike, root: str | os.PathLike, models: Mapping[str, str]) -> doctest.TestResults:
    """Run a card's examples (``>>>`` blocks, in order, one namespace) verbatim from ``root`` (so that
    ``evaluate.load("metrics/<name>")`` finds the folder), with the model patch and evaluate's marker."""
    text = Path(path).read_text(encoding="utf-8")
    source, _ = card_examples(text)
    test = doctest.DocTestParser().get_doctest(source, {"__name__": "__card__"}, str(path), str(path), None)
    runner = doctest.DebugRunner(verbose=False)
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with stand_in_models(models), use_local_metrics(root), evaluate_ellipsis():
            try:
                runner.run(test, clear_globs=True)
            except doctest.UnexpectedException as e:
                raise e.exc_info[1].with_traceback(e.exc_info[2]) from None
            except doctest.DocTestFailure as e:
                raise AssertionError(_failure_report(e)) from None
    finally:
        os.chdir(cwd)
    return doctest.TestResults(runner.failures, runner.tries)
