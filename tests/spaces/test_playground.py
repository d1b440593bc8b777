"""The playground Space (spaces/playground/app.py): its handlers against the libraries they wrap, its
behaviour when a metric is missing, and every tab end to end in a headless Chromium.

Model tabs run on the tiny random local models of tests/conftest.py, given through the environment
variables the app documents (KOMETRICS_BERT_MODEL / KOMETRICS_LM_MODEL) or typed into the model textbox.
"""

from __future__ import annotations

import importlib
import math

import pytest

from .conftest import REPO, load_app, open_app

APP_FILE = REPO / "spaces" / "playground" / "app.py"
#: A rendered matplotlib figure inside a gr.Plot (the block's label icon is an svg, so match the image).
PLOT_IMAGE = "[data-testid=matplotlib] img[src^='data:image']"


@pytest.fixture(scope="module")
def app():
    return load_app(APP_FILE, "_kometrics_playground_app")


@pytest.fixture(scope="module")
def playground(app, tiny_bert, tiny_gpt2):
    """The playground built with the tiny models as defaults, taken from the documented env variables."""
    mp = pytest.MonkeyPatch()
    mp.setenv("KOMETRICS_BERT_MODEL", tiny_bert)
    mp.setenv("KOMETRICS_LM_MODEL", tiny_gpt2)
    try:
        yield app.build_demo()
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def playground_url(playground):
    from .conftest import free_port

    playground.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True)
    yield playground.local_url.rstrip("/")
    playground.close()


def _textbox_values(demo) -> dict[str, object]:
    config = demo.get_config_file()
    return {c["props"].get("elem_id"): c["props"].get("value") for c in config["components"]
            if c["props"].get("elem_id")}


# --- without a browser ----------------------------------------------------------------------------------

def test_model_defaults_argument_env_and_hub(app, monkeypatch):
    monkeypatch.delenv("KOMETRICS_BERT_MODEL", raising=False)
    monkeypatch.delenv("KOMETRICS_LM_MODEL", raising=False)
    values = _textbox_values(app.build_demo())
    assert values["kbs-model"] == app.DEFAULT_BERT_MODEL == "klue/bert-base"
    assert values["ppl-model"] == app.DEFAULT_LM_MODEL == "skt/kogpt2-base-v2"
    monkeypatch.setenv("KOMETRICS_BERT_MODEL", "/models/bert")
    monkeypatch.setenv("KOMETRICS_LM_MODEL", "/models/gpt2")
    values = _textbox_values(app.build_demo())
    assert values["kbs-model"] == "/models/bert"
    assert values["ppl-model"] == "/models/gpt2"
    values = _textbox_values(app.build_demo(bert_model="/arg/bert", lm_model="/arg/gpt2"))
    assert values["kbs-model"] == "/arg/bert"
    assert values["ppl-model"] == "/arg/gpt2"


def test_command_line_sets_models_and_port(app, monkeypatch):
    import gradio as gr

    launched = {}
    monkeypatch.setattr(gr.Blocks, "launch", lambda self, **kw: launched.update(demo=self, **kw))
    app.main(["--bert-model", "/cli/bert", "--lm-model", "/cli/gpt2", "--port", "7999", "--host", "0.0.0.0"])
    assert launched["server_port"] == 7999 and launched["server_name"] == "0.0.0.0"
    values = _textbox_values(launched["demo"])
    assert values["kbs-model"] == "/cli/bert"
    assert values["ppl-model"] == "/cli/gpt2"


