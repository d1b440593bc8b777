"""Gradio Space: score a Korean sentence pair with KorBERTScore and show the word-piece alignment heatmap.

An empty model box means the default model and an empty layer box the model's default layer; the page names
both defaults before scoring and the model and layer actually used after.
"""

import os
import sys
from pathlib import Path

import evaluate
import gradio as gr

metric = evaluate.load(str(Path(__file__).with_name("korbertscore.py")))
# The evaluate module's siblings travel with it: the app reaches its helpers as the module's attributes.
module = sys.modules[type(metric).__module__]

DEFAULT_MODEL = os.environ.get("KORBERTSCORE_MODEL", module.DEFAULT_MODEL)


def parse_layer(layer) -> int | None:
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


def layer_hint(model_type: str) -> dict:
    """The layer box's placeholder and hint for ``model_type``: its default layer and where it comes from (a
    model outside the known table is loaded to read its depth, once, as scoring would load it)."""
    model = (model_type or "").strip() or DEFAULT_MODEL
    try:
        layer, why = module.default_layer(model)
    except (OSError, ValueError) as e:
        return {"placeholder": "default", "info": f"empty: the model's default (cannot read {model}: {e})"}
    return {"placeholder": f"default ({layer})", "info": f"empty: the default layer of {model}: {layer} ({why})"}


def layer_default(model_type: str):
    """Update the layer box's hint when the model changes (and when the page opens)."""
    return gr.update(**layer_hint(model_type))


def score_pair(candidate: str, reference: str, model_type: str, num_layers, idf: bool):
    """Score one pair; return the result (with the model and layer used), the alignment figure, and a line
    that names the model and layer used and whether they were the defaults."""
    layer = parse_layer(num_layers)
    model = (model_type or "").strip() or DEFAULT_MODEL
    try:
        result = metric.compute(predictions=[candidate], references=[reference], model_type=model,
                                num_layers=layer, idf=idf)
    except (TypeError, ValueError, OSError) as e:
        raise gr.Error(str(e)) from e
    used = result["num_layers"]
    fig = module.plot_alignment(candidate, reference, model_type=model, num_layers=used)
    summary = {"model": model, **{k: (v[0] if isinstance(v, list) else v) for k, v in result.items()}}
    line = (f"Scored with `{model}`{' (the default model)' if not (model_type or '').strip() else ''} at "
            f"layer {used}{' (its default layer)' if layer is None else ''}.")
    return summary, fig, line


with gr.Blocks(title="KorBERTScore") as demo:
    gr.Markdown(
        "# KorBERTScore\n"
        "BERTScore for Korean: greedy matching of contextual word-piece embeddings (Hyeon & Choi, 2019). "
        "Precision matches every candidate piece, recall every reference piece; F1 is their harmonic mean. "
        "The heatmap shows the cosine similarity of every piece pair: a dot marks each candidate piece's "
        "match, a ring each reference piece's match. Leave the layer empty for the model's default layer."
    )
    with gr.Row():
        candidate = gr.Textbox(label="candidate (prediction)", value="오늘은 날씨가 정말 맑다.")
        reference = gr.Textbox(label="reference", value="오늘 날씨가 아주 화창하다.")
    with gr.Row():
        model_type = gr.Textbox(label="model (Hub id or local folder)", value=DEFAULT_MODEL,
                                placeholder=DEFAULT_MODEL, info=f"empty: {DEFAULT_MODEL}", elem_id="model")
        num_layers = gr.Textbox(label="layer (empty: the model's default)", value="", placeholder="default",
                                elem_id="layer")
        idf = gr.Checkbox(label="idf weighting (from the reference)", value=False)
    button = gr.Button("Score")
    used = gr.Markdown(elem_id="used")
    result = gr.JSON(label="result")
    plot = gr.Plot(label="alignment")
    button.click(score_pair, inputs=[candidate, reference, model_type, num_layers, idf],
                 outputs=[result, plot, used], api_name="score")
    gr.on([model_type.submit, model_type.blur, demo.load], layer_default, inputs=model_type, outputs=num_layers,
          api_name="layer_default")

if __name__ == "__main__":
    demo.launch()
