"""kometrics playground: every metric of kometrics in one Gradio app, for people who would rather look.

Tabs:

- **KorBERTScore**: the cosine-similarity matrix of a candidate and a reference, greedy matches marked
  (``kometrics.korbertscore.plot_alignment``), with P / R / F1.
- **Perplexity**: the surprisal of every token of a text in bits (``kometrics.perplexity.token_surprisals``),
  coloured, as a table, and summed up as bits per token and perplexity.
- **MERGE**: the SV-accuracy curve of predictions on seed problems and their variants
  (``evaluate.load("metrics/merge_sv_accuracy")`` + ``kometrics.merge_sv_accuracy.plot_sv_curve``).
- **LMRE**: whether a phrase-break annotation is accepted by a set of references, and which reference
  matches it (``kometrics.lmre.explain``).
- **KLUE-STS**: Pearson, Spearman and F1 of predicted similarity scores (``evaluate.load("metrics/klue_sts")``).

Models. The model-based tabs take a Hub id or a local path in a textbox. Defaults are the documented Hub
models; change them with ``--bert-model`` / ``--lm-model`` or the environment variables
``KOMETRICS_BERT_MODEL`` / ``KOMETRICS_LM_MODEL`` (e.g. a local folder on a machine without the Hub).
An empty model box means that default, an empty layer box the model's default layer; the boxes' hints name
them, and each result names the model and layer (or, for perplexity, the signature) actually used.

Run it::

    python spaces/playground/app.py [--bert-model PATH] [--lm-model PATH] [--port 7860]

A tab whose metric is not installed says so instead of failing.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
from functools import cache
from pathlib import Path
from typing import Any

import gradio as gr

#: Documented Hub defaults (the metric cards say how they were chosen).
DEFAULT_BERT_MODEL = "klue/bert-base"  # kometrics.korbertscore.DEFAULT_MODEL
DEFAULT_LM_MODEL = "skt/kogpt2-base-v2"

EXAMPLE_CANDIDATE = "오늘은 날씨가 정말 좋네요."
EXAMPLE_REFERENCE = "오늘 날씨가 참 좋습니다."
EXAMPLE_TEXT = "서울은 한국의 수도이며 많은 사람들이 살고 있다."
EXAMPLE_PREDICTION = "오늘은 / 날씨가 정말 // 좋네요"
EXAMPLE_REFERENCES = "오늘은 / 날씨가 정말 / 좋네요\n오늘은 날씨가 / 정말 // 좋네요\n오늘은 / 날씨가 // 정말 좋네요"
MERGE_COLUMNS = ["seed_id", "is_seed", "word_class", "prediction", "reference"]
#: A made-up MERGE evaluation: 3 seed problems, each with its seed row and variants (labels 0/1/2).
EXAMPLE_MERGE = [
    ["s1", True, "", 0, 0], ["s1", False, "NNG", 0, 0], ["s1", False, "NNG", 0, 0], ["s1", False, "VV", 1, 0],
    ["s2", True, "", 2, 2], ["s2", False, "NNG", 2, 2], ["s2", False, "VA", 1, 2], ["s2", False, "MAG", 0, 2],
    ["s3", True, "", 1, 0], ["s3", False, "NNG", 1, 0], ["s3", False, "VV", 0, 0], ["s3", False, "NNG", 0, 0],
]
STS_COLUMNS = ["prediction", "reference"]
EXAMPLE_STS = [[4.6, 4.8], [0.4, 0.0], [3.1, 3.6], [2.2, 1.4], [3.9, 2.9], [1.0, 0.6], [4.1, 4.4]]


def _library(name: str, *attrs: str) -> tuple[Any, str | None]:
    """The module ``kometrics.<name>`` and None, or None and a message saying what is missing."""
    try:
        module = importlib.import_module(f"kometrics.{name}")
    except ImportError as e:
        return None, f"`kometrics.{name}` is not installed here ({type(e).__name__}: {e}). " \
                     "Install kometrics with its demo extra: in a checkout, `pip install -e '.[demo]'`."
    missing = [a for a in attrs if not hasattr(module, a)]
    if missing:
        return None, f"This kometrics installation has `kometrics.{name}` but not {', '.join(missing)}: " \
                     "upgrade kometrics to use this tab."
    return module, None


def _metric_folder(name: str) -> Path | None:
    try:
        package = importlib.import_module("kometrics")
    except ImportError:
        return None
    folder = Path(package.__file__).resolve().parent / name
    return folder if (folder / f"{name}.py").is_file() else None


@cache
def _evaluate_module(name: str):
    import evaluate

    folder = _metric_folder(name)
    if folder is None:
        raise gr.Error(f"the {name} metric is not installed here")
    return evaluate.load(str(folder))


def _unavailable(message: str) -> None:
    gr.Markdown(f"⚠️ **Not available in this environment.** {message}", elem_classes=["kometrics-missing"])


def _user_error(e: Exception) -> gr.Error:
    return gr.Error(f"{type(e).__name__}: {e}")


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return "NaN" if math.isnan(x) else f"{x:.4f}"
    return str(x)


# --- KorBERTScore ---------------------------------------------------------------------------------------

def _layer_arg(layer: Any) -> int | None:
    """The layer box: empty means the model's default (None); else a whole number (0 = the embeddings)."""
    if layer is None or (isinstance(layer, str) and not layer.strip()):
        return None
    try:
        value = float(layer)
    except (TypeError, ValueError):
        raise gr.Error(f"layer must be a whole number (0 = the embeddings) or empty for the model's default, "
                       f"got {layer!r}") from None
    if not value.is_integer():
        raise gr.Error(f"layer must be a whole number, got {layer!r}")
    return int(value)


