"""Gradio Space: score a Korean sentence pair with KorBERTScore and show the word-piece alignment heatmap."""

import os
import sys
from pathlib import Path

import evaluate
import gradio as gr

metric = evaluate.load(str(Path(__file__).with_name("korbertscore.py")))
# The plotting helpers travel with the metric module that evaluate copied.
plot_alignment = sys.modules[type(metric).__module__].plot_alignment

DEFAULT_MODEL = os.environ.get("KORBERTSCORE_MODEL", "klue/bert-base")


def score_pair(candidate: str, reference: str, model_type: str, num_layers: float, idf: bool):
    """Score one pair; return the result dict and the alignment figure."""
    layer = None if num_layers is None or int(num_layers) < 0 else int(num_layers)
    model = model_type.strip() or DEFAULT_MODEL
    result = metric.compute(predictions=[candidate], references=[reference], model_type=model,
                            num_layers=layer, idf=idf)
    fig = plot_alignment(candidate, reference, model_type=model, num_layers=result["num_layers"])
    summary = {k: (v[0] if isinstance(v, list) else v) for k, v in result.items()}
    return summary, fig


with gr.Blocks(title="KorBERTScore") as demo:
    gr.Markdown(
        "# KorBERTScore\n"
        "BERTScore for Korean: greedy matching of contextual word-piece embeddings (Hyeon & Choi, 2019). "
        "Precision matches every candidate piece, recall every reference piece; F1 is their harmonic mean. "
        "The heatmap shows the cosine similarity of every piece pair: a dot marks each candidate piece's "
        "match, a ring each reference piece's match. Layer -1 uses the model's documented default."
    )
    with gr.Row():
        candidate = gr.Textbox(label="candidate (prediction)", value="오늘은 날씨가 정말 맑다.")
        reference = gr.Textbox(label="reference", value="오늘 날씨가 아주 화창하다.")
    with gr.Row():
        model_type = gr.Textbox(label="model (Hub id or local folder)", value=DEFAULT_MODEL)
        num_layers = gr.Number(label="layer (-1 = default)", value=-1, precision=0)
        idf = gr.Checkbox(label="idf weighting (from the reference)", value=False)
    button = gr.Button("Score")
    result = gr.JSON(label="result")
    plot = gr.Plot(label="alignment")
    button.click(score_pair, inputs=[candidate, reference, model_type, num_layers, idf], outputs=[result, plot],
                 api_name="score")

if __name__ == "__main__":
    demo.launch()