def test_missing_metric_degrades_to_a_message(app, monkeypatch):
    """A tab whose library is not importable shows a message naming it; the other tabs still build."""
    real_import = importlib.import_module

    def fake_import(name, *args, **kwargs):
        if name in ("kometrics.lmre", "kometrics.perplexity"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(app.importlib, "import_module", fake_import)
    demo = app.build_demo()
    texts = [c["props"].get("value") or "" for c in demo.get_config_file()["components"]
             if c.get("type") == "markdown"]
    missing = [t for t in texts if "Not available" in t]
    assert any("kometrics.lmre" in t for t in missing), missing
    assert any("kometrics.perplexity" in t for t in missing), missing
    ids = set(_textbox_values(demo))
    assert "lmre-prediction" not in ids and "ppl-text" not in ids
    assert {"sts-table", "kbs-model", "merge-run"} <= ids  # the other tabs still build
    with pytest.raises(Exception, match="kometrics.lmre"):
        app.lmre_explain("가 / 나", "가 / 나", "f1", 0.5, "binary")


def test_klue_sts_handler_matches_scipy(app):
    from scipy.stats import pearsonr, spearmanr

    preds = [4.6, 0.4, 3.1, 2.2, 3.9, 1.0, 4.1]
    refs = [4.8, 0.0, 3.6, 1.4, 2.9, 0.6, 4.4]
    rows, result = app.klue_sts_scores([[p, r] for p, r in zip(preds, refs)], 3.0)
    assert math.isclose(result["pearson"], pearsonr(preds, refs)[0], rel_tol=1e-12)
    assert math.isclose(result["spearmanr"], spearmanr(preds, refs)[0], rel_tol=1e-12)
    tp = sum(p >= 3 and r >= 3 for p, r in zip(preds, refs))
    fp = sum(p >= 3 and r < 3 for p, r in zip(preds, refs))
    fn = sum(p < 3 and r >= 3 for p, r in zip(preds, refs))
    assert math.isclose(result["f1"], 2 * tp / (2 * tp + fp + fn), rel_tol=1e-12)
    assert dict(rows)["pearson"] == f"{result['pearson']:.4f}"


def test_lmre_handler_reports_the_library_verdict(app):
    from kometrics.lmre import explain

    refs = app.EXAMPLE_REFERENCES.splitlines()
    for theta in (0.0, 0.99):
        text, rows, result = app.lmre_explain(app.EXAMPLE_PREDICTION, app.EXAMPLE_REFERENCES, "f1", theta, "binary")
        expected = explain(app.EXAMPLE_PREDICTION, refs, similarity="f1", theta=theta, break_types="binary")
        assert result == expected
        assert ("Accepted" in text) == bool(expected["accepted"])
        assert f"`{expected['best_reference']}`" in text
        assert [row[1] for row in rows] == refs


def test_merge_handler_on_the_example_by_hand(app):
    """EXAMPLE_MERGE: seeds s1, s2 right and s3 wrong (2/3); variants right 2/3, 1/3, 2/3 (5 of 9).

    SV(CT) = 1 for CT <= 1/3, 2/3 for 1/3 < CT <= 2/3, 0 above; the CT grid point whose SV is closest to the
    seed accuracy 2/3, ties to the higher CT, is 0.65.
    """
    fig, summary, result = app.merge_sv_curve(app.EXAMPLE_MERGE)
    assert result["seed_accuracy"] == pytest.approx(2 / 3)
    assert result["accuracy"] == pytest.approx(5 / 9)
    assert result["matching_correctness"] == pytest.approx(0.65)
    sv = {round(float(k), 2): v for k, v in result["sv_accuracy"].items()}
    assert sv[0.3] == 1.0 and sv[0.35] == pytest.approx(2 / 3) and sv[0.65] == pytest.approx(2 / 3) and sv[0.7] == 0.0
    assert fig.axes, "plot_sv_curve returned an empty figure"


def test_perplexity_handler_sums_the_library_surprisals(app, tiny_gpt2):
    from kometrics.perplexity import token_surprisals

    highlighted, table, summary = app.perplexity_surprisal(app.EXAMPLE_TEXT, tiny_gpt2)
    expected = token_surprisals(app.EXAMPLE_TEXT, tiny_gpt2)
    assert [row[1] for row in table] == [tok for tok, _ in expected]
    total = sum(bits for _, bits in expected)
    assert f"{total:.2f} bits" in summary
    assert max(score for _, score in highlighted) == pytest.approx(1.0)


# --- in the browser -------------------------------------------------------------------------------------

def _tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).click()


@pytest.mark.browser
def test_page_has_every_tab(page, playground_url, screenshot):
    open_app(page, playground_url)
    for name in ("KorBERTScore", "Perplexity", "MERGE SV curve", "LMRE", "KLUE-STS"):
        page.get_by_role("tab", name=name).wait_for(state="visible", timeout=30_000)
    screenshot(page, "playground-start")