def korbertscore_layer_hint(model: str, default_model: str = DEFAULT_BERT_MODEL) -> dict:
    """Placeholder and hint of the layer box for ``model`` (empty: ``default_model``): the layer an empty box
    means and where it comes from."""
    lib, _ = _library("korbertscore", "default_layer")
    model = (model or "").strip() or default_model
    if lib is None:
        return {"placeholder": "default", "info": "empty: the model's default layer"}
    try:
        layer, why = lib.default_layer(model)
    except (OSError, ValueError) as e:
        return {"placeholder": "default", "info": f"empty: the model's default (cannot read {model}: {e})"}
    return {"placeholder": f"default ({layer})", "info": f"empty: the default layer of {model}: {layer} ({why})"}


def korbertscore_layer_default(model: str, default_model: str = DEFAULT_BERT_MODEL):
    return gr.update(**korbertscore_layer_hint(model, default_model))


def korbertscore_alignment(candidate: str, reference: str, model: str, layer: Any,
                           default_model: str = DEFAULT_BERT_MODEL):
    """The heatmap and P/R/F1 of one pair; an empty model box means ``default_model`` and an empty layer box
    the model's default layer. The summary names the model and the layer used (the heatmap's layer)."""
    lib, message = _library("korbertscore", "plot_alignment")
    if lib is None:
        raise gr.Error(message)
    if not candidate.strip() or not reference.strip():
        raise gr.Error("type a candidate and a reference sentence")
    num_layers = _layer_arg(layer)
    chosen = (model or "").strip()
    model = chosen or default_model
    scores = None
    try:
        if hasattr(lib, "score"):
            scores = lib.score([candidate], [reference], model_type=model, num_layers=num_layers)
        used = scores["num_layers"] if scores is not None else num_layers
        fig = lib.plot_alignment(candidate, reference, model_type=model, num_layers=used)
    except (ValueError, TypeError, OSError) as e:
        raise _user_error(e) from e
    where = f"layer {used}" if used is not None else "its default layer"
    summary = (f"Greedy alignment of the candidate to the reference with `{model}`"
               f"{'' if chosen else ' (the default model)'} at {where}"
               f"{' (the default layer of this model)' if num_layers is None and used is not None else ''}.")
    if scores is not None:
        summary += (f"\n\n**P** = {_fmt(float(scores['precision'][0]))} · "
                    f"**R** = {_fmt(float(scores['recall'][0]))} · **F1** = {_fmt(float(scores['f1'][0]))}")
    return fig, summary


