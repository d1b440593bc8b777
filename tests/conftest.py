"""Shared fixtures: offline mode, the real Korean data, and tiny models built once per session.

Everything runs without the network: the Hub is switched off before any Hugging Face library is imported,
and models are built here with random weights and vocabularies trained on the Korean data.
"""

from __future__ import annotations

import os

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_EVALUATE_OFFLINE"):
    os.environ[_var] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import contextlib  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
METRICS_DIR = REPO / "metrics"


def metric_names() -> list[str]:
    """Metric folders: metrics/<name>/ with a <name>.py module."""
    return sorted(p.name for p in METRICS_DIR.iterdir() if (p / f"{p.name}.py").is_file())


@pytest.fixture(scope="session")
def data_dir() -> Path:
    from kometrics.datasets_scripts.readers import default_data_dir

    path = Path(os.environ.get("KOMETRICS_DATA", REPO.parent / "shared" / "data"))
    if not (path / "klue").is_dir():
        path = default_data_dir()
    return path


@pytest.fixture(scope="session")
def korean_texts(data_dir) -> list[str]:
    from kometrics.datasets_scripts.readers import iter_korean_text

    return list(iter_korean_text(data_dir))


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory, korean_texts) -> str:
    """A cased WordPiece BERT (12 layers of width 64, random weights) saved as BertForMaskedLM."""
    from kometrics.models.tiny import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("tiny-bert"), korean_texts)


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory, korean_texts) -> str:
    """A byte-level BPE GPT-2 (2 layers of width 64, random weights); its tokenizer has no pad token."""
    from kometrics.models.tiny import build_tiny_gpt2

    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"), korean_texts)


@pytest.fixture(scope="session")
def doctest_globals(tiny_bert, tiny_gpt2) -> dict:
    """Names the metrics' docstring examples may use for local models (the docs say so)."""
    return {"tiny_bert": tiny_bert, "tiny_mlm": tiny_bert, "tiny_gpt2": tiny_gpt2}


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load_app(path: Path, name: str | None = None):
    """Import a Space's ``app.py`` (which builds ``demo`` without launching it) as a fresh module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name or f"_app_{path.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def serve_app(path: Path) -> Iterator[tuple[object, object]]:
    """Launch a Space's ``demo`` on 127.0.0.1 and yield ``(app_module, gradio_client.Client)``; close after."""
    from gradio_client import Client

    app = load_app(path)
    port = free_port()
    app.demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=port, quiet=True)
    try:
        yield app, Client(f"http://127.0.0.1:{port}/", verbose=False)
    finally:
        app.demo.close()
