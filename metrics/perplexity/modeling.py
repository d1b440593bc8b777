"""The model side of perplexity: load once, tokenize per batch, window, batch, and sum log-likelihoods.

Two scorers, both returning per-text sums of negative log-likelihood (nats) and the number of scored tokens:

- :func:`causal_nll` for causal LMs: NLL = -sum_t ln P(w_t | w_<t), texts longer than the context scored with a
  sliding window (each token once, with at least ``window - stride`` tokens of context);
- :func:`pseudo_nll` for masked LMs (Salazar et al., 2020): PLL = sum_t ln P(w_t | W without w_t), one masked
  copy per token, all copies batched; ``variant="word_l2r"`` also masks the later pieces of the same word
  (Kauf & Ivanova, 2023).

Texts are sorted by length (longest first, so memory problems show at once) and tokenized one batch at a
time: memory depends on ``batch_size`` and the window, never on the number of texts.
"""

from __future__ import annotations

import inspect
import math
import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = [
    "TextScore",
    "load_model",
    "clear_model_cache",
    "resolve_device",
    "resolve_dtype",
    "context_length",
    "start_token_id",
    "sliding_windows",
    "causal_nll",
    "pseudo_nll",
    "special_template",
]

_MODELS: dict[tuple[str, str, str, str], tuple[Any, Any]] = {}
_CE_CHUNK = 2048  # positions per float32 log-softmax


@dataclass
class TextScore:
    """What a scorer returns for one text: the NLL sum (nats) and the number of scored tokens; with
    ``return_tokens=True`` also each scored token's id, NLL (nats) and character span in the text."""

    nll_sum: float = 0.0
    token_count: int = 0
    token_ids: list[int] = field(default_factory=list)
    token_nlls: list[float] = field(default_factory=list)
    offsets: list[tuple[int, int] | None] = field(default_factory=list)


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None``: CUDA if available, else CPU. ``"gpu"`` is an alias of ``"cuda"`` (as in evaluate)."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if isinstance(device, str) and device == "gpu":
        device = "cuda"
    return torch.device(device)


_DTYPES = {"float32": torch.float32, "fp32": torch.float32, "float16": torch.float16, "fp16": torch.float16,
           "half": torch.float16, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
           "float64": torch.float64}


def resolve_dtype(dtype: str | torch.dtype | None) -> torch.dtype:
    """``None`` means float32 (reproducible scores); strings such as ``"bfloat16"`` are accepted."""
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, str) and dtype.replace("torch.", "") in _DTYPES:
        return _DTYPES[dtype.replace("torch.", "")]
    raise ValueError(f"dtype must be one of {sorted(_DTYPES)} or a torch.dtype, got {dtype!r}")


def load_model(model_id: str, kind: str = "causal", device: str | torch.device | None = None,
               dtype: str | torch.dtype | None = None) -> tuple[Any, Any]:
    """``(model, tokenizer)`` for ``model_id`` (Hub id or local path), loaded once per
    (model, kind, device, dtype) and reused by every later call. ``kind`` is ``"causal"`` or ``"masked"``."""
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    if isinstance(model_id, os.PathLike):
        model_id = os.fspath(model_id)
    if not isinstance(model_id, str) or not model_id:
        raise TypeError(f"model_id must be a Hub id or a local path (a non-empty string or a path), got "
                        f"{model_id!r}")
    if kind not in ("causal", "masked"):
        raise ValueError(f"kind must be 'causal' or 'masked', got {kind!r}")
    dev, dt = resolve_device(device), resolve_dtype(dtype)
    key = (model_id, kind, str(dev), str(dt))
    if key not in _MODELS:
        auto = AutoModelForCausalLM if kind == "causal" else AutoModelForMaskedLM
        model = auto.from_pretrained(model_id, dtype=dt).to(dev).eval()
        tokenizer = AutoTokenizer.from_pretrained(model_id)
        _MODELS[key] = (model, tokenizer)
    return _MODELS[key]


