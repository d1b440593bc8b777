"""Perplexity of n-gram language models (ARPA text or kenlm binary files), scored with kenlm.

An n-gram model estimates P(w_t | w_{t-n+1} .. w_{t-1}) from training counts, smoothed for the zero-frequency
problem (Jurafsky & Martin, Speech and Language Processing, ch. 3; Chen & Goodman 1999). This module scores
texts with such a model and returns the same numbers as the causal-LM path (:func:`.scoring.summarize`), so
that bits per character compare n-gram and neural models.

What is scored, exactly (also in the metric card and the signature):

- The text is NFC-normalised, then cut into the model's **units**, read from the metadata written at training
  time (``<stem>.json`` beside the model file; ``ngram_unit=`` when there is none):

  - ``char``: one unit per NFC code point, so the units are exactly the characters that bits per character
    divide by; a space is the unit ``<sp>``, any other whitespace character ``<U+XXXX>`` (ARPA words cannot
    hold whitespace);
  - ``eojeol``: the whitespace-separated words (the spaces themselves are implied, not scored);
  - ``morpheme``: kiwipiepy's analysis as ``form/TAG`` units, with one ``<sp>`` unit where the text has
    whitespace between (or around) morphemes. Kiwi restores base forms (맑았다 -> 맑/VA 었/EP 다/EF), so a
    morpheme model codes the analysis, not every detail of the surface text.

  An eojeol equal to a reserved symbol (``<s>``, ``</s>``, ``<unk>``, ``<sp>``) or starting with a backslash is
  written with one more backslash in front, at training and scoring time alike.
- **Sentence boundaries**: each text is one sentence. ``<s>`` is context only (never predicted, never
  counted); ``</s>`` is predicted and counted as a token (``eos=True``, the usual n-gram perplexity, as kenlm
  and SRILM report it). With ``eos=False`` the NLL is that of the text as the beginning of a sentence, the
  quantity a causal LM with a start token gives. With ``bos=False`` the first unit has no ``<s>`` context.
- **Unknown units** (not in the model's vocabulary) are never skipped: kenlm scores them with the model's
  ``<unk>`` probability, backed off from the context; they are counted per text (``unknown_units``) and a
  warning says how many. A model without ``<unk>`` gets kenlm's substitute, log10 P = -100 (the warning says
  so too).
- **Tokens** (``token_counts``, bits per token, per-text perplexity) are the predicted units: the model's
  units (``<sp>`` included) plus ``</s>`` when ``eos=True``.

kenlm (and kiwipiepy for morphemes) are imported only when an n-gram model is scored.
"""

from __future__ import annotations

import json
import math
import os
import unicodedata
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .scoring import LN2, VERSION, summarize, validate_predictions

__all__ = [
    "UNITS",
    "BOS",
    "EOS",
    "UNK",
    "SPACE",
    "is_ngram_model",
    "resolve_model_file",
    "metadata_path",
    "read_metadata",
    "kiwi_info",
    "tokenize",
    "tokenize_many",
    "load_ngram_model",
    "ngram_nll",
    "score",
    "unit_surprisals",
]

UNITS = ("char", "morpheme", "eojeol")
BOS, EOS, UNK, SPACE = "<s>", "</s>", "<unk>", "<sp>"
RESERVED = frozenset({BOS, EOS, UNK, SPACE})
#: File names the trainer writes into its output folder (``model.arpa`` and its metadata ``model.json``).
MODEL_FILES = ("model.bin", "model.arpa")
MODEL_SUFFIXES = (".arpa", ".bin", ".binary", ".klm", ".mmap", ".gz")
KENLM_MAGIC = b"mmap lm http://kheafield.com/code"
LN10 = math.log(10.0)

_MODELS: dict[tuple[str, int, int], Any] = {}
_KIWI: list[Any] = []


# ---------------------------------------------------------------------------------------------- model files


def _looks_like_model_file(path: Path) -> bool:
    if any(path.name.endswith(s) for s in (".arpa", ".arpa.gz", ".klm")):
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return False
    return head.startswith(KENLM_MAGIC) or head.lstrip().startswith(b"\\data\\")