@pytest.mark.browser
def test_korbertscore_tab(page, playground_url, screenshot, tiny_bert, app):
    from kometrics.korbertscore import score

    open_app(page, playground_url)
    _tab(page, "KorBERTScore")
    # The layer box is empty (it used to show 0 while the default layer was used), and its hint names the
    # default layer of the model in the model box (here the tiny model of the environment variable).
    layer_box = page.locator("#kbs-layer textarea, #kbs-layer input").first
    assert layer_box.input_value() == ""
    page.locator("#kbs-layer").get_by_text(f"empty: the default layer of {tiny_bert}: 8 (").wait_for()
    page.locator("#kbs-run").click()
    page.locator("#kbs-summary").get_by_text("at layer 8 (the default layer of this model)").wait_for()
    page.locator("#kbs-model textarea, #kbs-model input").first.fill(tiny_bert)
    layer_box.fill("4")
    page.locator("#kbs-run").click()
    page.locator(f"#kbs-plot {PLOT_IMAGE}").wait_for(state="visible")
    summary = page.locator("#kbs-summary")
    summary.get_by_text("layer 4").wait_for()
    summary.get_by_text("F1").wait_for()
    expected = score([app.EXAMPLE_CANDIDATE], [app.EXAMPLE_REFERENCE], model_type=tiny_bert, num_layers=4)
    text = summary.inner_text()
    for key, label in (("precision", "P"), ("recall", "R"), ("f1", "F1")):
        assert f"{label} = {float(expected[key][0]):.4f}" in text, (key, text)
    screenshot(page, "playground-korbertscore")


@pytest.mark.browser
def test_perplexity_tab(page, playground_url, screenshot, tiny_gpt2):
    from kometrics.perplexity import token_surprisals

    open_app(page, playground_url)
    _tab(page, "Perplexity")
    page.locator("#ppl-run").click()
    page.locator("#ppl-summary").get_by_text("bits/token").wait_for()
    expected = token_surprisals(playground_module_text(), tiny_gpt2)
    summary = page.locator("#ppl-summary").inner_text()
    assert f"{len(expected)} scored tokens" in summary
    assert f"{sum(b for _, b in expected):.2f} bits" in summary
    rows = page.locator("#ppl-table div[role=row]")
    rows.first.wait_for()
    assert rows.count() == len(expected)
    screenshot(page, "playground-perplexity")


def playground_module_text() -> str:
    import sys

    return sys.modules["_kometrics_playground_app"].EXAMPLE_TEXT


@pytest.mark.browser
def test_merge_tab(page, playground_url, screenshot, app):
    open_app(page, playground_url)
    _tab(page, "MERGE SV curve")
    page.locator("#merge-run").click()
    page.locator("#merge-summary").get_by_text("matching correctness").wait_for()
    page.locator(f"#merge-plot {PLOT_IMAGE}").wait_for(state="visible")
    text = page.locator("#merge-summary").inner_text()
    _, expected_summary, result = app.merge_sv_curve(app.EXAMPLE_MERGE)
    assert f"seed accuracy = {result['seed_accuracy']:.4f}" in text
    assert f"(MC) = {result['matching_correctness']:.4f}" in text
    screenshot(page, "playground-merge")


@pytest.mark.browser
def test_lmre_tab(page, playground_url, screenshot, app):
    from kometrics.lmre import explain

    open_app(page, playground_url)
    _tab(page, "LMRE")
    page.locator("#lmre-run").click()
    verdict = page.locator("#lmre-verdict")
    verdict.get_by_text("Matching reference").wait_for()
    expected = explain(app.EXAMPLE_PREDICTION, app.EXAMPLE_REFERENCES.splitlines(), similarity="f1", theta=0.7,
                       break_types="binary")
    text = verdict.inner_text()
    assert ("Accepted" in text) == expected["accepted"] and ("Rejected" in text) != expected["accepted"]
    assert expected["best_reference"].replace(" ", "") in text.replace(" ", "")
    rows = page.locator("#lmre-table div[role=row]")
    rows.nth(len(expected["references"]) - 1).wait_for()
    assert rows.count() == len(expected["references"])
    screenshot(page, "playground-lmre")
    # A word sequence that differs from the references is refused with a message naming the problem.
    page.locator("#lmre-prediction textarea, #lmre-prediction input").first.fill("전혀 / 다른 문장")
    page.locator("#lmre-run").click()
    page.get_by_text("must annotate the same word sequence").first.wait_for()
    screenshot(page, "playground-lmre-error")


@pytest.mark.browser
def test_klue_sts_tab(page, playground_url, screenshot, app):
    open_app(page, playground_url)
    _tab(page, "KLUE-STS")
    page.locator("#sts-run").click()
    table = page.locator("#sts-scores")
    table.get_by_text("pearson").first.wait_for()
    _, expected = app.klue_sts_scores(app.EXAMPLE_STS, 3.0)
    assert f"{expected['pearson']:.4f}" in table.inner_text()
    assert f"{expected['f1']:.4f}" in table.inner_text()
    screenshot(page, "playground-klue-sts")