def clear_model_cache() -> None:
    """Forget every loaded model (frees memory)."""
    _MODELS.clear()


def context_length(model: Any, tokenizer: Any | None = None) -> int:
    """The number of positions the model can attend to (GPT-2's ``n_positions``, BERT's
    ``max_position_embeddings`` ...), bounded by the tokenizer's ``model_max_length`` when that is set."""
    cfg = model.config
    candidates = [getattr(cfg, name, None) for name in ("n_positions", "max_position_embeddings", "n_ctx",
                                                         "max_sequence_length", "seq_length")]
    lengths = [int(c) for c in candidates if isinstance(c, int) and c > 0]
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < 1_000_000:
        lengths.append(tok_max)
    if not lengths:
        raise ValueError("cannot tell the model's context length from its config; pass max_length")
    n = min(lengths)
    if getattr(cfg, "model_type", "") in ("roberta", "xlm-roberta", "camembert") and n == cfg.max_position_embeddings:
        n -= 2  # RoBERTa-style position ids start after the padding index
    return n


def start_token_id(model: Any, tokenizer: Any) -> int | None:
    """The id prepended by ``add_start_token``: the tokenizer's BOS, else the config's BOS, else EOS (GPT-2 style
    models use ``<|endoftext|>`` for both), else ``None`` (the model has nothing to start with)."""
    for value in (tokenizer.bos_token_id, getattr(model.config, "bos_token_id", None), tokenizer.eos_token_id):
        if isinstance(value, int):
            return value
    return None


def sliding_windows(length: int, window: int, stride: int) -> list[tuple[int, int, int]]:
    """Windows ``(begin, end, first_target)`` over a sequence of ``length`` ids so that every position
    1..length-1 is a target exactly once, as in the transformers guide "Perplexity of fixed-length models".

    Window k ends at ``min(k * stride + window, length)`` and starts ``window`` earlier (not before 0); it
    scores the positions the previous window did not reach, ``first_target .. end - 1``, each predicted from
    at least ``window - stride`` earlier ids (the last window starts early enough to be full). A sequence that
    fits is one window: the full-context score.
    """
    if window < 2:
        raise ValueError(f"the window must hold at least 2 tokens, got {window}")
    if not 1 <= stride < window:
        raise ValueError(f"stride must be between 1 and max_length - 1 = {window - 1}, got {stride}")
    if length <= window:
        return [(0, length, 1)]
    out, prev_end, k = [], 1, 0
    while prev_end < length:
        end = min(k * stride + window, length)
        begin = max(0, end - window)
        out.append((begin, end, prev_end))
        prev_end, k = end, k + 1
    return out


def _length_order(texts: Sequence[str]) -> list[int]:
    """Indices longest first (ties in input order): neighbours in a batch have similar lengths."""
    return sorted(range(len(texts)), key=lambda i: -len(texts[i]))


