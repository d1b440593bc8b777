"""Gradio Space: perplexity of a text and the surprisal of each of its tokens, coloured.

An empty model box means the default model of the mode (named on the page); after scoring the page names the
model used and the signature of the numbers (window, stride and start token, defaulted from the model).
"""

import sys
from pathlib import Path

import evaluate
import gradio as gr

metric = evaluate.load(str(Path(__file__).with_name("perplexity.py")))
# The evaluate module's siblings travel with it: the app reaches its helpers as the module's attributes.
module = sys.modules[type(metric).__module__]

DEFAULT_MODEL = "skt/kogpt2-base-v2"
#: The model an empty model box means, per mode.
DEFAULT_MODELS = {"causal": DEFAULT_MODEL, "pseudo": "klue/bert-base"}
SUMMARY_KEYS = ("corpus_perplexity", "bits_per_token", "bits_per_character", "bits_per_byte", "word_perplexity",
                "signature")


def model_hint(mode: str) -> dict:
    """The model box's placeholder and hint for ``mode``: the model an empty box means."""
    default = DEFAULT_MODELS.get(mode, DEFAULT_MODEL)
    return {"placeholder": default, "info": f"empty: {default} (the default for {mode} mode)"}


def model_default(mode: str):
    """Update the model box's hint when the mode changes."""
    return gr.update(**model_hint(mode))


def surprisal(text: str, model_id: str, mode: str):
    """Score ``text``: corpus figures, the coloured token view (share of the largest surprisal), a table, and a
    line naming the model used (and whether it was the default) with the signature of the numbers."""
    if not text or not text.strip():
        raise gr.Error("Type a text to score.")
    chosen = (model_id or "").strip()
    model_id = chosen or DEFAULT_MODELS.get(mode, DEFAULT_MODEL)
    try:
        result = metric.compute(predictions=[text], model_id=model_id, mode=mode)
        tokens = module.token_surprisals(text, model_id, mode=mode)
    except (TypeError, ValueError, OSError) as e:
        raise gr.Error(str(e)) from e
    top = max((b for _, b in tokens), default=1.0) or 1.0
    highlighted = [(piece, round(b / top, 3)) for piece, b in tokens]
    table = [[piece, round(b, 3)] for piece, b in tokens]
    summary = {"model": model_id, **{k: result[k] for k in SUMMARY_KEYS}}
    summary["token_count"] = result["token_counts"][0]
    line = (f"Scored with `{model_id}`{'' if chosen else f' (the default for {mode} mode)'}; "
            f"signature `{result['signature']}`.")
    return summary, highlighted, table, line


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
            model_id = gr.Textbox(label="Model (Hub id or local path)", value="", elem_id="model",
                                  **model_hint("causal"))
            mode = gr.Radio(["causal", "pseudo"], value="causal", label="Mode")
            button = gr.Button("Score", variant="primary")
    used = gr.Markdown(elem_id="used")
    summary = gr.JSON(label="Scores")
    view = gr.HighlightedText(label="Surprisal per token (share of the maximum)", show_legend=False)
    table = gr.Dataframe(headers=["token", "surprisal (bits)"], label="Tokens")
    button.click(surprisal, inputs=[text, model_id, mode], outputs=[summary, view, table, used],
                 api_name="surprisal")
    mode.change(model_default, inputs=mode, outputs=model_id, api_name="model_default")

if __name__ == "__main__":
    demo.launch()
