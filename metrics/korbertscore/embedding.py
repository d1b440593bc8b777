"""The model side of KorBERTScore: load an encoder once, tokenize, batch, and embed word pieces.

Layer ``L`` is what the encoder returns when only its first ``L`` blocks run: its ``last_hidden_state``
with the block list cut to ``L`` (``0`` = the embedding layer, ``depth`` = the whole model). This is
bert_score's ``num_layers`` for every architecture. For encoders without a final normalisation (BERT,
RoBERTa, ELECTRA, DistilBERT, DeBERTa ...) it is exactly ``hidden_states[L]``. For models that normalise
after their last block (GPT-2's ``ln_f``, Llama/Gemma/Mistral/Qwen's ``norm``, T5's ``final_layer_norm``,
mBART's ``layer_norm``) it is ``final_norm(hidden_states[L])``: transformers applies that norm to the last
entry of ``hidden_states`` only, so raw ``hidden_states[L]`` below the last block would be a different
representation from the one scored at ``num_layers=L``.

One layer: only the first ``L`` blocks run (the block list is cut for the duration of the forward pass). Several
layers: one forward pass up to the deepest requested layer ``top`` returns them all; layer ``top`` is the
pass's ``last_hidden_state`` and every lower layer is ``hidden_states[L]`` passed through the model's final
norm. When a model is loaded, one probe sentence checks that this equals the cut pass at layer 1; if it does
not (an architecture whose post-block module is not known here), sweeps run one cut pass per layer instead, so
single-layer and multi-layer scores agree for every model.

Sentences are deduplicated, sorted by token length and embedded in batches of ``batch_size`` sequences, so
padding is minimal. Texts longer than the model's position limit are embedded in overlapping windows
(each word piece is taken from the window in which it sits farthest from an edge), truncated with a
warning, or rejected, as the caller asks.
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from .model_setup import (
    PREPARED_MARKER,
    PREPARED_SOURCES,
    max_positions,
    prepared_source,
    resolve_device,
    resolve_dtype,
    special_template,
)

__all__ = [
    "DEFAULT_MODEL",
    "KNOWN_LAYERS",
    "PREPARED_MARKER",
    "PREPARED_SOURCES",
    "known_model",
    "FINAL_NORMS",
    "Encoder",
    "Embedded",
    "load_encoder",
    "clear_cache",
    "default_layer",
    "default_num_layers",
    "tokenize",
    "embed",
]

#: Default Hub model (Korean BERT-base from the KLUE benchmark). Untested here: the Hub is unreachable offline.
DEFAULT_MODEL = "klue/bert-base"

#: Default layer per model. Sources: "paper" = Hyeon & Choi (2019)'s 8 of 12 (best for ETRI KorBERT, Table 3),
#: transferred by depth and NOT measured on that model; "bert_score" = bert_score 0.3.13's table, tuned on
#: English WMT16; "measured" = chosen here from ``kometrics korbertscore layers`` on Korean dev splits (never a
#: test split). Run ``kometrics korbertscore layers`` to measure a model on KLUE-STS / KorSTS.
KNOWN_LAYERS: dict[str, tuple[int, str]] = {
    "klue/bert-base": (8, "paper"),
    "klue/roberta-small": (4, "paper"),
    "klue/roberta-base": (8, "paper"),
    "klue/roberta-large": (16, "paper"),
    "monologg/kobert": (8, "paper"),
    "monologg/koelectra-base-v3-discriminator": (8, "paper"),
    "beomi/kcbert-base": (8, "paper"),
    "beomi/kcbert-large": (16, "paper"),
    "snunlp/KR-BERT-char16424": (8, "paper"),
    "bert-base-multilingual-cased": (9, "bert_score"),
    "google-bert/bert-base-multilingual-cased": (9, "bert_score"),
    "distilbert-base-multilingual-cased": (5, "bert_score"),
    "xlm-roberta-base": (9, "bert_score"),
    "FacebookAI/xlm-roberta-base": (9, "bert_score"),
    "xlm-roberta-large": (17, "bert_score"),
    "FacebookAI/xlm-roberta-large": (17, "bert_score"),
    "microsoft/mdeberta-v3-base": (10, "bert_score"),
    # Measured 2026-11-30 with `kometrics korbertscore layers` (idf off; layer L as defined above, final norm
    # included) on the prepared Gemma-3-270M (PyPI Q4_K_M GGUF dequantised to float32; PREPARED_SOURCES):
    # layer 13 has the best F1 Pearson on both dev splits, KLUE-STS v1.1 dev (519 pairs, mean rater z-score:
    # 0.649) and KorSTS dev (1,500 pairs: 0.675). No test split was used.
    "google/gemma-3-270m": (13, "measured"),
}

_SOURCE_TEXT = {"paper": "the paper's 8 of 12 by depth, not measured on this model",
                "bert_score": "bert_score's table (English WMT16)",
                "measured": "measured on KLUE-STS dev and KorSTS dev (see the card)"}


def known_model(model_type: str | os.PathLike | None) -> str | None:
    """The :data:`KNOWN_LAYERS` name of ``model_type``: the name itself when listed, the model a prepared folder
    was made from (its :data:`PREPARED_MARKER` names a source in :data:`PREPARED_SOURCES`), else ``None``."""
    if model_type is None:
        return None
    name = str(model_type).rstrip("/")
    if name in KNOWN_LAYERS:
        return name
    prepared = prepared_source(name)
    return prepared[0] if prepared and prepared[0] in KNOWN_LAYERS else None


@dataclass
class Encoder:
    """A loaded model and tokenizer with what KorBERTScore needs to know about them."""

    name: str
    model: Any
    tokenizer: Any
    device: torch.device
    dtype: torch.dtype
    depth: int  # number of encoder blocks
    max_length: int  # longest sequence (special tokens included) the model accepts
    prefix: list[int]  # special ids before the text, e.g. [CLS]
    suffix: list[int]  # special ids after the text, e.g. [SEP]
    zero_weight_ids: frozenset[int]  # ids weighted 0 without idf (bert_score: [CLS] and [SEP])
    pad_id: int
    _layers_owner: Any = field(default=None, repr=False)
    _layers_attr: str | None = field(default=None, repr=False)
    #: the module the model applies after its last block (``None``: nothing, e.g. BERT), applied in sweeps to
    #: every layer below the deepest one run
    final_norm: Any = field(default=None, repr=False)
    #: whether several layers come from one forward pass (else one cut pass per layer; see the module docstring)
    one_pass_sweep: bool = True


_CACHE: dict[tuple[str, str, str], Encoder] = {}
_MODEL_LOCK = threading.RLock()


def clear_cache() -> None:
    """Forget every loaded model (they are otherwise kept for the life of the process)."""
    _CACHE.clear()


def _block_list(model: Any) -> tuple[Any, str] | tuple[None, None]:
    """The module holding the encoder's list of blocks and the attribute name (BERT, RoBERTa, ELECTRA,
    DistilBERT, T5/BART encoders, XLNet, Llama/Gemma/Mistral, GPT-2)."""
    for owner_path, attr in (("encoder", "layer"), ("transformer", "layer"), ("encoder", "block"),
                             ("", "layers"), ("", "layer"), ("", "block"), ("", "h")):
        owner = model
        if owner_path:
            owner = getattr(model, owner_path, None)
        if owner is not None and isinstance(getattr(owner, attr, None), torch.nn.ModuleList):
            return owner, attr
    return None, None


def load_encoder(model_type: str, device: str | torch.device | None = None,
                 dtype: str | torch.dtype | None = None) -> Encoder:
    """Load ``model_type`` (Hub id or local folder) once per (model, device, dtype) and reuse it."""
    dev = resolve_device(device)
    dt = resolve_dtype(dtype)
    key = (str(model_type), str(dev), str(dt))
    if key in _CACHE:
        return _CACHE[key]
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    tokenizer = AutoTokenizer.from_pretrained(model_type)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the "newly initialized pooler" report is expected for MLM checkpoints
    try:
        model = AutoModel.from_pretrained(model_type, dtype=dt)
    finally:
        hf_logging.set_verbosity(verbosity)
    if hasattr(model, "get_encoder") and hasattr(model, "decoder"):
        model = model.get_encoder()
    if getattr(model, "pooler", None) is not None:
        model.pooler = None  # never used for token embeddings
    model.eval().to(dev)
    config = model.config
    owner, attr = _block_list(model)
    depth = len(getattr(owner, attr)) if owner is not None else int(config.num_hidden_layers)
    limit = max_positions(config, tokenizer) or 512
    prefix, suffix = special_template(tokenizer)
    zero = {i for i in (tokenizer.cls_token_id, tokenizer.sep_token_id) if i is not None}
    pad = tokenizer.pad_token_id
    if pad is None:
        pad = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
    enc = Encoder(name=str(model_type), model=model, tokenizer=tokenizer, device=dev, dtype=dt, depth=depth,
                  max_length=int(limit), prefix=prefix, suffix=suffix, zero_weight_ids=frozenset(zero),
                  pad_id=int(pad), _layers_owner=owner, _layers_attr=attr)
    enc.final_norm, enc.one_pass_sweep = _final_module(enc)
    if not enc.one_pass_sweep:
        warnings.warn(f"{model_type}: the module applied after the last block is none of {FINAL_NORMS}; layer "
                      "sweeps run one forward pass per layer (same numbers as num_layers=L, slower)",
                      UserWarning, stacklevel=2)
    _CACHE[key] = enc
    return enc


def _scaled_layer(depth: int) -> int:
    """The paper's 8 of 12 transferred to a model of ``depth`` blocks."""
    return max(0, min(depth, round(depth * 8 / 12)))