def _korbertscore_tab(bert_model: str, demo: gr.Blocks) -> None:
    gr.Markdown("Contextual embeddings of the word pieces of both sentences, cosine similarity of every pair "
                "(the heatmap), and the greedy matches that BERTScore keeps: precision averages the best "
                "match of each candidate piece, recall that of each reference piece.")
    lib, message = _library("korbertscore", "plot_alignment")
    if lib is None:
        _unavailable(message)
        return
    default_model = gr.State(bert_model)
    with gr.Row():
        candidate = gr.Textbox(EXAMPLE_CANDIDATE, label="Candidate", elem_id="kbs-candidate")
        reference = gr.Textbox(EXAMPLE_REFERENCE, label="Reference", elem_id="kbs-reference")
    with gr.Row():
        model = gr.Textbox(bert_model, label="Model (Hub id or local path)", elem_id="kbs-model",
                           placeholder=bert_model, info=f"empty: {bert_model}")
        layer = gr.Textbox("", label="Layer (empty: the model's default)", elem_id="kbs-layer",
                           placeholder="default", info="empty: the model's default layer")
    button = gr.Button("Align", variant="primary", elem_id="kbs-run")
    summary = gr.Markdown(elem_id="kbs-summary")
    plot = gr.Plot(label="Alignment", elem_id="kbs-plot")
    button.click(korbertscore_alignment, [candidate, reference, model, layer, default_model], [plot, summary],
                 api_name="korbertscore_alignment")
    gr.on([model.submit, model.blur, demo.load], korbertscore_layer_default, [model, default_model], layer,
          api_name="korbertscore_layer_default")


# --- Perplexity -----------------------------------------------------------------------------------------

def perplexity_surprisal(text: str, model: str, default_model: str = DEFAULT_LM_MODEL):
    """Surprisal of each token; an empty model box means ``default_model``. The summary names the model used
    and the signature of the numbers (window, start token and stride, defaulted from the model)."""
    lib, message = _library("perplexity", "token_surprisals")
    if lib is None:
        raise gr.Error(message)
    if not text.strip():
        raise gr.Error("type a text")
    chosen = (model or "").strip()
    model = chosen or default_model
    try:
        pairs = [(str(tok), float(bits)) for tok, bits in lib.token_surprisals(text, model)]
        signature = lib.score([text], model)["signature"] if hasattr(lib, "score") else None
    except (ValueError, TypeError, OSError) as e:
        raise _user_error(e) from e
    if not pairs:
        raise gr.Error("the model's tokenizer gave no scored tokens for this text")
    total = sum(bits for _, bits in pairs)
    peak = max(bits for _, bits in pairs) or 1.0
    # HighlightedText colours scores in [-1, 1]: scale by the largest surprisal of the text.
    highlighted = [(tok, round(bits / peak, 4)) for tok, bits in pairs]
    table = [[i, tok, round(bits, 4)] for i, (tok, bits) in enumerate(pairs)]
    mean = total / len(pairs)
    summary = (f"{len(pairs)} scored tokens · **{total:.2f} bits** in all · **{mean:.3f} bits/token** · "
               f"perplexity 2^{mean:.3f} = **{2 ** mean:.2f}** (model `{model}`"
               f"{'' if chosen else ', the default model'})")
    if signature:
        summary += f"  \nSignature: `{signature}`"
    return highlighted, table, summary


def _perplexity_tab(lm_model: str) -> None:
    gr.Markdown("Surprisal of each token given the tokens before it, −log₂ p(token | prefix), in bits. "
                "Darker tokens surprised the model more; the perplexity of the text is 2 to the mean surprisal.")
    lib, message = _library("perplexity", "token_surprisals")
    if lib is None:
        _unavailable(message)
        return
    default_model = gr.State(lm_model)
    text = gr.Textbox(EXAMPLE_TEXT, label="Text", lines=3, elem_id="ppl-text")
    model = gr.Textbox(lm_model, label="Causal LM (Hub id or local path)", elem_id="ppl-model",
                       placeholder=lm_model, info=f"empty: {lm_model}")
    button = gr.Button("Score tokens", variant="primary", elem_id="ppl-run")
    summary = gr.Markdown(elem_id="ppl-summary")
    highlighted = gr.HighlightedText(label="Surprisal (scaled to the text's maximum)", elem_id="ppl-tokens",
                                     show_legend=False, combine_adjacent=False)
    table = gr.Dataframe(headers=["position", "token", "bits"], label="Per-token surprisal",
                         elem_id="ppl-table", interactive=False)
    button.click(perplexity_surprisal, [text, model, default_model], [highlighted, table, summary],
                 api_name="perplexity_surprisal")


