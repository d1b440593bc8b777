"""The model side of perplexity: load once, tokenize per batch, window, batch, and sum log-likelihoods.

Two scorers, both returning per-text sums of negative log-likelihood (nats) and the number of scored tokens:

- :func:`causal_nll` for causal LMs: NLL = -sum_t ln P(w_t | w_<t), texts longer than the context scored with a
  sliding window (each token once, with at least ``window - stride`` tokens of context);
- :func:`pseudo_nll` for masked LMs (Salazar et al., 2020): PLL = sum_t ln P(w_t | W without w_t), one masked
  copy per token, all copies batched; ``variant="word_l2r"`` also masks the later pieces of the same word
  (Kauf & Ivanova, 2023).

Texts are sorted by length (longest first, so memory problems show at once) and tokenized one batch at a
time; a forward pass holds at most ``batch_size`` rows and ``max_tokens`` padded tokens. The LM head is
applied to the scored positions only, a bounded number at a time, each chunk's log-softmax taken before the
next (:func:`head_plan`), so memory depends on the token budget and the window, never on the number of texts
nor on batch x length x vocabulary. Models whose logits are not a plain linear layer of their hidden states
(soft-capping, scaling, custom heads) fall back to their own logits, a few rows at a time.
"""

from __future__ import annotations

import inspect
import math
import os
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from .model_setup import max_positions, resolve_device, resolve_dtype, special_template

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
    "head_plan",
    "HeadPlan",
    "DEFAULT_MAX_TOKENS",
    "check_budget",
]

_MODELS: dict[tuple[str, str, str, str], tuple[Any, Any]] = {}


@dataclass
class TextScore:
    """What a scorer returns for one text: the NLL sum (nats) and the number of scored tokens; with
    ``return_tokens=True`` also each scored token's id, NLL (nats) and character span in the text."""

    nll_sum: float = 0.0
    token_count: int = 0
    token_ids: list[int] = field(default_factory=list)
    token_nlls: list[float] = field(default_factory=list)
    offsets: list[tuple[int, int] | None] = field(default_factory=list)


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
        if kind == "causal":
            from transformers import AutoConfig

            _refuse_masked(AutoConfig.from_pretrained(model_id), model_id)
        auto = AutoModelForCausalLM if kind == "causal" else AutoModelForMaskedLM
        model = auto.from_pretrained(model_id, dtype=dt).to(dev).eval()
        if kind == "causal":
            _refuse_future_context(model, model_id)
        tokenizer = AutoTokenizer.from_pretrained(model_id)
        _MODELS[key] = (model, tokenizer)
    return _MODELS[key]


_MASKED_HEADS = ("ForMaskedLM", "ForPreTraining", "ForMaskedImageModeling")
_USE_PSEUDO = ('causal perplexity needs a causal LM (each token predicted from the earlier ones only); for a '
               'masked LM use mode="pseudo" (pseudo-perplexity)')


def _refuse_masked(config: Any, model_id: str) -> None:
    """Refuse a checkpoint made as a masked LM (BERT, RoBERTa ...) in causal mode, from its config."""
    masked = [a for a in (getattr(config, "architectures", None) or []) if a.endswith(_MASKED_HEADS)]
    if masked and not getattr(config, "is_decoder", False):
        raise ValueError(f"{model_id!r} is a masked LM ({masked[0]}): {_USE_PSEUDO}")
    if getattr(config, "is_encoder_decoder", False):
        raise ValueError(f"{model_id!r} is an encoder-decoder model: {_USE_PSEUDO}")


