"""korbertscore and perplexity accept the same device and dtype spellings (one copy of ``model_setup.py`` in
each folder, byte-identical), and both really load their model where and how they were told."""

from __future__ import annotations

import importlib
import warnings

import pytest
import torch

from .conftest import METRICS_DIR

FOLDERS = ("korbertscore", "perplexity")

DTYPE_SPELLINGS = [
    (None, torch.float32), ("float32", torch.float32), ("fp32", torch.float32), ("FP32", torch.float32),
    ("torch.float32", torch.float32), ("float64", torch.float64), ("double", torch.float64),
    ("bf16", torch.bfloat16), ("bfloat16", torch.bfloat16), ("fp16", torch.float16), ("half", torch.float16),
    ("torch.float16", torch.float16), (torch.float16, torch.float16), (torch.bfloat16, torch.bfloat16),
]
CPU_SPELLINGS = [None, "auto", "cpu", "CPU", " cpu ", torch.device("cpu")]


def _setup(folder: str):
    return importlib.import_module(f"kometrics.{folder}.model_setup")


def test_the_copies_are_identical():
    files = [(METRICS_DIR / f / "model_setup.py").read_bytes() for f in FOLDERS]
    assert files[0] == files[1], "metrics/*/model_setup.py differ: edit one and copy it to the other folder"


def test_each_evaluate_module_imports_its_copy():
    """evaluate.load copies only the siblings the module file imports itself."""
    for folder in FOLDERS:
        text = (METRICS_DIR / folder / f"{folder}.py").read_text(encoding="utf-8")
        assert "\nfrom .model_setup import " in text, folder


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("spelling, expected", DTYPE_SPELLINGS, ids=str)
def test_dtype_spellings(folder, spelling, expected):
    assert _setup(folder).resolve_dtype(spelling) == expected


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("bad", ["float8", "int8", "fp", "", torch.int64, 16])
def test_bad_dtype_is_refused(folder, bad):
    with pytest.raises(ValueError, match="dtype"):
        _setup(folder).resolve_dtype(bad)


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("spelling, expected", [
    ("cuda", "cuda"), ("cuda:1", "cuda:1"), ("gpu", "cuda"), ("GPU:1", "cuda:1"), (1, "cuda:1"), ("auto", "cuda"),
    (None, "cuda"), (torch.device("cuda", 0), "cuda:0"), ("cpu", "cpu"), ("mps", "mps"),
])
def test_device_spellings_with_cuda(folder, spelling, expected, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert _setup(folder).resolve_device(spelling) == torch.device(expected)


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("spelling", ["cuda", "gpu", "cuda:1", 0])
def test_cuda_without_cuda_says_so(folder, spelling, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="CUDA is not available"):
        _setup(folder).resolve_device(spelling)
    assert _setup(folder).resolve_device("auto") == torch.device("cpu")


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("bad, error", [("tpu", ValueError), ("cuda:x", ValueError), ("", ValueError),
                                        (-1, TypeError), (1.5, TypeError)])
def test_bad_device_is_refused(folder, bad, error):
    with pytest.raises(error, match="device"):
        _setup(folder).resolve_device(bad)


def _load(folder: str, model: str, device, dtype):
    """The loaded model of each metric: (its parameters' device, dtype)."""
    if folder == "korbertscore":
        from kometrics.korbertscore import load_encoder

        enc = load_encoder(model, device=device, dtype=dtype)
        param = next(enc.model.parameters())
    else:
        from kometrics.perplexity import load_model

        param = next(load_model(model, "causal", device=device, dtype=dtype)[0].parameters())
    return param.device, param.dtype


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("spelling, expected", DTYPE_SPELLINGS, ids=str)
def test_each_metric_loads_its_model_in_the_dtype(folder, spelling, expected, tiny_bert, tiny_gpt2):
    device, dtype = _load(folder, tiny_bert if folder == "korbertscore" else tiny_gpt2, "cpu", spelling)
    assert device == torch.device("cpu") and dtype == expected


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("spelling", CPU_SPELLINGS, ids=str)
def test_each_metric_loads_its_model_on_the_device(folder, spelling, tiny_bert, tiny_gpt2, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    device, _ = _load(folder, tiny_bert if folder == "korbertscore" else tiny_gpt2, spelling, None)
    assert device == torch.device("cpu")


def test_provenance_names_the_dtype_not_its_spelling(tiny_bert, tiny_gpt2):
    from kometrics.korbertscore import score as kbs
    from kometrics.perplexity import score as ppl

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        codes = {kbs(["오늘은 맑다."], ["오늘 맑음"], model_type=tiny_bert, num_layers=2, dtype=d, device="cpu")["hashcode"]
                 for d in ("fp64", "float64", torch.float64, "torch.float64")}
        sigs = {ppl(["오늘은 맑다."], tiny_gpt2, dtype=d, device="cpu")["signature"]
                for d in ("bf16", "bfloat16", torch.bfloat16)}
    assert len(codes) == 1 and next(iter(codes)).endswith("_float64")
    assert len(sigs) == 1 and "dtype:bfloat16" in next(iter(sigs))


@pytest.mark.parametrize("folder", FOLDERS)
def test_special_template_and_positions(folder, tiny_bert, tiny_gpt2):
    from transformers import AutoConfig, AutoTokenizer

    setup = _setup(folder)
    bert = AutoTokenizer.from_pretrained(tiny_bert)
    assert setup.special_template(bert) == ([bert.cls_token_id], [bert.sep_token_id])
    assert setup.special_template(AutoTokenizer.from_pretrained(tiny_gpt2)) == ([], [])
    cfg = AutoConfig.from_pretrained(tiny_bert)
    assert setup.max_positions(cfg) == cfg.max_position_embeddings
    # The RoBERTa family loses two positions to the padding offset; a tokenizer limit caps the rest.
    for model_type in setup.OFFSET_POSITION_MODEL_TYPES:
        cfg.model_type = model_type
        assert setup.max_positions(cfg) == cfg.max_position_embeddings - 2
    cfg.model_type = "bert"

    class Tok:
        model_max_length = 7

    assert setup.max_positions(cfg, Tok()) == 7
    Tok.model_max_length = int(1e30)  # "no limit"
    assert setup.max_positions(cfg, Tok()) == cfg.max_position_embeddings
    assert setup.max_positions(object()) is None