# --- MERGE SV accuracy ----------------------------------------------------------------------------------

def _merge_rows(table: Any) -> dict[str, list]:
    import pandas as pd

    frame = table if isinstance(table, pd.DataFrame) else pd.DataFrame(table, columns=MERGE_COLUMNS)
    frame = frame.dropna(how="all")
    missing = [c for c in MERGE_COLUMNS if c not in frame.columns]
    if missing:
        raise gr.Error(f"the table needs the columns {', '.join(MERGE_COLUMNS)}; missing {', '.join(missing)}")
    if frame.empty:
        raise gr.Error("the table is empty")

    def as_bool(value: Any, i: int) -> bool:
        if isinstance(value, str):
            if value.strip().lower() in ("true", "1", "yes", "seed"):
                return True
            if value.strip().lower() in ("false", "0", "no", ""):
                return False
            raise gr.Error(f"is_seed[{i}] = {value!r} is not true/false")
        return bool(value)

    def as_int(value: Any, column: str, i: int) -> int:
        try:
            return int(float(value))
        except (TypeError, ValueError):
            raise gr.Error(f"{column}[{i}] = {value!r} is not an integer label") from None

    rows = frame.to_dict("records")
    return {
        "predictions": [as_int(r["prediction"], "prediction", i) for i, r in enumerate(rows)],
        "references": [as_int(r["reference"], "reference", i) for i, r in enumerate(rows)],
        "seed_ids": [str(r["seed_id"]) for r in rows],
        "is_seed": [as_bool(r["is_seed"], i) for i, r in enumerate(rows)],
        "word_classes": ["" if r["word_class"] is None or (isinstance(r["word_class"], float)
                                                           and math.isnan(r["word_class"]))
                         else str(r["word_class"]) for r in rows],
    }


def merge_sv_curve(table: Any, upload: Any = None):
    lib, message = _library("merge_sv_accuracy", "plot_sv_curve")
    if lib is None:
        raise gr.Error(message)
    if upload:
        import pandas as pd

        path = upload if isinstance(upload, str) else getattr(upload, "name", str(upload))
        sep = "\t" if str(path).endswith((".tsv", ".txt")) else ","
        table = pd.read_csv(path, sep=sep, keep_default_na=False)
    inputs = _merge_rows(table)
    try:
        result = _evaluate_module("merge_sv_accuracy").compute(**inputs)
        fig = lib.plot_sv_curve(result)
    except (ValueError, TypeError) as e:
        raise _user_error(e) from e
    lines = [f"**accuracy** (all rows of variants) = {_fmt(result.get('accuracy'))}"]
    if result.get("seed_accuracy") is not None:
        lines.append(f"**seed accuracy** = {_fmt(result.get('seed_accuracy'))}")
    if result.get("matching_correctness") is not None:
        lines.append(f"**matching correctness (MC)** = {_fmt(result.get('matching_correctness'))}: the "
                     "correctness threshold whose SV accuracy is closest to the seed accuracy")
    return fig, "  \n".join(lines), json.loads(json.dumps(result, default=str))


