"""The Spaces name the defaults of their model fields and show what was used (issue 16), through gradio_client.

An empty layer box means the model's default layer: the box's hint names that layer before scoring, and the
page names the layer used after; the layer used must be the one named, and the scores those of that layer
given explicitly. Layer 0 (the embeddings) is a layer, not "default". An empty model box means the default
model, named on the page and after scoring. The defaults are checked on a model of the known table
(``klue/bert-base``, its tiny stand-in loaded through the model patch of tests/evaluate_harness.py: layer 8)
and on a 3-layer model outside it (round(3 * 8 / 12) = 2, computed from its depth).
"""

from __future__ import annotations

import re

import pytest

from ..conftest import METRICS_DIR, REPO, serve_app
from ..evaluate_harness import stand_in_models

CANDIDATE, REFERENCE = "오늘은 날씨가 정말 맑다.", "오늘 날씨가 아주 화창하다."
PLAYGROUND = REPO / "spaces" / "playground" / "app.py"


@pytest.fixture(scope="module")
def shallow_bert(tmp_path_factory, korean_texts) -> str:
    """A tiny BERT with 3 blocks: not in the known table, so its default layer comes from its depth."""
    from kometrics.models.tiny import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("tiny-bert-3"), korean_texts, num_hidden_layers=3)


def _hinted_layer(update: dict) -> int:
    """The default layer that a layer box's hint names ("... of MODEL: 8 (...)"), also in its placeholder."""
    info = re.search(r"default layer of .+: (\d+) \(", update["info"])
    assert info, update
    assert update["placeholder"] == f"default ({info.group(1)})", update
    return int(info.group(1))


def _expected(model: str, layer: int) -> dict:
    from kometrics.korbertscore import score

    return score([CANDIDATE], [REFERENCE], model_type=model, num_layers=layer)


def test_korbertscore_space_names_and_uses_the_default_layer(stand_ins, shallow_bert):
    with stand_in_models(stand_ins), serve_app(METRICS_DIR / "korbertscore" / "app.py") as (app, client):
        for model, depth_default in (("klue/bert-base", 8), (shallow_bert, 2)):
            named = _hinted_layer(client.predict(model, api_name="/layer_default"))
            assert named == depth_default
            result, _, used = client.predict(CANDIDATE, REFERENCE, model, "", False, api_name="/score")
            assert result["num_layers"] == named and result["model"] == model
            assert used == f"Scored with `{model}` at layer {named} (its default layer)."
            assert result["f1"] == pytest.approx(_expected(model, named)["f1"][0], abs=1e-7)
        # An empty model box is the default model, named in the box and after scoring.
        assert app.DEFAULT_MODEL == "klue/bert-base"
        assert _hinted_layer(client.predict("", api_name="/layer_default")) == 8
        result, _, used = client.predict(CANDIDATE, REFERENCE, "", "", False, api_name="/score")
        assert result["model"] == "klue/bert-base" and result["num_layers"] == 8
        assert used == "Scored with `klue/bert-base` (the default model) at layer 8 (its default layer)."
        # Layer 0 is the embedding layer, chosen explicitly, not the default.
        result, _, used = client.predict(CANDIDATE, REFERENCE, shallow_bert, "0", False, api_name="/score")
        assert result["num_layers"] == 0 and used == f"Scored with `{shallow_bert}` at layer 0."
        assert result["f1"] == pytest.approx(_expected(shallow_bert, 0)["f1"][0], abs=1e-7)
        with pytest.raises(Exception, match="whole number"):
            client.predict(CANDIDATE, REFERENCE, shallow_bert, "two", False, api_name="/score")


def test_perplexity_space_names_the_default_model_of_each_mode(stand_ins, tiny_gpt2):
    from transformers import AutoConfig

    with stand_in_models(stand_ins), serve_app(METRICS_DIR / "perplexity" / "app.py") as (_, client):
        assert client.predict("pseudo", api_name="/model_default")["placeholder"] == "klue/bert-base"
        assert client.predict("causal", api_name="/model_default")["placeholder"] == "skt/kogpt2-base-v2"
        summary, _, _, used = client.predict(CANDIDATE, "", "causal", api_name="/surprisal")
        assert summary["model"] == "skt/kogpt2-base-v2"
        assert used.startswith("Scored with `skt/kogpt2-base-v2` (the default for causal mode); signature")
        # The window, defaulted from the model, is its context (the tiny stand-in's 128 positions).
        window = AutoConfig.from_pretrained(tiny_gpt2).n_positions
        assert f"|model:skt/kogpt2-base-v2|dtype:float32|window:{window}|" in used
        summary, _, _, used = client.predict(CANDIDATE, "", "pseudo", api_name="/surprisal")
        assert summary["model"] == "klue/bert-base" and "(the default for pseudo mode)" in used


def test_playground_names_and_uses_the_default_layer(stand_ins, shallow_bert, tiny_gpt2, monkeypatch):
    monkeypatch.delenv("KOMETRICS_BERT_MODEL", raising=False)
    monkeypatch.delenv("KOMETRICS_LM_MODEL", raising=False)
    with stand_in_models(stand_ins), serve_app(PLAYGROUND) as (app, client):
        assert app.DEFAULT_BERT_MODEL == "klue/bert-base"
        for model, depth_default in (("klue/bert-base", 8), (shallow_bert, 2), ("", 8)):
            named = _hinted_layer(client.predict(model, api_name="/korbertscore_layer_default"))
            assert named == depth_default
            _, summary = client.predict(CANDIDATE, REFERENCE, model, "", api_name="/korbertscore_alignment")
            shown = model or "klue/bert-base"
            assert (f"with `{shown}`{'' if model else ' (the default model)'} at layer {named} "
                    "(the default layer of this model).") in summary
            assert f"**F1** = {_expected(shown, named)['f1'][0]:.4f}" in summary
        # Layer 0 is a layer (it used to mean "default").
        _, summary = client.predict(CANDIDATE, REFERENCE, shallow_bert, "0", api_name="/korbertscore_alignment")
        assert "at layer 0." in summary and f"**F1** = {_expected(shallow_bert, 0)['f1'][0]:.4f}" in summary
        # Perplexity: an empty model box is the default causal LM, named with the signature of the numbers.
        _, _, summary = client.predict(app.EXAMPLE_TEXT, "", api_name="/perplexity_surprisal")
        assert "(model `skt/kogpt2-base-v2`, the default model)" in summary
        assert "|model:skt/kogpt2-base-v2|" in summary and "window:" in summary
        _, _, summary = client.predict(app.EXAMPLE_TEXT, tiny_gpt2, api_name="/perplexity_surprisal")
        assert f"(model `{tiny_gpt2}`)" in summary