def _chunks(items: Sequence[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(items), size):
        yield list(items[start:start + size])


@dataclass
class _Row:
    text: int  # index of the text
    ids: list[int]  # the model input
    targets: list[int]  # positions in ids whose (original) token is scored
    labels: list[int]  # the original token at each target
    token_index: list[int]  # index of each target among the text's scored tokens (for per-token output)
    predict_from: str = "previous"  # causal: logits at position-1; masked: logits at the position


def _accepts(model: Any, name: str) -> bool:
    try:
        return name in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return False


def _forward_rows(model: Any, rows: list[_Row], pad_id: int, padding_side: str,
                  device: torch.device) -> torch.Tensor:
    """Run one padded batch; return the NLL (nats, float32) of every target, rows concatenated in order."""
    width = max(len(r.ids) for r in rows)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    row_idx, pos_idx, labels = [], [], []
    for b, r in enumerate(rows):
        off = width - len(r.ids) if padding_side == "left" else 0
        input_ids[b, off:off + len(r.ids)] = torch.tensor(r.ids, dtype=torch.long)
        mask[b, off:off + len(r.ids)] = 1
        shift = 1 if r.predict_from == "previous" else 0
        row_idx += [b] * len(r.targets)
        pos_idx += [off + t - shift for t in r.targets]
        labels += r.labels
    kwargs: dict[str, Any] = {"input_ids": input_ids.to(device), "attention_mask": mask.to(device)}
    if rows[0].predict_from == "previous":
        if _accepts(model, "position_ids"):
            # Positions count real tokens only, so left padding gives the same positions as right padding.
            kwargs["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0).to(device)
        if _accepts(model, "use_cache"):
            kwargs["use_cache"] = False
    rows_t = torch.tensor(row_idx, device=device)
    pos_t = torch.tensor(pos_idx, device=device)
    labels_t = torch.tensor(labels, device=device)
    with torch.inference_mode():
        logits = model(**kwargs).logits
        # float32 log-softmax over the vocabulary, a few thousand positions at a time: with a large vocabulary
        # a float32 copy of every position's logits would cost more memory than the forward pass
        nll = torch.cat([
            torch.nn.functional.cross_entropy(logits[rows_t[k:k + _CE_CHUNK], pos_t[k:k + _CE_CHUNK]].float(),
                                              labels_t[k:k + _CE_CHUNK], reduction="none")
            for k in range(0, len(labels), _CE_CHUNK)])
    return nll.cpu()


def _run_rows(model: Any, rows: Iterable[_Row], n_texts: int, batch_size: int, pad_id: int, padding_side: str,
              device: torch.device, return_tokens: bool, n_tokens: dict[int, int],
              progress: Callable[[int], None] | None = None) -> list[TextScore]:
    """Batch rows (longest first within what is pending), accumulate NLL per text in float64."""
    scores = [TextScore() for _ in range(n_texts)]
    per_token: dict[int, list[float]] = {}
    pending: list[_Row] = []

    def flush(batch: list[_Row]) -> None:
        nll = _forward_rows(model, batch, pad_id, padding_side, device).tolist()
        k = 0
        for r in batch:
            vals = nll[k:k + len(r.targets)]
            k += len(r.targets)
            s = scores[r.text]
            s.nll_sum += math.fsum(vals)
            s.token_count += len(vals)
            if return_tokens:
                slots = per_token.setdefault(r.text, [math.nan] * n_tokens[r.text])
                for j, v in zip(r.token_index, vals):
                    slots[j] = v
        if progress is not None:
            progress(len(batch))

    for row in rows:
        pending.append(row)
        if len(pending) >= 4 * batch_size:
            pending.sort(key=lambda r: -len(r.ids))
            flush(pending[:batch_size])
            pending = pending[batch_size:]
    pending.sort(key=lambda r: -len(r.ids))
    for start in range(0, len(pending), batch_size):
        flush(pending[start:start + batch_size])
    if return_tokens:
        for i, vals in per_token.items():
            scores[i].token_nlls = vals
    return scores


def _pad_id(tokenizer: Any) -> int:
    """Any id works for padding (padded positions are masked and never scored): the pad token if there is
    one, else EOS, else 0. Tokenizers without a pad token (GPT-2) therefore need no change."""
    for value in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if isinstance(value, int):
            return value
    return 0


def _padding_side(tokenizer: Any, padding_side: str | None) -> str:
    side = padding_side or getattr(tokenizer, "padding_side", "right") or "right"
    if side not in ("left", "right"):
        raise ValueError(f"padding_side must be 'left' or 'right', got {side!r}")
    return side


def _encode(tokenizer: Any, texts: list[str], add_special_tokens: bool, offsets: bool) -> Any:
    # verbose=False: the "longer than the maximum sequence length" warning does not apply, windows follow
    kwargs: dict[str, Any] = {"add_special_tokens": add_special_tokens, "verbose": False}
    if offsets and getattr(tokenizer, "is_fast", False):
        kwargs["return_offsets_mapping"] = True
    return tokenizer(texts, **kwargs)


def causal_nll(texts: Sequence[str], model: Any, tokenizer: Any, *, batch_size: int = 16,
               add_start_token: bool = True, max_length: int | None = None, stride: int | None = None,
               padding_side: str | None = None, device: str | torch.device | None = None,
               return_tokens: bool = False, on_empty: str = "error",
               progress: Callable[[int], None] | None = None) -> list[TextScore]:
    """Per-text NLL sums (nats) and scored-token counts under a causal LM.

    Each text is tokenized without special tokens; with ``add_start_token`` the start id of
    :func:`start_token_id` is prepended so that the first token is scored too (without it, or when the model
    has no start token, the first token is context only and a text of one token scores nothing). Sequences
    longer than ``max_length`` (default: the model's context) are scored with :func:`sliding_windows`; windows
    of all texts of a batch are batched together, ``batch_size`` rows per forward pass.

    ``on_empty``: what to do with a text that leaves nothing to score: ``"error"`` (ValueError naming the
    index) or ``"nan"`` (zero tokens; the caller reports NaN).
    """
    device = next(model.parameters()).device if device is None else resolve_device(device)
    window = context_length(model, tokenizer) if max_length is None else int(max_length)
    if max_length is not None and window > context_length(model, tokenizer):
        raise ValueError(f"max_length={window} exceeds the model's context of {context_length(model, tokenizer)}")
    stride = window // 2 if stride is None else int(stride)
    sliding_windows(window + 1, window, stride)  # validates window and stride before any work
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    start = start_token_id(model, tokenizer) if add_start_token else None
    if add_start_token and start is None:
        warnings.warn("add_start_token=True but the model has no BOS or EOS token: the first token of each text "
                      "is used as context and not scored", stacklevel=2)
    side = _padding_side(tokenizer, padding_side)
    n_tokens: dict[int, int] = {}
    token_info: dict[int, tuple[list[int], list]] = {}

    def rows() -> Iterator[_Row]:
        for chunk in _chunks(_length_order(texts), batch_size):
            enc = _encode(tokenizer, [texts[i] for i in chunk], add_special_tokens=False, offsets=return_tokens)
            for j, i in enumerate(chunk):
                ids = list(enc["input_ids"][j])
                offs = list(enc["offset_mapping"][j]) if "offset_mapping" in enc else [None] * len(ids)
                if start is not None:
                    ids, offs = [start, *ids], [None, *offs]
                n_tokens[i] = max(len(ids) - 1, 0)
                if n_tokens[i] == 0:
                    if on_empty == "error":
                        raise ValueError(
                            f"predictions[{i}] tokenizes to {len(ids)} token(s) and leaves nothing to score "
                            f"(add_start_token={add_start_token}); pass a longer text, use add_start_token=True, "
                            'or set empty="nan"')
                    continue
                if return_tokens:
                    token_info[i] = (ids[1:], [tuple(o) if o is not None else None for o in offs[1:]])
                for begin, end, first in sliding_windows(len(ids), window, stride):
                    targets = list(range(first - begin, end - begin))
                    yield _Row(i, ids[begin:end], targets, ids[first:end], list(range(first - 1, end - 1)))

    scores = _run_rows(model, rows(), len(texts), batch_size, _pad_id(tokenizer), side, device, return_tokens,
                       n_tokens, progress)
    if return_tokens:
        for i, (ids, offs) in token_info.items():
            scores[i].token_ids, scores[i].offsets = ids, offs
    return scores


def special_template(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The special ids the tokenizer puts before and after a single text (BERT: ``[CLS]`` and ``[SEP]``),
    found by encoding a probe with and without special tokens."""
    probe = "a"
    bare = list(tokenizer(probe, add_special_tokens=False)["input_ids"])
    full = list(tokenizer(probe, add_special_tokens=True)["input_ids"])
    for k in range(len(full) - len(bare) + 1):
        if full[k:k + len(bare)] == bare:
            return full[:k], full[k + len(bare):]
    raise ValueError("cannot tell where the tokenizer puts its special tokens")


def pseudo_nll(texts: Sequence[str], model: Any, tokenizer: Any, *, batch_size: int = 16,
               max_length: int | None = None, variant: str = "original", device: str | torch.device | None = None,
               return_tokens: bool = False, on_empty: str = "error",
               progress: Callable[[int], None] | None = None) -> list[TextScore]:
    """Per-text negative pseudo-log-likelihood (nats) under a masked LM and the number of scored tokens.

    PLL(W) = sum_t ln P(w_t | W with w_t masked) over the text's tokens, special tokens ([CLS], [SEP], ...; not [UNK], which stands for text)
    never masked nor scored (Salazar et al., 2020). ``variant="word_l2r"`` (Kauf & Ivanova, 2023) masks, with
    w_t, the later pieces of the same word (``word_ids`` of a fast tokenizer), so a multi-piece word is not
    scored from its own continuation. Texts longer than the window (default: the model's context) are scored
    with, for each token, the window of that many tokens centred on it.
    """
    if variant not in ("original", "word_l2r"):
        raise ValueError(f"pll_variant must be 'original' or 'word_l2r', got {variant!r}")
    if tokenizer.mask_token_id is None:
        raise ValueError("mode='pseudo' needs a masked LM whose tokenizer has a mask token")
    if variant == "word_l2r" and not getattr(tokenizer, "is_fast", False):
        raise ValueError("pll_variant='word_l2r' needs a fast tokenizer (word_ids)")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    device = next(model.parameters()).device if device is None else resolve_device(device)
    window = context_length(model, tokenizer) if max_length is None else int(max_length)
    if window > context_length(model, tokenizer):
        raise ValueError(f"max_length={window} exceeds the model's context of {context_length(model, tokenizer)}")
    prefix, suffix = special_template(tokenizer)
    capacity = window - len(prefix) - len(suffix)
    if capacity < 1:
        raise ValueError(f"max_length={window} leaves no room for text besides the special tokens")
    # [CLS], [SEP], [PAD], [MASK] ... are never masked nor scored; [UNK] stands for text and is scored.
    special = set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}
    n_tokens: dict[int, int] = {}
    token_info: dict[int, tuple[list[int], list]] = {}
    mask_id = tokenizer.mask_token_id

    def rows() -> Iterator[_Row]:
        for chunk in _chunks(_length_order(texts), batch_size):
            enc = _encode(tokenizer, [texts[i] for i in chunk], add_special_tokens=False,
                          offsets=return_tokens)
            for j, i in enumerate(chunk):
                content = list(enc["input_ids"][j])
                words = enc.word_ids(j) if variant == "word_l2r" else [None] * len(content)
                offs = list(enc["offset_mapping"][j]) if "offset_mapping" in enc else [None] * len(content)
                scored = [k for k, t in enumerate(content) if t not in special]
                n_tokens[i] = len(scored)
                if not scored:
                    if on_empty == "error":
                        raise ValueError(f"predictions[{i}] tokenizes to no maskable token; pass a text with "
                                         'words in it or set empty="nan"')
                    continue
                if return_tokens:
                    token_info[i] = ([content[k] for k in scored],
                                     [tuple(offs[k]) if offs[k] is not None else None for k in scored])
                for n, k in enumerate(scored):
                    a = min(max(k - capacity // 2, 0), max(len(content) - capacity, 0))
                    piece = content[a:a + capacity]
                    masked = list(piece)
                    masked[k - a] = mask_id
                    if variant == "word_l2r" and words[k] is not None:
                        for m in range(k + 1, a + len(piece)):
                            if words[m] == words[k] and content[m] not in special:
                                masked[m - a] = mask_id
                    yield _Row(i, prefix + masked + suffix, [len(prefix) + k - a], [content[k]], [n],
                               predict_from="self")

    # Right padding always: absolute position ids of BERT-like models then need no care.
    scores = _run_rows(model, rows(), len(texts), batch_size, _pad_id(tokenizer), "right", device,
                       return_tokens, n_tokens, progress)
    if return_tokens:
        for i, (ids, offs) in token_info.items():
            scores[i].token_ids, scores[i].offsets = ids, offs
    return scores