def _merge_tab() -> None:
    gr.Markdown("A model *generalises* on a seed problem when it also gets most of the seed's variants right. "
                "SV accuracy at a correctness threshold CT is the share of seeds whose variants are classified "
                "correctly at least CT of the time. Edit the table or upload a CSV/TSV with the columns "
                f"{', '.join(MERGE_COLUMNS)}.")
    lib, message = _library("merge_sv_accuracy", "plot_sv_curve")
    if lib is None or _metric_folder("merge_sv_accuracy") is None:
        _unavailable(message or "the merge_sv_accuracy evaluate module is missing from this installation.")
        return
    table = gr.Dataframe(value=EXAMPLE_MERGE, headers=MERGE_COLUMNS, label="Predictions", interactive=True,
                         elem_id="merge-table", datatype=["str", "bool", "str", "number", "number"])
    upload = gr.File(label="…or upload a CSV/TSV", file_types=[".csv", ".tsv"], elem_id="merge-upload")
    button = gr.Button("Compute the SV curve", variant="primary", elem_id="merge-run")
    summary = gr.Markdown(elem_id="merge-summary")
    plot = gr.Plot(label="SV accuracy curve", elem_id="merge-plot")
    with gr.Accordion("Full result", open=False):
        result = gr.JSON(elem_id="merge-result")
    button.click(merge_sv_curve, [table, upload], [plot, summary, result], api_name="merge_sv_curve")


# --- LMRE -----------------------------------------------------------------------------------------------

def lmre_explain(prediction: str, references: str, similarity: str, theta: float, break_types: str):
    lib, message = _library("lmre", "explain")
    if lib is None:
        raise gr.Error(message)
    refs = [line.strip() for line in references.splitlines() if line.strip()]
    if not prediction.strip():
        raise gr.Error("type an annotation, e.g. 오늘은 / 날씨가 정말 // 좋네요")
    if not refs:
        raise gr.Error("give at least one reference annotation (one a line)")
    try:
        result = lib.explain(prediction.strip(), refs, similarity=similarity, theta=float(theta),
                             break_types=break_types)
    except (ValueError, TypeError) as e:
        raise _user_error(e) from e
    accepted = bool(result.get("accepted"))
    verdict = "✅ **Accepted**" if accepted else "❌ **Rejected**"
    relation = ">" if accepted else "≤"
    text = (f"{verdict}: best {similarity.upper()} = {_fmt(result.get('best_score'))} {relation} "
            f"θ = {float(theta):g}  \nMatching reference: `{result.get('best_reference')}`")
    if result.get("why"):
        text += f"  \n{result['why']}"
    rows = [[r.get("index"), r.get("annotation"), _fmt(r.get("score")), "; ".join(r.get("matched", [])),
             "; ".join(r.get("missing", [])), "; ".join(r.get("extra", []))]
            for r in result.get("references", []) if isinstance(r, dict)]
    return text, rows, result


def _lmre_tab() -> None:
    gr.Markdown("Phrase breaks: `/` marks an accentual-phrase boundary after a word, `//` an intonation-phrase "
                "boundary. The annotation is compared with every reference over the boundary positions; it is "
                "accepted when its best score is strictly above θ.")
    lib, message = _library("lmre", "explain")
    if lib is None:
        _unavailable(message)
        return
    prediction = gr.Textbox(EXAMPLE_PREDICTION, label="Annotation", elem_id="lmre-prediction")
    references = gr.Textbox(EXAMPLE_REFERENCES, label="References (one a line)", lines=4,
                            elem_id="lmre-references")
    with gr.Row():
        similarity = gr.Radio(["f1", "em"], value="f1", label="Similarity", elem_id="lmre-similarity")
        theta = gr.Slider(0.0, 1.0, value=0.7, step=0.05, label="θ (accept when best > θ)", elem_id="lmre-theta")
        break_types = gr.Radio(["binary", "typed"], value="binary", label="Break types", elem_id="lmre-types")
    button = gr.Button("Check", variant="primary", elem_id="lmre-run")
    verdict = gr.Markdown(elem_id="lmre-verdict")
    table = gr.Dataframe(headers=["#", "reference", "score", "matched", "missing", "extra"], wrap=True,
                         label="Every reference", interactive=False, elem_id="lmre-table")
    with gr.Accordion("Full result", open=False):
        details = gr.JSON(label="Details", elem_id="lmre-details")
    button.click(lmre_explain, [prediction, references, similarity, theta, break_types], [verdict, table, details],
                 api_name="lmre_explain")


