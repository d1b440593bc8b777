"""Every metric's Space (``metrics/<name>/app.py``) starts and answers in a headless Chromium.

Each app is taken from the Space folder that ``kometrics publish --dry-run`` builds (what a Space clone runs),
imported with its folder first on ``sys.path``, served on 127.0.0.1 and used like a person would: fill the
model textbox with a tiny local model where the app needs one, click the button, and read the answer on the
page. The answer must show the numbers that the app's own evaluate module gives for the same inputs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ..conftest import METRICS_DIR
from .conftest import load_app, open_app

#: A rendered matplotlib figure inside a gr.Plot.
PLOT_IMAGE = "[data-testid=matplotlib] img[src^='data:image']"
NAMES = sorted(p.parent.name for p in METRICS_DIR.glob("*/app.py") if (p.parent / f"{p.parent.name}.py").is_file())


def _page_text(page) -> str:
    return page.locator("gradio-app, .gradio-container").first.inner_text()


def _fill(page, label: str, value: str) -> None:
    """Fill the box labelled ``label`` (its accessible name also holds the box's hint, hence not exact)."""
    box = page.get_by_label(label).first
    box.fill(value)


def _wait_text(page, text: str) -> None:
    page.get_by_text(text, exact=False).first.wait_for()


def _json_number(x: float) -> str:
    """How a float shows in gr.JSON (JavaScript's shortest round-trip form, as Python's repr)."""
    x = float(x)
    return str(int(x)) if x.is_integer() else json.dumps(x)


def check_klue_sts(page, app, models) -> None:
    example = app.EXAMPLE
    expected = app.metric.compute(predictions=list(example.iloc[:, 0]), references=list(example.iloc[:, 1]),
                                  threshold=3.0)
    page.get_by_role("button", name="Score").click()
    _wait_text(page, "spearmanr")
    text = _page_text(page)
    for key in ("pearson", "spearmanr", "f1"):
        assert _json_number(expected[key]) in text, (key, expected[key])


def check_korbertscore(page, app, models) -> None:
    # The layer box is empty (the model's default), and its hint names that default: for the prefilled Hub
    # model from the known table, then for the model typed in (loaded to read its depth).
    layer_box = page.locator("#layer textarea, #layer input").first
    assert layer_box.input_value() == ""
    _wait_text(page, f"empty: the default layer of {app.DEFAULT_MODEL}: 8 (")
    _fill(page, "model (Hub id or local folder)", models["tiny_bert"])
    layer_box.click()  # leaving the model box updates the hint
    _wait_text(page, f"empty: the default layer of {models['tiny_bert']}: 8 (the paper's 8 of 12 scaled to its 12")
    page.get_by_role("button", name="Score").click()
    _wait_text(page, "hashcode")
    _wait_text(page, f"Scored with {models['tiny_bert']} at layer 8 (its default layer).")
    page.locator(PLOT_IMAGE).wait_for(state="visible")
    candidate = page.get_by_label("candidate (prediction)", exact=True).input_value()
    reference = page.get_by_label("reference", exact=True).input_value()
    expected = app.metric.compute(predictions=[candidate], references=[reference], model_type=models["tiny_bert"])
    text = _page_text(page)
    for key in ("precision", "recall", "f1"):
        assert _json_number(expected[key][0]) in text, (key, expected[key][0])


def check_perplexity(page, app, models) -> None:
    _fill(page, "Model (Hub id or local path)", models["tiny_gpt2"])
    page.get_by_role("button", name="Score").click()
    _wait_text(page, "bits_per_character")
    text_in = page.get_by_label("Text", exact=True).input_value()
    expected = app.metric.compute(predictions=[text_in], model_id=models["tiny_gpt2"])
    text = _page_text(page)
    assert _json_number(expected["bits_per_character"]) in text
    assert _json_number(expected["corpus_perplexity"]) in text


def check_merge_sv_accuracy(page, app, models) -> None:
    page.get_by_role("button", name="Score").click()
    _wait_text(page, "MC =")
    inputs = {}
    table = app.read_table(app.EXAMPLE)
    for key in app.COLUMNS:
        inputs[key] = app._column(table, key)
    inputs["predictions"] = [int(v) for v in inputs["predictions"]]
    inputs["references"] = [int(v) for v in inputs["references"]]
    inputs["seed_ids"] = [str(v) for v in inputs["seed_ids"]]
    inputs["is_seed"] = app._bools(inputs["is_seed"])
    inputs["word_classes"] = ["" if v is None else str(v) for v in inputs["word_classes"]]
    expected = app.metric.compute(**inputs)
    text = _page_text(page)
    assert f"MC = {expected['matching_correctness']:.2f}" in text
    assert f"seed accuracy {expected['seed_accuracy']:.3f}" in text
    page.locator(PLOT_IMAGE).wait_for(state="visible")


def _lmre_verdict(page) -> str:
    """The verdict heading that the LMRE Space renders (its ``gr.Markdown(elem_id="verdict")``, first line
    ``### ✅ accepted`` or ``### ❌ rejected``), as the page shows it."""
    return page.locator("#verdict h3").first.inner_text().strip()


def check_lmre(page, app, models) -> None:
    verdicts = {True: "✅ accepted", False: "❌ rejected"}
    refs = app.EXAMPLE_REFERENCES.splitlines()
    page.get_by_role("button", name="Evaluate").click()
    expected = app.metric.explain(app.EXAMPLE_PREDICTION, refs, similarity="f1", theta=0.5, break_types="binary")
    _wait_text(page, expected["signature"])
    assert expected["accepted"]  # the example is accepted: a reference has the same boundaries
    assert _lmre_verdict(page) == verdicts[True]
    # The other way: exact match of typed breaks rejects it (its // is a / in every reference).
    page.get_by_label("em", exact=True).check()
    page.get_by_label("typed", exact=True).check()
    page.get_by_role("button", name="Evaluate").click()
    expected = app.metric.explain(app.EXAMPLE_PREDICTION, refs, similarity="em", theta=0.5, break_types="typed")
    _wait_text(page, expected["signature"])
    assert not expected["accepted"]
    assert _lmre_verdict(page) == verdicts[False]


CHECKS: dict[str, Callable] = {
    "klue_sts": check_klue_sts,
    "korbertscore": check_korbertscore,
    "perplexity": check_perplexity,
    "merge_sv_accuracy": check_merge_sv_accuracy,
    "lmre": check_lmre,
}


def test_every_app_has_a_browser_check():
    assert set(NAMES) <= set(CHECKS), f"no browser check for {set(NAMES) - set(CHECKS)}"


@pytest.fixture(scope="module")
def space_folders(tmp_path_factory) -> Path:
    from kometrics.publish import build_space

    out = tmp_path_factory.mktemp("spaces")
    for name in NAMES:
        build_space(name, out, "kometrics-test")
    return out


@pytest.mark.browser
@pytest.mark.parametrize("name", NAMES)
def test_metric_space_answers_in_the_browser(name, space_folders, page, serve, screenshot, tiny_bert, tiny_gpt2):
    import gradio as gr

    app = load_app(space_folders / name / "app.py", f"_space_app_{name}")
    assert isinstance(app.demo, gr.Blocks)
    open_app(page, serve(app.demo))
    CHECKS[name](page, app, {"tiny_bert": tiny_bert, "tiny_gpt2": tiny_gpt2})
    screenshot(page, f"space-{name}")