def default_layer(model_type: str | None = None, device: str | torch.device | None = None,
                  dtype: str | torch.dtype | None = None) -> tuple[int, str]:
    """The layer that ``score`` uses for ``model_type`` when ``num_layers`` is not given, and why, e.g.
    ``(8, "the paper's 8 of 12 by depth")``, without a warning. A model outside :data:`KNOWN_LAYERS` is
    loaded (once, as ``score`` would load it) to read its depth. For interfaces that name the default."""
    known = known_model(model_type or DEFAULT_MODEL)
    if known is not None:
        layer, source = KNOWN_LAYERS[known]
        why = _SOURCE_TEXT[source]
        return layer, why if known == str(model_type or DEFAULT_MODEL).rstrip("/") else f"{known}: {why}"
    depth = load_encoder(model_type or DEFAULT_MODEL, device=device, dtype=dtype).depth
    return _scaled_layer(depth), f"the paper's 8 of 12 scaled to its {depth} layers"


#: Attributes of the loaded (base) model that may hold the module applied after its last block: Llama, Gemma,
#: Mistral, Qwen ``norm``; GPT-2, BLOOM, GPT-J ``ln_f``; T5 encoder ``final_layer_norm``; (m)BART encoder
#: ``layer_norm``; Phi ``final_layernorm``; RoBERTa-PreLayerNorm ``LayerNorm``.
FINAL_NORMS = ("norm", "ln_f", "final_layer_norm", "layer_norm", "final_layernorm", "LayerNorm")