# --- KLUE-STS -------------------------------------------------------------------------------------------

def klue_sts_scores(table: Any, threshold: float):
    import pandas as pd

    frame = table if isinstance(table, pd.DataFrame) else pd.DataFrame(table, columns=STS_COLUMNS)
    frame = frame.dropna(how="all")
    if frame.empty:
        raise gr.Error("the table is empty")
    try:
        predictions = [float(v) for v in frame["prediction"]]
        references = [float(v) for v in frame["reference"]]
    except (KeyError, TypeError, ValueError) as e:
        raise gr.Error(f"the table needs numeric columns prediction and reference ({e})") from None
    try:
        result = _evaluate_module("klue_sts").compute(predictions=predictions, references=references,
                                                      threshold=float(threshold))
    except (ValueError, TypeError) as e:
        raise _user_error(e) from e
    rows = [[key, _fmt(value)] for key, value in result.items() if isinstance(value, (int, float))]
    return rows, result


def _klue_sts_tab() -> None:
    gr.Markdown("Predicted similarity scores against gold scores on KLUE-STS's 0–5 scale: Pearson r, Spearman "
                "ρ, and the F1 of the *paraphrase* class after binarising both at the threshold (0–1 scale).")
    if _metric_folder("klue_sts") is None:
        _unavailable("the klue_sts evaluate module is missing from this installation.")
        return
    table = gr.Dataframe(value=EXAMPLE_STS, headers=STS_COLUMNS, datatype=["number", "number"],
                         label="Scores", interactive=True, elem_id="sts-table")
    threshold = gr.Number(3.0, label="Paraphrase threshold (score ≥ threshold)", elem_id="sts-threshold")
    button = gr.Button("Score", variant="primary", elem_id="sts-run")
    scores = gr.Dataframe(headers=["score", "value"], label="Scores", interactive=False, elem_id="sts-scores")
    with gr.Accordion("Full result", open=False):
        result = gr.JSON(elem_id="sts-result")
    button.click(klue_sts_scores, [table, threshold], [scores, result], api_name="klue_sts_scores")


# --- the app --------------------------------------------------------------------------------------------

def build_demo(bert_model: str | None = None, lm_model: str | None = None) -> gr.Blocks:
    """The playground; model defaults: argument, else environment variable, else the documented Hub id."""
    bert_model = bert_model or os.environ.get("KOMETRICS_BERT_MODEL") or DEFAULT_BERT_MODEL
    lm_model = lm_model or os.environ.get("KOMETRICS_LM_MODEL") or DEFAULT_LM_MODEL
    with gr.Blocks(title="kometrics playground") as demo:
        gr.Markdown("# kometrics playground\nKorean evaluation metrics for the Hugging Face ecosystem: try each "
                    "metric on your own sentences. Model tabs take a Hub id or a local path.")
        with gr.Tabs():
            with gr.Tab("KorBERTScore", id="korbertscore"):
                _korbertscore_tab(bert_model, demo)
            with gr.Tab("Perplexity", id="perplexity"):
                _perplexity_tab(lm_model)
            with gr.Tab("MERGE SV curve", id="merge_sv_accuracy"):
                _merge_tab()
            with gr.Tab("LMRE", id="lmre"):
                _lmre_tab()
            with gr.Tab("KLUE-STS", id="klue_sts"):
                _klue_sts_tab()
    return demo


demo = build_demo()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="kometrics playground (Gradio)")
    parser.add_argument("--bert-model", help="encoder for KorBERTScore (default: $KOMETRICS_BERT_MODEL or "
                                             f"{DEFAULT_BERT_MODEL})")
    parser.add_argument("--lm-model", help=f"causal LM for perplexity (default: $KOMETRICS_LM_MODEL or {DEFAULT_LM_MODEL})")
    parser.add_argument("--host", default=None, help="server name, e.g. 0.0.0.0")
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args(argv)
    app = build_demo(args.bert_model, args.lm_model) if (args.bert_model or args.lm_model) else demo
    app.launch(server_name=args.host, server_port=args.port)


if __name__ == "__main__":
    main()