def is_ngram_model(model_id: Any) -> bool:
    """Whether ``model_id`` names an n-gram model: an ARPA file (``.arpa``, ``.arpa.gz`` or text starting with
    ``\\data\\``), a kenlm binary file, or a folder holding ``model.arpa`` / ``model.bin`` (what ``kometrics
    perplexity ngram --out DIR`` writes) and no ``config.json``."""
    if not isinstance(model_id, (str, os.PathLike)):
        return False
    path = Path(model_id)
    if path.is_dir():
        return not (path / "config.json").exists() and any((path / n).is_file() for n in MODEL_FILES)
    return path.is_file() and _looks_like_model_file(path)


def resolve_model_file(model_id: str | os.PathLike) -> Path:
    """The model file itself: ``model_id``, or inside a folder ``model.bin`` if present, else ``model.arpa``."""
    path = Path(model_id)
    if path.is_dir():
        for name in MODEL_FILES:
            if (path / name).is_file():
                return path / name
        raise FileNotFoundError(f"{path} holds neither {' nor '.join(MODEL_FILES)}")
    if not path.is_file():
        raise FileNotFoundError(f"n-gram model {path} does not exist")
    return path


def metadata_path(model_file: str | os.PathLike) -> Path:
    """The metadata file of a model file: same folder, same stem, ``.json`` (``model.arpa`` -> ``model.json``;
    a binary ``model.bin`` made from it with kenlm's ``build_binary`` finds the same file)."""
    path = Path(model_file)
    name = path.name
    stripped = True
    while stripped:
        stripped = False
        for suffix in MODEL_SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                name, stripped = name[: -len(suffix)], True
    return path.with_name(name + ".json")