def _final_module(encoder: Encoder) -> tuple[Any, bool]:
    """``(final module or None, one_pass_sweep)``: the module (among :data:`FINAL_NORMS`, or none) that turns
    ``hidden_states[k]`` of a deeper pass into the output of the pass cut to ``k`` blocks, checked on one probe
    sentence (``k = 1``, or 0 for a one-block model). ``(None, False)`` when no candidate reproduces it."""
    if encoder._layers_owner is None:
        return None, True  # nothing can be cut: layer L is hidden_states[L] on every path
    model = encoder.model
    k = 1 if encoder.depth >= 2 else 0
    pieces = encoder.tokenizer("가 나", add_special_tokens=False, verbose=False)["input_ids"]
    ids = torch.tensor([encoder.prefix + list(pieces) + encoder.suffix], device=encoder.device)
    mask = torch.ones_like(ids)
    with torch.inference_mode():
        # The whole model first: transformers 5 installs its hidden-state hooks on the blocks present at the first
        # call with output_hidden_states, so that call must see every block.
        with _MODEL_LOCK:
            below = model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states[k]
        with _first_blocks(encoder, k):
            cut = model(input_ids=ids, attention_mask=mask).last_hidden_state.float()
        candidates = [None] + [m for m in (getattr(model, name, None) for name in FINAL_NORMS)
                               if isinstance(m, torch.nn.Module)]
        for module in candidates:
            got = (below if module is None else module(below)).float()
            if got.shape == cut.shape and torch.allclose(got, cut, rtol=1e-3, atol=1e-4 * float(cut.abs().max())):
                return module, True
    return None, False


