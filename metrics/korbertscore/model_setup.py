"""Device, dtype and the facts about a model and its tokenizer that the model-based metrics need.

The same file sits in ``metrics/korbertscore/`` and ``metrics/perplexity/`` (each folder ships alone as a
Space, so each carries its copy); ``tests/test_model_setup.py`` checks that the copies are byte-identical and
that both metrics accept the same spellings.
"""

from __future__ import annotations

import json
import os
from typing import Any

import torch

__all__ = ["DTYPES", "OFFSET_POSITION_MODEL_TYPES", "PREPARED_MARKER", "PREPARED_SOURCES", "resolve_device",
           "resolve_dtype", "dtype_name", "special_template", "max_positions", "prepared_source", "model_tag"]

#: Accepted dtype spellings (case-insensitive; a ``torch.`` prefix is allowed, e.g. ``"torch.float16"``).
DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32, "fp32": torch.float32, "float": torch.float32,
    "float64": torch.float64, "fp64": torch.float64, "double": torch.float64,
    "float16": torch.float16, "fp16": torch.float16, "half": torch.float16,
    "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
}
_DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu")
#: Model types whose position ids start after the padding index (the RoBERTa family): two of their
#: ``max_position_embeddings`` positions can never hold a token.
OFFSET_POSITION_MODEL_TYPES = frozenset({"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "longformer",
                                         "data2vec-text", "xmod", "roberta-prelayernorm"})
#: The marker file that ``kometrics models prepare`` writes last into a prepared folder
#: (``kometrics.models.gemma.MARKER``; a metric folder cannot import kometrics, hence the copy).
PREPARED_MARKER = "kometrics-model.json"
#: Prepared folders taken for a known model: the sha256 of the source their marker names -> the model. A folder
#: without the marker, e.g. a fine-tune saved with ``save_pretrained``, is not taken for the model it came from.
PREPARED_SOURCES: dict[str, str] = {
    "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818": "google/gemma-3-270m",
}
_NO_LIMIT = 1_000_000  # tokenizers without a length limit report a huge model_max_length


def resolve_device(device: str | int | torch.device | None) -> torch.device:
    """A ``torch.device`` from ``None`` or ``"auto"`` (CUDA when available, else the CPU), ``"cpu"``, ``"cuda"``,
    ``"cuda:1"``, ``"gpu"`` / ``"gpu:1"`` (aliases of cuda, as in evaluate), ``"mps"``, a CUDA index (``1``) or a
    ``torch.device``. Asking for CUDA where there is none is a ``ValueError`` that says so."""
    if device is None or (isinstance(device, str) and device.strip().lower() == "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if isinstance(device, torch.device):
        out = device
    elif isinstance(device, int) and not isinstance(device, bool) and device >= 0:
        out = torch.device("cuda", device)
    elif isinstance(device, str):
        spec = device.strip().lower()
        if spec == "gpu" or spec.startswith("gpu:"):
            spec = "cuda" + spec[3:]
        kind, _, index = spec.partition(":")
        if kind not in _DEVICE_TYPES or (index and not index.isdigit()):
            raise ValueError(f"device must be 'auto', 'cpu', 'cuda', 'cuda:N', 'gpu', 'gpu:N', 'mps', a CUDA index "
                             f"or a torch.device, got {device!r}")
        out = torch.device(spec)
    else:
        raise TypeError(f"device must be a string, a CUDA index or a torch.device, got {type(device).__name__}")
    if out.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} asks for CUDA, but CUDA is not available here; pass device='cpu' "
                         "(or leave it unset to use a GPU when there is one)")
    return out


def resolve_dtype(dtype: str | torch.dtype | None) -> torch.dtype:
    """``None`` means float32 (reproducible scores); a floating ``torch.dtype`` or a name of :data:`DTYPES`."""
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        if not dtype.is_floating_point:
            raise ValueError(f"dtype must be a floating-point type, got {dtype}")
        return dtype
    if isinstance(dtype, str):
        name = dtype.strip().lower()
        name = name[len("torch."):] if name.startswith("torch.") else name
        if name in DTYPES:
            return DTYPES[name]
    raise ValueError(f"dtype must be one of {sorted(DTYPES)} (a 'torch.' prefix is allowed) or a torch.dtype, "
                     f"got {dtype!r}")


def dtype_name(dtype: str | torch.dtype | None) -> str:
    """The canonical name of a dtype spelling (``"fp16"`` and ``torch.float16`` both give ``"float16"``)."""
    return str(resolve_dtype(dtype)).replace("torch.", "")


def special_template(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The special ids the tokenizer puts before and after a single text (BERT: ``[CLS]`` and ``[SEP]``),
    found by encoding a probe with and without special tokens."""
    probe = "가 나"
    bare = list(tokenizer(probe, add_special_tokens=False, verbose=False)["input_ids"])
    full = list(tokenizer(probe, add_special_tokens=True, verbose=False)["input_ids"])
    for k in range(len(full) - len(bare) + 1):
        if full[k:k + len(bare)] == bare:
            return full[:k], full[k + len(bare):]
    raise ValueError("cannot tell where the tokenizer puts its special tokens: the text's tokens differ with and "
                     "without them")


def max_positions(config: Any, tokenizer: Any | None = None) -> int | None:
    """The longest sequence (special tokens included) the model accepts: the smallest of the config's position
    sizes (``n_positions``, ``max_position_embeddings``, ``n_ctx``, ...; two fewer for the RoBERTa family) and
    the tokenizer's ``model_max_length`` when it sets one. ``None`` when neither says."""
    offset = 2 if getattr(config, "model_type", "") in OFFSET_POSITION_MODEL_TYPES else 0
    sizes = [getattr(config, name, None) for name in ("n_positions", "max_position_embeddings", "n_ctx",
                                                      "max_sequence_length", "seq_length")]
    lengths = [int(s) - offset for s in sizes if isinstance(s, int) and not isinstance(s, bool) and s > offset]
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < _NO_LIMIT:
        lengths.append(tok_max)
    return min(lengths) if lengths else None


def prepared_source(model: str | os.PathLike | None) -> tuple[str, str] | None:
    """``(model name, source sha256)`` of a folder that ``kometrics models prepare`` made from a source listed in
    :data:`PREPARED_SOURCES` (read from its :data:`PREPARED_MARKER`); ``None`` for anything else."""
    if model is None:
        return None
    try:
        with open(os.path.join(os.path.expanduser(str(model).rstrip("/")), PREPARED_MARKER), encoding="utf-8") as f:
            marker = json.load(f)
    except (OSError, ValueError):
        return None
    sha = marker.get("sha256") if isinstance(marker, dict) else None
    return (PREPARED_SOURCES[sha], sha) if sha in PREPARED_SOURCES else None


def model_tag(model: str | os.PathLike) -> str:
    """How a signature names ``model``: a prepared folder as ``<model>@prepared:<first 8 hex digits of its
    source sha256>`` (the same on every machine, and not the Hub weights), anything else as given."""
    prepared = prepared_source(model)
    return f"{prepared[0]}@prepared:{prepared[1][:8]}" if prepared else str(model)
