"""evaluate's own module test, ``LocalModuleTest.test_load`` of huggingface/evaluate, over every metric folder,
and every metric card's examples run verbatim (issue 16).

test_load, as evaluate runs it: import the module through ``evaluation_module_factory("metrics/<name>",
module_type="metric")``, check that ``_compute`` takes no ``**kwargs``, and run the doctests with
``doctest.testmod(module, raise_on_error=True)`` and ``doctest.ELLIPSIS_MARKER = "[...]"``, inside the
model-loader patch (the Hub ids of the examples load tiny local stand-ins) and with ``evaluate.load`` on the
local folders. At least two examples run and none fails.
"""

from __future__ import annotations

import doctest

import pytest

from .conftest import METRICS_DIR, REPO, metric_names
from .evaluate_harness import card_examples, module_test_load, run_card, stand_in_models

NAMES = metric_names()


def test_every_metric_folder_is_checked():
    assert {"klue_sts", "korbertscore", "perplexity", "merge_sv_accuracy", "lmre"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_load(name, stand_ins):
    results = module_test_load(name, REPO, stand_ins)
    assert results.failed == 0 and results.attempted >= 2


@pytest.mark.parametrize("name", NAMES)
def test_examples_name_hub_models_not_test_fixtures(name):
    """The examples a user copies name models a user has: no test-only names such as tiny_bert."""
    for path in (METRICS_DIR / name / f"{name}.py", METRICS_DIR / name / "README.md"):
        text = path.read_text(encoding="utf-8")
        for fixture in ("tiny_bert", "tiny_gpt2", "tiny_mlm"):
            assert fixture not in text, f"{path.relative_to(REPO)} names the test model {fixture}"


@pytest.mark.parametrize("name", NAMES)
def test_card_examples_run_verbatim(name, stand_ins):
    """Every ``>>>`` example of the card runs as written from the checkout root (the usage blocks that call
    ``evaluate.load`` are all doctest blocks, so none escapes)."""
    card = METRICS_DIR / name / "README.md"
    source, untested = card_examples(card.read_text(encoding="utf-8"))
    assert not untested, f"{name}: python blocks calling evaluate.load that are not doctest blocks:\n{untested}"
    results = run_card(card, REPO, stand_ins)
    assert results.failed == 0 and results.attempted >= 2, results


def test_model_patch_redirects_only_inside_and_is_seen_through_evaluate(stand_ins, tiny_bert):
    """The patch reaches a module that evaluate imported under its dynamic name, reports the Hub id, and
    leaves nothing behind: outside it the id is not resolvable offline and no cache keeps the stand-in."""
    import evaluate
    from transformers import AutoConfig

    from .evaluate_harness import evaluate_ellipsis

    metric = evaluate.load(str(METRICS_DIR / "korbertscore"))
    with stand_in_models(stand_ins):
        assert AutoConfig.from_pretrained("klue/bert-base").hidden_size == AutoConfig.from_pretrained(
            tiny_bert).hidden_size
        result = metric.compute(predictions=["가나다"], references=["가나다"], model_type="klue/bert-base")
        assert result["hashcode"].startswith("klue/bert-base_L8_")
    with pytest.raises(OSError):
        AutoConfig.from_pretrained("klue/bert-base")
    with pytest.raises(OSError):
        metric.compute(predictions=["가나다"], references=["가나다"], model_type="klue/bert-base")
    before = doctest.ELLIPSIS_MARKER
    with evaluate_ellipsis():
        assert doctest.ELLIPSIS_MARKER == "[...]"
    assert doctest.ELLIPSIS_MARKER == before


@pytest.mark.slow
@pytest.mark.real_model
@pytest.mark.parametrize("name", ["korbertscore", "perplexity"])
def test_examples_hold_for_a_real_model(name, stand_ins, gemma):
    """The printed values of the model examples are not artefacts of the tiny random models: they hold with
    Gemma-3-270M standing in for the ids where it is the right kind of model (an encoder for KorBERTScore, a
    causal LM for perplexity; pseudo mode keeps the tiny masked LM, Gemma is not one)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    real = {**stand_ins, ("klue/bert-base" if name == "korbertscore" else "skt/kogpt2-base-v2"): gemma}
    try:
        results = module_test_load(name, REPO, real)
        card = run_card(METRICS_DIR / name / "README.md", REPO, real)
    finally:
        torch.set_num_threads(threads)
    assert results.failed == 0 and card.failed == 0 and card.attempted >= 2