def default_num_layers(model_type: str, depth: int) -> int:
    """The documented layer of ``model_type`` (by name, or of the model a prepared folder was made from, see
    :func:`known_model`); else ``round(depth * 8 / 12)`` (the paper's 8 of 12) with a warning that names
    ``num_layers``."""
    known = known_model(model_type)
    if known is not None:
        return KNOWN_LAYERS[known][0]
    layer = _scaled_layer(depth)
    warnings.warn(f"no known default layer for {model_type!r}; using layer {layer} of {depth} (the paper's 8 of "
                  f"12 scaled to depth). Pass num_layers=... to choose one (`kometrics korbertscore layers` "
                  "measures them).", UserWarning, stacklevel=3)
    return layer



def tokenize(encoder: Encoder, sentences: Sequence[str]) -> list[list[int]]:
    """Word-piece ids of each stripped sentence, without special tokens and without truncation."""
    texts = [s.strip() for s in sentences]
    if not texts:
        return []
    ids = encoder.tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]
    return [list(x) if t else [] for x, t in zip(ids, texts)]


@dataclass
class Embedded:
    """Embeddings of unique sentences packed along one token axis.

    ``packed`` is ``[total_tokens, d]`` (one layer) or ``[total_tokens, n_layers, d]``, L2-normalised,
    float32, on the encoder's device; sentence ``i`` occupies ``offsets[i] : offsets[i] + lengths[i]``, special
    tokens included. ``ids`` are the matching token ids (for weights and plots).
    """

    packed: torch.Tensor
    offsets: torch.Tensor
    lengths: torch.Tensor
    ids: list[list[int]]
    n_prefix: int
    n_suffix: int


@contextlib.contextmanager
def _first_blocks(encoder: Encoder, n: int) -> Iterator[None]:
    """Run only the first ``n`` encoder blocks inside the context."""
    owner, attr = encoder._layers_owner, encoder._layers_attr
    with _MODEL_LOCK:  # the cached model is shared: one cut at a time (e.g. concurrent Space requests)
        if owner is None or n >= encoder.depth:
            yield
            return
        full = getattr(owner, attr)
        setattr(owner, attr, torch.nn.ModuleList(list(full)[:n]))
        try:
            yield
        finally:
            setattr(owner, attr, full)


def _at_layer(encoder: Encoder, out: Any, layer: int, top: int) -> torch.Tensor:
    """Layer ``layer`` (module docstring) from the output of a pass that ran the first ``top`` blocks."""
    if encoder._layers_owner is None:
        return out.hidden_states[layer]
    if layer == top:
        return out.last_hidden_state
    state = out.hidden_states[layer]
    return state if encoder.final_norm is None else encoder.final_norm(state)


