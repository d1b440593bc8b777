"""Gradio Space: perplexity of a text and the surprisal of each of its tokens, coloured."""

import sys
from pathlib import Path

import evaluate
import gradio as gr

metric = evaluate.load(str(Path(__file__).with_name("perplexity.py")))
_module = sys.modules[type(metric).__module__]

DEFAULT_MODEL = "skt/kogpt2-base-v2"
SUMMARY_KEYS = ("corpus_perplexity", "bits_per_token", "bits_per_character", "bits_per_byte", "word_perplexity",
                "signature")


def surprisal(text: str, model_id: str, mode: str):
    """Score ``text``: corpus figures, the coloured token view (share of the largest surprisal) and a table."""
    if not text or not text.strip():
        raise gr.Error("Type a text to score.")
    model_id = (model_id or "").strip() or (DEFAULT_MODEL if mode == "causal" else "klue/bert-base")
    try:
        result = metric.compute(predictions=[text], model_id=model_id, mode=mode)
        tokens = _module.token_surprisals(text, model_id, mode=mode)
    except (TypeError, ValueError, OSError) as e:
        raise gr.Error(str(e)) from e
    top = max((b for _, b in tokens), default=1.0) or 1.0
    highlighted = [(piece, round(b / top, 3)) for piece, b in tokens]
    table = [[piece, round(b, 3)] for piece, b in tokens]
    summary = {k: result[k] for k in SUMMARY_KEYS}
    summary["token_count"] = result["token_counts"][0]
    return summary, highlighted, table


with gr.Blocks(title="Korean perplexity") as demo:
    gr.Markdown(
        "# Perplexity and per-token surprisal\n"
        "Surprisal of a token = -log2 P(token | context), in bits. Darker = more surprising (relative to the "
        "most surprising token of the text). `causal` scores a causal LM (e.g. skt/kogpt2-base-v2); "
        "`pseudo` masks one token at a time in a masked LM (e.g. klue/bert-base). Bits per character compare "
        "models with different tokenizers; perplexity does not."
    )
    with gr.Row():
        text = gr.Textbox(label="Text", lines=3, value="한국어 문장의 퍼플렉서티를 계산합니다.")
        with gr.Column():
            model_id = gr.Textbox(label="Model (Hub id or local path)", value=DEFAULT_MODEL)
            mode = gr.Radio(["causal", "pseudo"], value="causal", label="Mode")
            button = gr.Button("Score", variant="primary")
    summary = gr.JSON(label="Scores")
    view = gr.HighlightedText(label="Surprisal per token (share of the maximum)", show_legend=False)
    table = gr.Dataframe(headers=["token", "surprisal (bits)"], label="Tokens")
    button.click(surprisal, inputs=[text, model_id, mode], outputs=[summary, view, table], api_name="surprisal")

if __name__ == "__main__":
    demo.launch()
