"""KorBERTScore end to end: validate, tokenize once, embed unique sentences once, match all pairs in batches.

``score`` is what ``evaluate.load(...).compute``, the CLI, the demo and the Space call; ``score_layers``
scores every layer in one forward pass (layer sweeps, baselines); ``similarity_matrix`` gives one pair's
word-piece similarity matrix (plots).
"""

from __future__ import annotations

import os
import unicodedata
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from .embedding import (
    DEFAULT_MODEL,
    Embedded,
    Encoder,
    default_num_layers,
    embed,
    known_model,
    load_encoder,
    tokenize,
)
from .model_setup import dtype_name, model_tag
from .scoring import f1, greedy_match, idf_weights, max_over_references, read_baseline, rescale, weight_table

__all__ = ["score", "score_layers", "similarity_matrix", "validate_inputs", "signature", "normalize_texts",
           "VERSION", "LONG_TEXT", "NORMALIZATIONS"]

#: Version of the metric (the kometrics release it ships with), part of every signature and hashcode.
VERSION = "0.1.0"
LONG_TEXT = ("window", "truncate", "error")
#: Unicode normalisation of the texts before tokenizing: NFC (default: NFD-decomposed Hangul, as macOS file
#: names give it, becomes the precomposed syllables every Korean model was trained on), NFKC, or None (off).
NORMALIZATIONS = ("NFC", "NFKC", None)
# Characters that show nothing: whitespace, control (Cc), format (Cf: zero-width space, BOM ...) and separators.
_INVISIBLE = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})
# Matching memory budget: elements of the batched similarity tensor.
_SIM_BUDGET = 1 << 24
# Pairs are matched in length-sorted chunks of at most this many, so each chunk pads only to its own longest.
_PAIRS_PER_CHUNK = 256
# Predictions embedded at once (divided by the number of layers in score_layers): bounds memory on big inputs.
_PREDICTIONS_PER_CHUNK = 32768


def validate_inputs(predictions: Any, references: Any) -> tuple[list[str], list[list[str]], bool]:
    """Check the inputs; return predictions, references as lists of lists, and whether any had several."""
    if isinstance(predictions, str) or not isinstance(predictions, Sequence):
        raise TypeError(f"predictions must be a list of strings, got {type(predictions).__name__}")
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise TypeError(f"references must be a list of strings or of lists of strings, got "
                        f"{type(references).__name__}")
    if len(predictions) != len(references):
        raise ValueError(f"predictions and references must have the same length, got {len(predictions)} and "
                         f"{len(references)}")
    for i, p in enumerate(predictions):
        if not isinstance(p, str):
            raise TypeError(f"predictions[{i}] must be a string, got {type(p).__name__}")
    refs: list[list[str]] = []
    multi = False
    for i, r in enumerate(references):
        if isinstance(r, str):
            refs.append([r])
            continue
        if not isinstance(r, Sequence):
            raise TypeError(f"references[{i}] must be a string or a list of strings, got {type(r).__name__}")
        if len(r) == 0:
            raise ValueError(f"references[{i}] is an empty list; give at least one reference string")
        for j, x in enumerate(r):
            if not isinstance(x, str):
                raise TypeError(f"references[{i}][{j}] must be a string, got {type(x).__name__}")
        multi = True
        refs.append(list(r))
    return list(predictions), refs, multi


def _check_normalize(normalize: Any) -> str | None:
    if normalize is False:
        return None
    if normalize not in NORMALIZATIONS:
        raise ValueError(f"normalize must be one of {NORMALIZATIONS}, got {normalize!r}")
    return normalize


def _invisible(text: str) -> bool:
    """True when ``text`` shows nothing (only whitespace, control or format characters: empty text)."""
    return all(ch.isspace() or unicodedata.category(ch) in _INVISIBLE for ch in text)