@torch.no_grad()
def _refuse_future_context(model: Any, model_id: str) -> None:
    """Refuse a model whose prediction at a position changes with a later token (bidirectional attention):
    two inputs that differ only in their last token must give the same logits before it."""
    vocab = int(getattr(model.config, "vocab_size", 0) or model.get_output_embeddings().weight.shape[0])
    if vocab < 6:  # pragma: no cover - nothing sensible to probe with
        return
    device = next(model.parameters()).device
    a = torch.tensor([[1, 2, 3, 4]], device=device)
    b = torch.tensor([[1, 2, 3, 5]], device=device)
    la = model(input_ids=a, attention_mask=torch.ones_like(a)).logits[0, :3].float()
    lb = model(input_ids=b, attention_mask=torch.ones_like(b)).logits[0, :3].float()
    tol = 1e-3 * (1.0 + float(la.abs().max()))
    if float((la - lb).abs().max()) > tol:
        raise ValueError(f"{model_id!r} ({type(model).__name__}) is not a causal LM: its prediction for a token "
                         f"changes with later tokens, so the future would leak into the score; {_USE_PSEUDO}")


def clear_model_cache() -> None:
    """Forget every loaded model (frees memory)."""
    _MODELS.clear()


def context_length(model: Any, tokenizer: Any | None = None) -> int:
    """The number of positions the model can attend to (GPT-2's ``n_positions``, BERT's
    ``max_position_embeddings`` ...), bounded by the tokenizer's ``model_max_length`` when that is set."""
    n = max_positions(model.config, tokenizer)
    if n is None:
        raise ValueError("cannot tell the model's context length from its config; pass max_length")
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


# --- the LM head: log-probabilities without a (batch x length x vocabulary) tensor ---------------------------

#: Logit elements (positions x vocabulary) per float32 log-softmax: 2**25 floats = 128 MiB, i.e. 128
#: positions at a time for a 262,144-piece vocabulary, 16,384 for a 2,048-piece one.
_LOGIT_ELEMENTS = 2**25
#: Default token budget of a forward pass: rows x padded width (see ``max_tokens``).
DEFAULT_MAX_TOKENS = 8192
#: Config fields of transformers models that change the logits after the output layer (Gemma 2/3 soft-capping,
#: Cohere's logit_scale, Granite's logits_scaling, ...). A scale of 1 changes nothing.
_SOFTCAPS = ("final_logit_softcapping", "output_logit_soft_cap")
_SCALES = ("logit_scale", "logits_scaling", "output_multiplier")
_PROBE_TOKENS = 16


@dataclass(frozen=True)
class HeadPlan:
    """How the scorers get log-probabilities from ``model``.

    ``head`` set: the model's logits are ``head(h)`` for the hidden states ``h`` it feeds its output layer,
    so the base model runs once per batch and ``head`` is applied to the scored (real, never padding)
    positions only, a few at a time: memory does not grow with batch x length x vocabulary.
    ``head`` None: the logits cannot be reproduced from the output layer (``reason`` says why); the model's
    own logits are used, computed for as few rows per forward pass as keep them within a bounded size.
    """

    head: Any | None
    reason: str
    dtype: Any = None

    @property
    def fast(self) -> bool:
        return self.head is not None


class _StopBeforeHead(Exception):
    """Raised by the capture hook: the output layer's input is all that is needed."""


_PLANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _logit_transforms(model: Any) -> list[str]:
    """Config fields that say the model transforms its logits after the output layer."""
    configs = [model.config]
    try:
        configs.append(model.config.get_text_config())
    except AttributeError:  # pragma: no cover
        pass
    found = []
    for cfg in configs:
        for name in _SOFTCAPS:
            if getattr(cfg, name, None) is not None:
                found.append(f"{name}={getattr(cfg, name)}")
        for name in _SCALES:
            value = getattr(cfg, name, None)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value != 1:
                found.append(f"{name}={value}")
    return sorted(set(found))


def _head_input(args: tuple, kwargs: dict) -> Any:
    return args[0] if args else next(iter(kwargs.values()), None)