def _windows(n: int, size: int) -> list[int]:
    """Start offsets of windows of ``size`` covering ``n`` pieces with stride ``size // 2``."""
    stride = max(1, size // 2)
    starts = list(range(0, max(1, n - size + 1), stride))
    if starts[-1] + size < n:
        starts.append(n - size)
    return starts


def _batches(lengths: np.ndarray, order: np.ndarray, batch_size: int) -> Iterator[np.ndarray]:
    """Batches of unit indices in ``order`` (longest first), at most ``batch_size`` each, cut where the length
    changes once a batch holds a quarter of ``batch_size``, so most batches need no padding at all."""
    start = 0
    sorted_len = lengths[order]
    min_fill = max(1, batch_size // 4)
    while start < len(order):
        stop = min(start + batch_size, len(order))
        # first position in [start + min_fill, stop) whose length differs from the batch's first
        cut = np.flatnonzero(sorted_len[start + min_fill:stop] != sorted_len[start])
        if len(cut):
            stop = start + min_fill + int(cut[0])
        yield order[start:stop]
        start = stop


def embed(encoder: Encoder, content: Sequence[Sequence[int]], layers: Sequence[int], batch_size: int = 64,
          long_text: str = "window", max_length: int | None = None, names: Sequence[str] | None = None
          ) -> Embedded:
    """Embed sentences given as word-piece ids (no special tokens) at ``layers``.

    Each sentence becomes ``prefix + pieces + suffix``. Pieces beyond ``max_length`` (default: the model's
    limit) are handled by ``long_text``: ``"window"`` (overlapping windows), ``"truncate"`` (warning) or
    ``"error"`` (``ValueError`` naming ``names[i]``).
    """
    limit = encoder.max_length if max_length is None else int(max_length)
    n_pre, n_suf = len(encoder.prefix), len(encoder.suffix)
    room = limit - n_pre - n_suf
    if room < 1:
        raise ValueError(f"max_length={limit} leaves no room for text after {n_pre + n_suf} special tokens")
    # Units: (sentence index, window start, ids) sequences actually given to the model.
    units: list[tuple[int, int, list[int]]] = []
    truncated: list[str] = []
    for i, pieces in enumerate(content):
        if len(pieces) <= room:
            units.append((i, 0, list(pieces)))
            continue
        where = names[i] if names is not None else f"text {i}"
        if long_text == "error":
            raise ValueError(f"{where} has {len(pieces)} word pieces, more than the {room} that fit in "
                             f"max_length={limit}; pass long_text='window' or 'truncate'")
        if long_text == "truncate":
            truncated.append(where)
            units.append((i, 0, list(pieces[:room])))
            continue
        for start in _windows(len(pieces), room):
            units.append((i, start, list(pieces[start:start + room])))
    if truncated:
        warnings.warn(f"{len(truncated)} text(s) longer than max_length={limit} were truncated: "
                      f"{', '.join(truncated[:5])}{' ...' if len(truncated) > 5 else ''}; "
                      "pass long_text='window' to embed them whole", UserWarning, stacklevel=3)
    layers = list(layers)
    top = max(layers)
    if min(layers) < 0 or top > encoder.depth:
        raise ValueError(f"layers must lie in 0..{encoder.depth}, got {layers}")
    if len(layers) > 1 and not encoder.one_pass_sweep:  # unknown final module: one cut pass per layer
        parts = [embed(encoder, content, [layer], batch_size=batch_size, long_text=long_text,
                       max_length=max_length, names=names) for layer in layers]
        first = parts[0]
        return Embedded(packed=torch.stack([p.packed for p in parts], dim=1), offsets=first.offsets,
                        lengths=first.lengths, ids=first.ids, n_prefix=first.n_prefix, n_suffix=first.n_suffix)
    full = [np.asarray(encoder.prefix + unit[2] + encoder.suffix, dtype=np.int64) for unit in units]
    full_len = np.fromiter((len(x) for x in full), dtype=np.int64, count=len(full))
    order = np.argsort(-full_len, kind="stable")  # longest first, so each batch pads little
    unit_start = np.zeros(len(units), dtype=np.int64)  # row of each unit's first token in `packed`
    chunks: list[torch.Tensor] = []
    cursor = 0
    model, dev = encoder.model, encoder.device
    single = len(layers) == 1
    with torch.inference_mode(), _first_blocks(encoder, top):
        for chunk in _batches(full_len, order, batch_size):
            lens = full_len[chunk]
            starts = np.zeros(len(chunk), dtype=np.int64)
            starts[1:] = np.cumsum(lens)[:-1]
            rows = np.repeat(np.arange(len(chunk)), lens)
            cols = np.arange(int(lens.sum())) - np.repeat(starts, lens)
            ids_np = np.full((len(chunk), int(lens.max())), encoder.pad_id, dtype=np.int64)
            ids_np[rows, cols] = np.concatenate([full[u] for u in chunk])
            mask_np = np.zeros(ids_np.shape, dtype=np.int64)
            mask_np[rows, cols] = 1
            ids, mask = torch.from_numpy(ids_np).to(dev), torch.from_numpy(mask_np).to(dev)

            def call(ids=ids, mask=mask):
                if single and encoder._layers_owner is not None:  # blocks cut to `top`: the output is layer top
                    return model(input_ids=ids, attention_mask=mask).last_hidden_state
                out = model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
                if encoder._layers_owner is not None and len(out.hidden_states) != top + 1:
                    raise RuntimeError(f"{encoder.name} returned {len(out.hidden_states)} hidden states after "
                                       f"{top} blocks; expected {top + 1}")
                states = [_at_layer(encoder, out, layer, top) for layer in layers]
                return states[0] if single else torch.stack(states, dim=2)

            hidden = call()
            hidden = hidden[mask.bool()].float()  # real tokens only, unit after unit
            chunks.append(hidden / hidden.norm(dim=-1, keepdim=True))
            unit_start[chunk] = cursor + starts
            cursor += int(lens.sum())
    packed = torch.cat(chunks, dim=0) if chunks else torch.zeros((0, 1) if single else (0, len(layers), 1))
    # Sentences: one unit -> its rows; windows -> rows gathered (each piece from the window where it is
    # farthest from an edge), appended after the units.
    n_units = np.zeros(len(content), dtype=np.int64)
    first_unit = np.zeros(len(content), dtype=np.int64)
    for u in range(len(units) - 1, -1, -1):
        n_units[units[u][0]] += 1
        first_unit[units[u][0]] = u
    offsets = unit_start[first_unit].copy()
    lengths = full_len[first_unit].copy()
    extra: list[torch.Tensor] = []
    all_ids: list[list[int]] = [list(full[first_unit[i]]) for i in range(len(content))]
    for i in np.flatnonzero(n_units > 1):
        us = list(range(first_unit[i], first_unit[i] + n_units[i]))
        n = len(content[i])
        starts_w = np.array([units[u][1] for u in us])
        pos = np.arange(n)
        rel = pos[:, None] - starts_w[None, :]
        margin = np.where((rel >= 0) & (rel < room), np.minimum(rel, room - 1 - rel), -1)
        best = margin.argmax(axis=1)
        idx = np.concatenate([unit_start[us[0]] + np.arange(n_pre),
                              unit_start[np.array(us)][best] + n_pre + pos - starts_w[best],
                              unit_start[us[-1]] + n_pre + len(units[us[-1]][2]) + np.arange(n_suf)])
        offsets[i] = cursor
        lengths[i] = len(idx)
        cursor += len(idx)
        extra.append(packed[torch.from_numpy(idx).to(packed.device)])
        all_ids[i] = encoder.prefix + list(content[i]) + encoder.suffix
    if extra:
        packed = torch.cat([packed, *extra], dim=0)
    offsets_t = torch.from_numpy(offsets)
    lengths_t = torch.from_numpy(lengths)
    return Embedded(packed=packed, offsets=offsets_t.to(dev), lengths=lengths_t.to(dev), ids=all_ids,
                    n_prefix=n_pre, n_suffix=n_suf)