def normalize_texts(texts: Sequence[str], normalize: str | None = "NFC") -> list[str]:
    """``texts`` in the Unicode form ``normalize`` (None: as given); a text of invisible characters only
    (zero-width spaces, BOM, control characters) becomes ``""``, i.e. an empty text."""
    form = _check_normalize(normalize)
    out = []
    for text in texts:
        if form is not None and not unicodedata.is_normalized(form, text):
            text = unicodedata.normalize(form, text)
        out.append("" if _invisible(text) else text)
    return out


def _check_options(batch_size: Any, long_text: Any) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if long_text not in LONG_TEXT:
        raise ValueError(f"long_text must be one of {LONG_TEXT}, got {long_text!r}")


def _resolve_layer(encoder: Encoder, model_type: str, num_layers: Any) -> int:
    if num_layers is None:
        return default_num_layers(model_type, encoder.depth)
    if isinstance(num_layers, bool) or not isinstance(num_layers, (int, np.integer)):
        raise TypeError(f"num_layers must be an integer, got {num_layers!r}")
    if not 0 <= int(num_layers) <= encoder.depth:
        raise ValueError(f"num_layers must lie in 0..{encoder.depth} for {model_type} (0 = the embedding layer), "
                         f"got {num_layers}")
    return int(num_layers)


def _check_max_length(encoder: Encoder, max_length: Any) -> int | None:
    if max_length is None:
        return None
    if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
        raise ValueError(f"max_length must be a positive integer, got {max_length!r}")
    if max_length > encoder.max_length:
        raise ValueError(f"max_length={max_length} exceeds the {encoder.max_length} positions of {encoder.name}")
    return max_length


class _Prepared:
    """Unique sentences of a call with their piece ids, and each flat pair's (candidate, reference) rows."""

    def __init__(self, encoder: Encoder, predictions: list[str], refs: list[list[str]], multi: bool = False,
                 offset: int = 0):
        flat_refs = [r for group in refs for r in group]
        self.groups = np.repeat(np.arange(len(refs)), [len(g) for g in refs])
        stripped = [s.strip() for s in predictions] + [s.strip() for s in flat_refs]
        self.unique: list[str] = list(dict.fromkeys(stripped))
        row = {s: k for k, s in enumerate(self.unique)}
        self.cand_rows = np.array([row[s.strip()] for s in predictions], dtype=np.int64)[self.groups]
        self.ref_rows = np.array([row[s.strip()] for s in flat_refs], dtype=np.int64)
        self.content = tokenize(encoder, self.unique)
        self.names = [""] * len(self.unique)
        for i, s in enumerate(predictions):
            self.names[row[s.strip()]] = self.names[row[s.strip()]] or f"predictions[{i + offset}]"
        for i, group in enumerate(refs):
            for j, s in enumerate(group):
                where = f"references[{i + offset}][{j}]" if multi else f"references[{i + offset}]"
                self.names[row[s.strip()]] = self.names[row[s.strip()]] or where
        self.flat_refs = flat_refs


def _empty_warning(predictions: list[str], refs: list[list[str]], multi: bool) -> None:
    where = [f"predictions[{i}]" for i, s in enumerate(predictions) if not s.strip()]
    for i, group in enumerate(refs):
        for j, s in enumerate(group):
            if not s.strip():
                where.append(f"references[{i}][{j}]" if multi else f"references[{i}]")
    if where:
        warnings.warn(f"empty text at {', '.join(where[:10])}{' ...' if len(where) > 10 else ''}: pairs with an "
                      "empty candidate or reference score 0", UserWarning, stacklevel=3)


IdfStats = tuple[dict[int, float], float]