def _probe(model: Any, head: Any, ids: Sequence[int]) -> str | None:
    """Run ``model`` on ``ids`` and check that its logits are ``head`` applied to what it feeds ``head``;
    ``None`` if they are, else why not."""
    seen: list[Any] = []

    def hook(module: Any, args: tuple, kwargs: dict) -> None:
        seen.append(_head_input(args, kwargs))

    device = next(model.parameters()).device
    inputs = torch.tensor([list(ids)], dtype=torch.long, device=device)
    handle = head.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        logits = model(input_ids=inputs, attention_mask=torch.ones_like(inputs)).logits
    finally:
        handle.remove()
    if len(seen) != 1 or not isinstance(seen[0], torch.Tensor):
        return f"its output layer ran {len(seen)} time(s) in a forward pass, not once on the hidden states"
    hidden = seen[0]
    if hidden.shape[:-1] != logits.shape[:-1] or logits.shape[-1] != head.out_features:
        return (f"its logits {tuple(logits.shape)} are not the output layer's {tuple(hidden.shape[:-1])} x "
                f"{head.out_features}")
    mine = head(hidden).float()
    theirs = logits.float()
    eps = torch.finfo(logits.dtype).eps if logits.dtype.is_floating_point else 0.0
    tol = max(1e-4, 16 * eps) * max(1.0, theirs.abs().max().item())
    gap = (mine - theirs).abs().max().item()
    if not gap <= tol:
        return f"its logits differ from its output layer's by up to {gap:.3g} (not a plain linear head)"
    return None


def head_plan(model: Any, probe_ids: Sequence[int] | None = None) -> HeadPlan:
    """Decide (once per model and dtype) whether scores may apply the output layer to chunks of positions.

    The fast path needs, in this order: an output layer (``get_output_embeddings()``) that is a
    ``torch.nn.Linear``; no config field that transforms the logits after it (soft-capping, logit scales);
    and, on ``probe_ids`` (a few ids of the first text; default: the first ids of the vocabulary), the
    model's own logits equal to that layer applied to its input. Anything else (a custom head, an unknown
    architecture that rescales or slices its logits) falls back to the model's own logits.
    """
    dtype = next(model.parameters()).dtype
    cached = _PLANS.get(model)
    if cached is not None and cached.dtype == dtype:
        return cached
    try:
        head = model.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        head = None
    if head is None:
        plan = HeadPlan(None, "the model has no output embedding layer (get_output_embeddings)", dtype)
    elif not isinstance(head, torch.nn.Linear):
        plan = HeadPlan(None, f"its output layer is a {type(head).__name__}, not a linear layer", dtype)
    elif transforms := _logit_transforms(model):
        plan = HeadPlan(None, f"its config transforms the logits after the output layer ({', '.join(transforms)})",
                        dtype)
    else:
        ids = list(probe_ids or range(min(_PROBE_TOKENS, head.out_features)))[:_PROBE_TOKENS]
        with torch.inference_mode():
            reason = _probe(model, head, ids)
        plan = HeadPlan(head if reason is None else None, reason or "logits = output layer(hidden states)", dtype)
    if plan.head is None:
        warnings.warn(f"{type(model).__name__}: {plan.reason}; scoring with the model's own logits, a few rows "
                      "per forward pass (slower, memory grows with the window times the vocabulary)", stacklevel=3)
    _PLANS[model] = plan
    return plan


def _vocab_size(model: Any) -> int:
    for cfg in (model.config, getattr(model.config, "get_text_config", lambda: None)()):
        value = getattr(cfg, "vocab_size", None)
        if isinstance(value, int) and value > 0:
            return value
    return 1 << 30  # unknown: one row per forward pass