def read_metadata(model_file: str | os.PathLike) -> dict[str, Any] | None:
    """The training metadata of a model (unit, order, smoothing, tokenizer, training data hash ...), or
    ``None`` when there is no metadata file."""
    meta = metadata_path(model_file)
    if not meta.is_file():
        return None
    with open(meta, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or data.get("unit") not in UNITS:
        raise ValueError(f"{meta} is not n-gram metadata: it needs 'unit' in {UNITS}")
    return data


def _model_info(model_file: Path, ngram_unit: str | None) -> dict[str, Any]:
    meta = read_metadata(model_file)
    if ngram_unit is not None and ngram_unit not in UNITS:
        raise ValueError(f"ngram_unit must be one of {UNITS}, got {ngram_unit!r}")
    if meta is None:
        if ngram_unit is None:
            raise ValueError(
                f"the n-gram model {model_file} has no metadata ({metadata_path(model_file)} is missing), so its "
                f"unit is unknown: pass ngram_unit= one of {UNITS} (the unit it was trained on), or train it "
                "with 'kometrics perplexity ngram', which writes the metadata")
        return {"unit": ngram_unit, "metadata": None}
    if ngram_unit is not None and ngram_unit != meta["unit"]:
        raise ValueError(f"ngram_unit={ngram_unit!r} contradicts the model's metadata ({metadata_path(model_file)}: "
                         f"unit {meta['unit']!r}); leave ngram_unit out")
    return {"unit": meta["unit"], "metadata": meta}


def load_ngram_model(model_file: str | os.PathLike) -> Any:
    """A ``kenlm.Model`` for an ARPA or kenlm binary file, loaded once per (path, size, mtime) and reused."""
    path = Path(model_file).resolve()
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _MODELS:
        try:
            import kenlm
        except ImportError as e:
            raise ModuleNotFoundError(
                "scoring n-gram models needs kenlm: pip install kenlm (or 'kometrics[ngram]')", name="kenlm") from e
        config = kenlm.Config()
        config.show_progress = False
        config.arpa_complain = kenlm.ARPALoadComplain.NONE
        _MODELS[key] = kenlm.Model(str(path), config)
    return _MODELS[key]


# ------------------------------------------------------------------------------------------------ units


def _whitespace_symbol(ch: str) -> str:
    return SPACE if ch == " " else f"<U+{ord(ch):04X}>"


def _escape_word(word: str) -> str:
    return "\\" + word if word in RESERVED or word.startswith("\\") else word


def _kiwi() -> Any:
    if not _KIWI:
        try:
            from kiwipiepy import Kiwi
        except ImportError as e:
            raise ModuleNotFoundError("morpheme units need kiwipiepy: pip install kiwipiepy (or 'kometrics[ko]')",
                                      name="kiwipiepy") from e
        _KIWI.append(Kiwi())
    return _KIWI[0]


def kiwi_info() -> dict[str, Any]:
    """The morpheme analyser behind ``unit="morpheme"``: kiwipiepy and model versions and the model type."""
    import kiwipiepy

    info: dict[str, Any] = {"name": "kiwipiepy", "version": kiwipiepy.__version__,
                            "model_type": str(_kiwi().model_type), "unit_format": "form/TAG"}
    try:
        import kiwipiepy_model

        info["model_version"] = kiwipiepy_model.__version__
    except ImportError:  # pragma: no cover - kiwipiepy always brings its model
        pass
    return info


def _morpheme_units(text: str, tokens: Iterable[Any]) -> list[str]:
    out: list[str] = []
    shown = 0
    for tok in tokens:
        if tok.start > shown and any(c.isspace() for c in text[shown:tok.start]):
            out.append(SPACE)
        form = "".join(_whitespace_symbol(c) if c.isspace() else c for c in tok.form)
        out.append(f"{form}/{tok.tag}")
        shown = max(shown, tok.start + tok.len)
    if any(c.isspace() for c in text[shown:]):
        out.append(SPACE)
    return out


def tokenize(text: str, unit: str) -> list[str]:
    """The model units of ``text`` (NFC first); see the module docstring for each unit."""
    return tokenize_many([text], unit)[0]


def tokenize_many(texts: Sequence[str], unit: str) -> list[list[str]]:
    """:func:`tokenize` for many texts (the morpheme analyser runs over them as one batch)."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    nfc = [unicodedata.normalize("NFC", t) for t in texts]
    if unit == "char":
        return [[_whitespace_symbol(c) if c.isspace() else c for c in t] for t in nfc]
    if unit == "eojeol":
        return [[_escape_word(w) for w in t.split()] for t in nfc]
    kiwi = _kiwi()
    analysed = kiwi.tokenize(nfc) if nfc else []
    return [_morpheme_units(t, toks) for t, toks in zip(nfc, analysed)]


# ------------------------------------------------------------------------------------------------ scoring


def _check_neural_options(options: dict[str, Any]) -> None:
    bad = {k: v for k, v in options.items() if v is not None and not (k == "mode" and v == "causal")
           and not (k == "pll_variant" and v == "original")}
    if bad:
        raise ValueError(f"{', '.join(f'{k}={v!r}' for k, v in bad.items())}: not an option of n-gram models "
                         "(they take ngram_unit, ngram_eos and add_start_token)")


def ngram_nll(texts: Sequence[str], model_id: str | os.PathLike, ngram_unit: str | None = None, bos: bool = True,
              eos: bool = True, return_units: bool = False) -> dict[str, Any]:
    """Per-text NLL sums (nats), predicted-unit counts and unknown-unit counts under an n-gram model.

    Returns ``{"nll_sums", "token_counts", "unknown_units", "unit", "metadata", "model_file", "unk_log10prob"}``
    (and ``"units"``: per text a list of ``(unit, log10 P)``, with ``return_units=True``). An empty text has
    nothing scored (NaN handling is the caller's). kenlm gives log10 probabilities (float32 internally).
    """
    model_file = resolve_model_file(model_id)
    info = _model_info(model_file, ngram_unit)
    model = load_ngram_model(model_file)
    unk_log10 = float(next(iter(model.full_scores(UNK, bos=False, eos=False)))[0])
    units_per_text = tokenize_many(list(texts), info["unit"])
    nll_sums, counts, unknown, shown = [], [], [], []
    for text, units in zip(texts, units_per_text):
        if not text:
            nll_sums.append(0.0)
            counts.append(0)
            unknown.append(0)
            shown.append([])
            continue
        scores = list(model.full_scores(" ".join(units), bos=bos, eos=eos))
        nll_sums.append(-math.fsum(s[0] for s in scores) * LN10)
        counts.append(len(scores))
        unknown.append(sum(1 for s in scores if s[2]))
        if return_units:
            shown.append([(u, s[0]) for u, s in zip([*units, EOS], scores)])
    out = {"nll_sums": nll_sums, "token_counts": counts, "unknown_units": unknown, "unit": info["unit"],
           "metadata": info["metadata"], "model_file": model_file, "unk_log10prob": unk_log10}
    if return_units:
        out["units"] = shown
    return out


def _warn_unknown(unknown: Sequence[int], unk_log10: float) -> None:
    total = sum(unknown)
    if not total:
        return
    where = [i for i, n in enumerate(unknown) if n]
    what = ("the model's <unk> probability" if unk_log10 > -99 else
            "log10 probability -100 (the model has no <unk>; kenlm substitutes it)")
    warnings.warn(f"{total} unknown unit(s) (not in the n-gram model's vocabulary) in {len(where)} text(s) "
                  f"(indices {where[:10]}{' ...' if len(where) > 10 else ''}): scored with {what}, backed off "
                  "from the context, and counted in 'unknown_units'", stacklevel=3)


def signature(model_file: Path, unit: str, metadata: dict[str, Any] | None, bos: bool, eos: bool,
              unk_log10: float, order: int) -> str:
    """How the n-gram numbers were made: model, unit, order, smoothing, boundaries, <unk>, tokenizer, data,
    and the version."""
    meta = metadata or {}
    parts = ["mode:ngram", f"model:{model_file.name}", f"unit:{unit}", f"order:{order}",
             f"smoothing:{meta.get('smoothing', 'unknown')}", f"bos:{BOS if bos else 'none'}",
             f"eos:{EOS if eos else 'none'}", f"unk:{UNK}={unk_log10:.4f}" if unk_log10 > -99 else "unk:none(-100)",
             "nfc:yes"]
    if unit in ("char", "morpheme"):
        parts.append(f"space:{SPACE}")
    if unit == "morpheme":
        tok = meta.get("tokenizer") or {}
        parts.append(f"tokenizer:kiwipiepy-{tok.get('version', 'unknown')}")
    data = (meta.get("training_data") or {}).get("sha256")
    if data:
        parts.append(f"data:sha256:{data[:16]}")
    return "perplexity|" + "|".join(parts) + f"|version:{VERSION}"


def _check_tokenizer(metadata: dict[str, Any] | None, unit: str) -> None:
    if unit != "morpheme" or not metadata:
        return
    trained = (metadata.get("tokenizer") or {}).get("version")
    now = kiwi_info()["version"]
    if trained and trained != now:
        warnings.warn(f"the morpheme model was trained with kiwipiepy {trained}, this is {now}: analyses may "
                      "differ, and differing morphemes score as unknown units", stacklevel=3)


def score(predictions: Sequence[str], model_id: str | os.PathLike, ngram_unit: str | None = None,
          add_start_token: bool = True, ngram_eos: bool = True, empty: str = "error",
          **neural_options: Any) -> dict[str, Any]:
    """Score ``predictions`` with an n-gram model: the keys of :func:`.api.score` for a causal LM
    (perplexities, corpus/mean perplexity, bits per token/character/byte, word perplexity, nll_sums, counts,
    signature), plus ``unknown_units`` (per text, units scored with <unk>).

    ``add_start_token``: condition the first unit on ``<s>`` (default); ``ngram_eos``: predict and count
    ``</s>`` (default). ``ngram_unit``: only for a model without metadata. Options of neural models
    (``max_length``, ``device`` ...) are errors here; ``batch_size`` is accepted and has no effect.
    """
    neural_options.pop("batch_size", None)
    _check_neural_options(neural_options)
    texts = validate_predictions(predictions, empty=empty)
    result = ngram_nll(texts, model_id, ngram_unit=ngram_unit, bos=add_start_token, eos=ngram_eos)
    _check_tokenizer(result["metadata"], result["unit"])
    _warn_unknown(result["unknown_units"], result["unk_log10prob"])
    # the metadata's order: kenlm reads a unigram model from a file with an empty 2-gram section
    order = (result["metadata"] or {}).get("order") or load_ngram_model(result["model_file"]).order
    sig = signature(result["model_file"], result["unit"], result["metadata"], add_start_token, ngram_eos,
                    result["unk_log10prob"], order)
    out = summarize(result["nll_sums"], result["token_counts"], texts, signature=sig)
    out["unknown_units"] = result["unknown_units"]
    return out


def unit_surprisals(text: str, model_id: str | os.PathLike, ngram_unit: str | None = None,
                    add_start_token: bool = True, ngram_eos: bool = True) -> list[tuple[str, float]]:
    """Each predicted unit of ``text`` (``</s>`` last when ``ngram_eos``) with its surprisal in bits,
    -log2 P(unit | context); they sum to ``score([text], ...)["nll_sums"][0] / ln 2``."""
    validate_predictions([text])
    result = ngram_nll([text], model_id, ngram_unit=ngram_unit, bos=add_start_token, eos=ngram_eos,
                       return_units=True)
    return [(" " if u == SPACE else u, -lp * LN10 / LN2) for u, lp in result["units"][0]]