def _normalized(preds: list[str], refs: list[list[str]], normalize: str | None) -> tuple[list[str], list[list[str]]]:
    flat = normalize_texts([x for group in refs for x in group], normalize)
    bounds = np.cumsum([0] + [len(group) for group in refs]).tolist()
    return normalize_texts(preds, normalize), [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _idf_stats(encoder: Encoder, idf: Any, flat_refs: list[str], normalize: str | None = "NFC") -> IdfStats | None:
    """The piece weights of a call: ``None`` (1, [CLS]/[SEP] 0), or ``(idf per piece id, default)`` from the
    references (``idf=True``), from the given sentences, or from a dict (bert_score's precomputed idf)."""
    if idf is None or idf is False:
        return None
    if isinstance(idf, Mapping):
        factory = getattr(idf, "default_factory", None)
        return {int(k): float(v) for k, v in idf.items()}, float(factory()) if factory is not None else 0.0
    if idf is True:
        sentences = flat_refs
    else:
        if isinstance(idf, str) or not isinstance(idf, Sequence):
            raise TypeError(f"idf must be a bool, a list of sentences or a dict of piece-id weights, got {idf!r}")
        if not idf:
            raise ValueError("idf is an empty list of sentences; pass idf=True to use the references")
        for i, x in enumerate(idf):
            if not isinstance(x, str):
                raise TypeError(f"idf[{i}] must be a string, got {type(x).__name__}")
        sentences = normalize_texts(idf, normalize)
    unique = list(dict.fromkeys(x.strip() for x in sentences))
    ids = dict(zip(unique, tokenize(encoder, unique)))
    return idf_weights(encoder.prefix + ids[x.strip()] + encoder.suffix for x in sentences)


def _weights(encoder: Encoder, emb: Embedded, stats: IdfStats | None) -> torch.Tensor:
    """Per-piece weights aligned with the rows of ``emb.packed`` (float32, on the device)."""
    flat = np.fromiter((t for ids in emb.ids for t in ids), dtype=np.int64,
                       count=int(sum(len(x) for x in emb.ids)))
    size = int(max(flat.max(initial=0), max(encoder.zero_weight_ids, default=0))) + 1
    if stats is not None:
        size = max(size, max(stats[0], default=0) + 1)
        table = weight_table(size, stats, ())
    else:
        table = weight_table(size, None, encoder.zero_weight_ids)
    # Rows of `packed` are in embedding (length) order: place each sentence's weights at its rows.
    lengths = emb.lengths.cpu().numpy()
    rows = np.repeat(emb.offsets.cpu().numpy() - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths) + \
        np.arange(len(flat))
    out = np.zeros(emb.packed.shape[0], dtype=np.float32)
    out[rows] = table[flat]
    return torch.from_numpy(out).to(emb.packed.device)


def _score_chunks(encoder: Encoder, preds: list[str], refs: list[list[str]], multi: bool, layers: list[int],
                  stats: IdfStats | None, chunk: int, batch_size: int, long_text: str, max_length: int | None,
                  exclude_special: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Flat-pair P, R, F1 (``[layers, pairs]``) and each pair's prediction index, ``chunk`` predictions at a
    time (sentences are deduplicated within a chunk; memory holds one chunk's embeddings)."""
    out_p, out_r, out_f, groups = [], [], [], []
    for a in range(0, len(preds), chunk):
        prep = _Prepared(encoder, preds[a:a + chunk], refs[a:a + chunk], multi, offset=a)
        emb = embed(encoder, prep.content, layers, batch_size=batch_size, long_text=long_text,
                    max_length=max_length, names=prep.names)
        p, r, f = _match_all(emb, _weights(encoder, emb, stats), prep.cand_rows, prep.ref_rows, exclude_special)
        if len(layers) == 1:  # one layer: embed() returned [tokens, d], so the results have no layer axis
            p, r, f = p[None], r[None], f[None]
        out_p.append(p)
        out_r.append(r)
        out_f.append(f)
        groups.append(prep.groups + a)
    return (np.concatenate(out_p, axis=1), np.concatenate(out_r, axis=1), np.concatenate(out_f, axis=1),
            np.concatenate(groups))


def _match_all(emb: Embedded, weights: torch.Tensor, cand_rows: np.ndarray, ref_rows: np.ndarray,
               exclude_special: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P, R, F1 (``[n_layers, n_pairs]``, or ``[n_pairs]`` for one layer) of all pairs, matched in batches
    sorted by length on the device."""
    dev = emb.packed.device
    n = len(cand_rows)
    multi = emb.packed.dim() == 3
    n_layers = emb.packed.shape[1] if multi else 1
    lengths = emb.lengths.cpu().numpy()
    lc, lr = lengths[cand_rows], lengths[ref_rows]
    order = np.argsort(-np.maximum(lc, lr), kind="stable")
    out = torch.zeros((3, n_layers, n), dtype=torch.float32)
    cand_t = torch.from_numpy(cand_rows).to(dev)
    ref_t = torch.from_numpy(ref_rows).to(dev)
    start = 0
    while start < n:
        k = int(max(lc[order[start]], lr[order[start]]))
        size = max(1, min(_PAIRS_PER_CHUNK, _SIM_BUDGET // max(1, k * k * n_layers)))
        idx = torch.from_numpy(order[start:start + size]).to(dev)
        start += size
        sides = []
        for rows in (cand_t[idx], ref_t[idx]):
            length, offset = emb.lengths[rows], emb.offsets[rows]
            width = int(length.max())
            pos = torch.arange(width, device=dev)
            valid = pos[None, :] < length[:, None]
            if exclude_special:
                valid &= (pos[None, :] >= emb.n_prefix) & (pos[None, :] < (length - emb.n_suffix)[:, None])
            gather = torch.where(valid, offset[:, None] + pos[None, :], torch.zeros_like(valid, dtype=torch.long))
            vecs = emb.packed[gather]  # [B, W, d] or [B, W, layers, d]
            if multi:
                vecs = vecs.transpose(1, 2)  # [B, layers, W, d]
            sides.append((vecs, valid, weights[gather] * valid))
        (cv, cm, cw), (rv, rm, rw) = sides
        sim = torch.matmul(cv, rv.transpose(-1, -2))
        p, r = greedy_match(sim, cm, rm, cw, rw)
        empty = (cm.sum(-1) == 0) | (rm.sum(-1) == 0) if exclude_special else \
            (emb.lengths[cand_t[idx]] == emb.n_prefix + emb.n_suffix) | \
            (emb.lengths[ref_t[idx]] == emb.n_prefix + emb.n_suffix)
        fs = f1(p, r)
        if multi:
            empty_b = empty[:, None]
        else:
            p, r, fs, empty_b = p[:, None], r[:, None], fs[:, None], empty[:, None]
        stacked = torch.stack([p, r, fs]).masked_fill(empty_b[None], 0.0)  # [3, B, layers]
        out[:, :, idx.cpu()] = stacked.transpose(1, 2).float().cpu()
    res = out.numpy().astype(np.float64)
    return (res[0], res[1], res[2]) if multi else (res[0, 0], res[1, 0], res[2, 0])


def _hashcode(model_type: str, layer: int, idf: Any, rescaled: bool, custom_baseline: bool,
              exclude_special: bool, long_text: str, dtype: Any, use_fast_tokenizer: bool = False,
              normalize: str | None = "NFC") -> str:
    import transformers

    msg = f"{model_tag(model_type)}_L{layer}{'_idf' if idf is not False and idf is not None else '_no-idf'}" \
          f"_version=korbertscore-{VERSION}(hug_trans={transformers.__version__})"
    if rescaled:
        msg += "-custom-rescaled" if custom_baseline else "-rescaled"
    if use_fast_tokenizer:
        msg += "_fast-tokenizer"
    if exclude_special:
        msg += "_no-special"
    if long_text != "window":
        msg += f"_long-{long_text}"
    if dtype_name(dtype) != "float32":
        msg += f"_{dtype_name(dtype)}"
    if normalize != "NFC":  # like the other options, only a change from the default is marked
        msg += f"_{normalize.lower()}" if normalize else "_no-normalize"
    return msg


def signature(model_type: str, layer: int, idf: Any, rescale_with_baseline: bool, baseline_path: Any,
              exclude_special_tokens: bool, long_text: str, max_length: int | None, dtype: Any,
              normalize: str | None = "NFC", lang: str = "ko") -> str:
    """How a result was made (the sacrebleu habit): every option that changes the numbers, and the version.
    ``idf``: ``no``, ``refs`` (over the references), ``sentences`` (a given list) or ``weights`` (a dict);
    ``rescale``: ``no``, ``shipped`` (this folder's ``baselines/<lang>/`` file for a measured model), ``bert_score``
    (its baseline file) or ``custom`` (``baseline_path``); ``norm``: the
    Unicode normalisation of the texts (``NFC``, ``NFKC`` or ``none``)."""
    if idf is None or idf is False:
        idf_kind = "no"
    elif idf is True:
        idf_kind = "refs"
    else:
        idf_kind = "weights" if isinstance(idf, Mapping) else "sentences"
    if not rescale_with_baseline:
        rescale_kind = "no"
    elif baseline_path is not None:
        rescale_kind = "custom"
    else:
        shipped = os.path.join(os.path.dirname(os.path.abspath(__file__)), "baselines")
        default = _default_baseline(model_type, lang)
        rescale_kind = "shipped" if default and default.startswith(shipped) else "bert_score"
    parts = [f"model:{model_tag(model_type)}", f"layer:{layer}", f"idf:{idf_kind}", f"rescale:{rescale_kind}",
             f"special:{'excluded' if exclude_special_tokens else 'kept'}", f"long:{long_text}",
             f"max_len:{'model' if max_length is None else max_length}", f"dtype:{dtype_name(dtype)}",
             f"norm:{_check_normalize(normalize) or 'none'}"]
    return "korbertscore|" + "|".join(parts) + f"|version:{VERSION}"


def _default_baseline(model_type: str, lang: str) -> str | None:
    """The baseline file shipped beside this module for a measured model (``baselines/<lang>/<model>.tsv``; a
    prepared folder of it uses its file, see :func:`~.embedding.known_model`), else bert_score's
    (``rescale_baseline/<lang>/<model>.tsv``) if installed."""
    known = known_model(model_type)
    if known is not None:
        ours = os.path.join(os.path.dirname(os.path.abspath(__file__)), "baselines", lang, f"{known}.tsv")
        if os.path.isfile(ours):
            return ours
    try:
        import bert_score
    except ImportError:
        return None
    theirs = os.path.join(os.path.dirname(bert_score.__file__), "rescale_baseline", lang, f"{model_type}.tsv")
    return theirs if os.path.isfile(theirs) else None


def score(predictions: Sequence[str], references: Sequence[str] | Sequence[Sequence[str]],
          model_type: str | os.PathLike | None = None, num_layers: int | None = None, idf: Any = False,
          rescale_with_baseline: bool = False, baseline_path: str | os.PathLike | None = None,
          batch_size: int = 64, device: str | None = None, dtype: Any = None, max_length: int | None = None,
          exclude_special_tokens: bool = False, long_text: str = "window", lang: str = "ko",
          use_fast_tokenizer: bool = False, normalize: str | None = "NFC") -> dict[str, Any]:
    """KorBERTScore of each prediction against its reference(s).

    Returns ``precision``, ``recall``, ``f1`` (lists of floats in [-1, 1], about [0, 1] in practice; after
    rescaling about 0 for unrelated text and 1 for identical text), ``best_reference`` (index of the reference
    with the highest raw F1 per prediction), ``num_layers``, ``hashcode`` (bert_score's habit) and ``signature``
    (:func:`signature`: every option that changes the numbers). Matches bert_score 0.3.13 on the
    same model, layer, idf and baseline (within float32 rounding).

    Texts are put in the Unicode form ``normalize`` first (NFC by default; None leaves them as given) and a
    text of invisible characters only counts as empty (score 0, with a warning).
    """
    preds, refs, multi = validate_inputs(predictions, references)
    _check_options(batch_size, long_text)
    normalize = _check_normalize(normalize)
    preds, refs = _normalized(preds, refs, normalize)
    model_type = os.fspath(model_type) if model_type else DEFAULT_MODEL  # a pathlib.Path folder too
    encoder = load_encoder(model_type, device=device, dtype=dtype)
    layer = _resolve_layer(encoder, model_type, num_layers)
    limit = _check_max_length(encoder, max_length)
    if baseline_path is not None and not rescale_with_baseline:
        warnings.warn("baseline_path is ignored because rescale_with_baseline=False", UserWarning, stacklevel=2)
    baseline = None
    if rescale_with_baseline:
        path = baseline_path if baseline_path is not None else _default_baseline(model_type, lang)
        if path is None or not os.path.isfile(path):
            raise ValueError(f"no baseline file for {model_type!r} (lang={lang!r}): pass baseline_path=... (build "
                             "one with `kometrics korbertscore baseline`) or rescale_with_baseline=False")
        baseline = read_baseline(path, layer)
    provenance = {
        "hashcode": _hashcode(model_type, layer, idf, rescale_with_baseline, baseline_path is not None,
                              exclude_special_tokens, long_text, dtype, use_fast_tokenizer, normalize),
        "signature": signature(model_type, layer, idf, rescale_with_baseline, baseline_path, exclude_special_tokens,
                               long_text, limit, dtype, normalize, lang)}
    if not preds:
        return {"precision": [], "recall": [], "f1": [], "best_reference": [], "num_layers": layer, **provenance}
    _empty_warning(preds, refs, multi)
    stats = _idf_stats(encoder, idf, [x for group in refs for x in group], normalize)
    p, r, f, groups = _score_chunks(encoder, preds, refs, multi, [layer], stats, _PREDICTIONS_PER_CHUNK, batch_size,
                                    long_text, limit, exclude_special_tokens)
    p, r, f = p[0], r[0], f[0]
    _nan_warning(p, r, groups)
    (p, r, f), best = _group(np.stack([p, r, f]), groups, len(preds))
    if baseline is not None:
        p, r, f = rescale(p, baseline[0]), rescale(r, baseline[1]), rescale(f, baseline[2])
    return {"precision": p.tolist(), "recall": r.tolist(), "f1": f.tolist(), "best_reference": best.tolist(),
            "num_layers": layer, **provenance}


def _nan_warning(p: np.ndarray, r: np.ndarray, groups: np.ndarray) -> None:
    bad = np.flatnonzero(np.isnan(p) | np.isnan(r))
    if len(bad):
        where = [f"pair {int(k)} (predictions[{int(groups[k])}])" for k in bad[:5]]
        warnings.warn(f"all piece weights of a text are 0 at {', '.join(where)}{' ...' if len(bad) > 5 else ''}: "
                      "its precision or recall is NaN and F1 0, as in bert_score. With idf this happens when every "
                      "piece occurs in every idf sentence (e.g. one reference); pass more idf sentences or idf=False",
                      UserWarning, stacklevel=3)


def _group(values: np.ndarray, groups: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    if len(groups) == n:
        return values, np.zeros(n, dtype=np.int64)
    return max_over_references(values, groups, n)


def score_layers(predictions: Sequence[str], references: Sequence[str], model_type: str | os.PathLike | None = None,
                 layers: Sequence[int] | None = None, idf: Any = False, batch_size: int = 64,
                 device: str | None = None, dtype: Any = None, exclude_special_tokens: bool = False,
                 long_text: str = "window", normalize: str | None = "NFC") -> dict[int, dict[str, np.ndarray]]:
    """P, R, F1 of every pair at every layer in ``layers`` (default ``0..depth``) from ONE forward pass.

    One reference per prediction. Returns ``{layer: {"precision": array, "recall": array, "f1": array}}``;
    each layer's numbers equal ``score(..., num_layers=layer)``, also for models with a final norm (see
    :mod:`.embedding` for what layer L means).
    """
    preds, refs, multi = validate_inputs(predictions, references)
    if multi:
        raise ValueError("score_layers takes one reference string per prediction")
    _check_options(batch_size, long_text)
    normalize = _check_normalize(normalize)
    preds, refs = _normalized(preds, refs, normalize)
    model_type = os.fspath(model_type) if model_type else DEFAULT_MODEL  # a pathlib.Path folder too
    encoder = load_encoder(model_type, device=device, dtype=dtype)
    wanted = list(range(encoder.depth + 1)) if layers is None else [int(x) for x in layers]
    for x in wanted:
        if not 0 <= x <= encoder.depth:
            raise ValueError(f"layers must lie in 0..{encoder.depth} for {model_type}, got {x}")
    if not preds:
        return {x: {"precision": np.zeros(0), "recall": np.zeros(0), "f1": np.zeros(0)} for x in wanted}
    _empty_warning(preds, refs, False)
    stats = _idf_stats(encoder, idf, [x[0] for x in refs], normalize)
    p, r, f, _ = _score_chunks(encoder, preds, refs, False, wanted, stats, max(1, _PREDICTIONS_PER_CHUNK // len(wanted)),
                               batch_size, long_text, None, exclude_special_tokens)
    return {x: {"precision": p[k], "recall": r[k], "f1": f[k]} for k, x in enumerate(wanted)}


def similarity_matrix(candidate: str, reference: str, model_type: str | os.PathLike | None = None,
                      num_layers: int | None = None, device: str | None = None, dtype: Any = None,
                      exclude_special_tokens: bool = False, long_text: str = "window",
                      normalize: str | None = "NFC") -> dict[str, Any]:
    """The cosine similarity of every candidate/reference word piece of one pair.

    Returns ``candidate_tokens``, ``reference_tokens`` (special tokens included unless excluded),
    ``matrix`` (numpy ``[len(candidate_tokens), len(reference_tokens)]``), ``precision_matches`` (for each
    candidate piece, the reference piece it is matched to), ``recall_matches`` (for each reference piece, the
    candidate piece), ``num_layers``, and the pair's unweighted ``precision``, ``recall``, ``f1``.
    """
    if not isinstance(candidate, str) or not isinstance(reference, str):
        raise TypeError("candidate and reference must be strings")
    candidate, reference = normalize_texts([candidate, reference], normalize)
    model_type = os.fspath(model_type) if model_type else DEFAULT_MODEL  # a pathlib.Path folder too
    encoder = load_encoder(model_type, device=device, dtype=dtype)
    layer = _resolve_layer(encoder, model_type, num_layers)
    content = tokenize(encoder, [candidate, reference])
    emb = embed(encoder, content, [layer], long_text=long_text, names=["candidate", "reference"])
    mats, toks = [], []
    for k in range(2):
        o, n = int(emb.offsets[k]), int(emb.lengths[k])
        ids = emb.ids[k]
        vec = emb.packed[o:o + n]
        if exclude_special_tokens:
            vec, ids = vec[emb.n_prefix:n - emb.n_suffix], ids[emb.n_prefix:n - emb.n_suffix]
        mats.append(vec)
        toks.append(encoder.tokenizer.convert_ids_to_tokens(ids))
    sim = (mats[0] @ mats[1].T).cpu().numpy().astype(np.float64)
    out: dict[str, Any] = {"candidate_tokens": toks[0], "reference_tokens": toks[1], "matrix": sim,
                           "num_layers": layer}
    if sim.size:
        w_c = np.array([0.0 if t in encoder.zero_weight_ids and not exclude_special_tokens else 1.0
                        for t in (emb.ids[0][emb.n_prefix:-emb.n_suffix or None] if exclude_special_tokens
                                  else emb.ids[0])])
        w_r = np.array([0.0 if t in encoder.zero_weight_ids and not exclude_special_tokens else 1.0
                        for t in (emb.ids[1][emb.n_prefix:-emb.n_suffix or None] if exclude_special_tokens
                                  else emb.ids[1])])
        out["precision_matches"] = sim.argmax(axis=1).tolist()
        out["recall_matches"] = sim.argmax(axis=0).tolist()
        p = float((sim.max(axis=1) * w_c).sum() / w_c.sum()) if w_c.sum() else 0.0
        r = float((sim.max(axis=0) * w_r).sum() / w_r.sum()) if w_r.sum() else 0.0
        out.update(precision=p, recall=r, f1=2 * p * r / (p + r) if p + r else 0.0)
    else:
        out.update(precision_matches=[], recall_matches=[], precision=0.0, recall=0.0, f1=0.0)
    return out