def _nll(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Float32 cross-entropy of each row of ``logits`` (positions x vocabulary) against ``labels``."""
    return torch.nn.functional.cross_entropy(logits.float(), labels.to(logits.device), reduction="none")


def _hidden_states(model: Any, head: Any, kwargs: dict[str, Any]) -> torch.Tensor:
    """What ``model`` feeds its output layer ``head`` (batch x length x hidden); the layer itself never runs."""
    seen: list[Any] = []

    def hook(module: Any, args: tuple, hook_kwargs: dict) -> None:
        seen.append(_head_input(args, hook_kwargs))
        raise _StopBeforeHead

    handle = head.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        model(**kwargs)
    except _StopBeforeHead:
        pass
    finally:
        handle.remove()
    if not seen:  # pragma: no cover - the probe checked that the layer runs
        raise RuntimeError(f"{type(model).__name__} did not call its output layer")
    return seen[0]


def _forward_rows(model: Any, rows: list[_Row], pad_id: int, padding_side: str,
                  device: torch.device) -> torch.Tensor:
    """Run one padded batch; return the NLL (nats, float32) of every target, rows concatenated in order.

    Fast path (:func:`head_plan`): the base model runs once, the hidden states of the targets (real tokens
    only) are gathered and the output layer is applied to ``_LOGIT_ELEMENTS // vocabulary`` of them at a time,
    each chunk's log-softmax taken before the next. Fallback: the model's own logits for as many rows at a time
    as keep rows x width x vocabulary within ``_LOGIT_ELEMENTS`` (at least one row).
    """
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
    inputs: dict[str, torch.Tensor] = {"input_ids": input_ids, "attention_mask": mask}
    flags: dict[str, Any] = {}
    if rows[0].predict_from == "previous":
        if _accepts(model, "position_ids"):
            # Positions count real tokens only, so left padding gives the same positions as right padding.
            inputs["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0)
        if _accepts(model, "use_cache"):
            flags["use_cache"] = False
    rows_t = torch.tensor(row_idx, dtype=torch.long)
    pos_t = torch.tensor(pos_idx, dtype=torch.long)
    labels_t = torch.tensor(labels, dtype=torch.long)
    with torch.inference_mode():
        plan = head_plan(model, probe_ids=rows[0].ids)
        if plan.fast:
            hidden = _hidden_states(model, plan.head, {**{k: v.to(device) for k, v in inputs.items()}, **flags})
            picked = hidden[rows_t.to(hidden.device), pos_t.to(hidden.device)]  # targets only, never padding
            del hidden
            step = max(1, _LOGIT_ELEMENTS // int(plan.head.out_features))
            nll = torch.cat([_nll(plan.head(picked[k:k + step]), labels_t[k:k + step])
                             for k in range(0, len(labels), step)])
        else:
            per_forward = max(1, _LOGIT_ELEMENTS // (width * _vocab_size(model)))
            parts, first = [], 0
            for a in range(0, len(rows), per_forward):
                sub = {k: v[a:a + per_forward].to(device) for k, v in inputs.items()}
                logits = model(**sub, **flags).logits
                n = sum(len(r.targets) for r in rows[a:a + per_forward])
                r_t, p_t = rows_t[first:first + n] - a, pos_t[first:first + n]
                step = max(1, _LOGIT_ELEMENTS // logits.shape[-1])
                parts += [_nll(logits[r_t[k:k + step].to(logits.device), p_t[k:k + step].to(logits.device)],
                               labels_t[first + k:first + min(k + step, n)]).cpu() for k in range(0, n, step)]
                first += n
                del logits
            nll = torch.cat(parts)
    return nll.cpu()


def _take(pending: list[_Row], batch_size: int, max_tokens: int) -> int:
    """How many rows of ``pending`` (sorted longest first) make the next batch: at most ``batch_size`` rows and
    ``max_tokens`` padded tokens (rows x the first row's length; one row always goes), and no row shorter than
    half that length (it would be mostly padding; it starts a later, narrower batch)."""
    width = len(pending[0].ids)
    n = 1
    while (n < len(pending) and n < batch_size and (n + 1) * width <= max_tokens
           and 2 * len(pending[n].ids) > width):
        n += 1
    return n


def _run_rows(model: Any, rows: Iterable[_Row], n_texts: int, batch_size: int, pad_id: int, padding_side: str,
              device: torch.device, return_tokens: bool, n_tokens: dict[int, int],
              progress: Callable[[int], None] | None = None, max_tokens: int = DEFAULT_MAX_TOKENS) -> list[TextScore]:
    """Batch rows (longest first within what is pending, bounded by ``batch_size`` rows and ``max_tokens``
    padded tokens), accumulate NLL per text in float64."""
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
            n = _take(pending, batch_size, max_tokens)
            flush(pending[:n])
            pending = pending[n:]
    pending.sort(key=lambda r: -len(r.ids))
    while pending:
        n = _take(pending, batch_size, max_tokens)
        flush(pending[:n])
        pending = pending[n:]
    if return_tokens:
        for i, vals in per_token.items():
            scores[i].token_nlls = vals
    return scores


def check_budget(batch_size: Any, max_tokens: Any) -> None:
    """``batch_size`` (rows) and ``max_tokens`` (padded tokens) per forward pass must be positive integers."""
    for name, value in (("batch_size", batch_size), ("max_tokens", max_tokens)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


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
               progress: Callable[[int], None] | None = None,
               max_tokens: int = DEFAULT_MAX_TOKENS) -> list[TextScore]:
    """Per-text NLL sums (nats) and scored-token counts under a causal LM.

    Each text is tokenized without special tokens; with ``add_start_token`` the start id of
    :func:`start_token_id` is prepended so that the first token is scored too (without it, or when the model
    has no start token, the first token is context only and a text of one token scores nothing). Sequences
    longer than ``max_length`` (default: the model's context) are scored with :func:`sliding_windows`; windows
    of all texts of a batch are batched together, longest first, at most ``batch_size`` rows and ``max_tokens``
    padded tokens (rows x width) per forward pass (a longer window still goes alone). The LM head is applied to
    the scored positions only, a bounded number at a time (:func:`head_plan`).

    ``on_empty``: what to do with a text that leaves nothing to score: ``"error"`` (ValueError naming the
    index) or ``"nan"`` (zero tokens; the caller reports NaN).
    """
    device = next(model.parameters()).device if device is None else resolve_device(device)
    window = context_length(model, tokenizer) if max_length is None else int(max_length)
    if max_length is not None and window > context_length(model, tokenizer):
        raise ValueError(f"max_length={window} exceeds the model's context of {context_length(model, tokenizer)}")
    stride = window // 2 if stride is None else int(stride)
    sliding_windows(window + 1, window, stride)  # validates window and stride before any work
    check_budget(batch_size, max_tokens)
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
                       n_tokens, progress, max_tokens)
    if return_tokens:
        for i, (ids, offs) in token_info.items():
            scores[i].token_ids, scores[i].offsets = ids, offs
    return scores


def pseudo_nll(texts: Sequence[str], model: Any, tokenizer: Any, *, batch_size: int = 16,
               max_length: int | None = None, variant: str = "original", device: str | torch.device | None = None,
               return_tokens: bool = False, on_empty: str = "error",
               progress: Callable[[int], None] | None = None,
               max_tokens: int = DEFAULT_MAX_TOKENS) -> list[TextScore]:
    """Per-text negative pseudo-log-likelihood (nats) under a masked LM and the number of scored tokens.

    PLL(W) = sum_t ln P(w_t | W with w_t masked) over the text's tokens, special tokens ([CLS], [SEP], ...; not [UNK], which stands for text)
    never masked nor scored (Salazar et al., 2020). ``variant="word_l2r"`` (Kauf & Ivanova, 2023) masks, with
    w_t, the later pieces of the same word (``word_ids`` of a fast tokenizer), so a multi-piece word is not
    scored from its own continuation. Texts longer than the window (default: the model's context) are scored
    with, for each token, the window of that many tokens centred on it. Copies are batched as in
    :func:`causal_nll` (``batch_size`` rows, ``max_tokens`` padded tokens); the head scores the masked position
    of each copy only.
    """
    if variant not in ("original", "word_l2r"):
        raise ValueError(f"pll_variant must be 'original' or 'word_l2r', got {variant!r}")
    if tokenizer.mask_token_id is None:
        raise ValueError("mode='pseudo' needs a masked LM whose tokenizer has a mask token")
    if variant == "word_l2r" and not getattr(tokenizer, "is_fast", False):
        raise ValueError("pll_variant='word_l2r' needs a fast tokenizer (word_ids)")
    check_budget(batch_size, max_tokens)
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
                       return_tokens, n_tokens, progress, max_tokens)
    if return_tokens:
        for i, (ids, offs) in token_info.items():
            scores[i].token_ids, scores[i].offsets = ids, offs
    return scores
