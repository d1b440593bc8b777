"""Gradio Space for LMRE: type an annotation and its references, see whether and why it is accepted."""

from __future__ import annotations

import sys
from pathlib import Path

import evaluate
import gradio as gr

metric = evaluate.load(str(Path(__file__).with_name("lmre.py")))
# The evaluate module's siblings travel with it: the app reaches its helpers as the module's attributes.
module = sys.modules[type(metric).__module__]

EXAMPLE_PREDICTION = "나는 / 밥을 먹고 // 학교에 갔다"
EXAMPLE_REFERENCES = "나는 / 밥을 먹고 / 학교에 갔다\n나는 밥을 / 먹고 학교에 갔다\n나는 / 밥을 먹고 학교에 갔다"


def judge(prediction: str, references: str, similarity: str, theta: float, break_types: str):
    """Explain the acceptance of ``prediction`` against the references (one per line)."""
    refs = [line for line in references.splitlines() if line.strip()]
    try:
        result = module.explain(prediction, refs, similarity=similarity, theta=float(theta),
                                break_types=break_types)
    except (ValueError, TypeError) as e:
        return f"**Error:** {e}", [], {}
    verdict = "✅ accepted" if result["accepted"] else "❌ rejected"
    text = f"### {verdict}\n\n{result['why']}\n\n`{result['signature']}`"
    rows = [[r["index"], r["annotation"], round(r["score"], 4), "; ".join(r["matched"]),
             "; ".join(r["missing"]), "; ".join(r["extra"])] for r in result["references"]]
    return text, rows, result


with gr.Blocks(title="LMRE: multi-reference evaluation of phrase breaks") as demo:
    gr.Markdown(
        "# LMRE: multi-reference evaluation of Korean phrase-break annotations\n"
        "Write words separated by spaces and a separate `/` (accentual phrase) or `//` (intonation phrase) "
        "after a word followed by a boundary. The prediction is accepted when its best similarity to one of "
        "the references is strictly greater than θ. The position after the last word is not scored."
    )
    with gr.Row():
        with gr.Column():
            prediction = gr.Textbox(label="Prediction (annotation)", value=EXAMPLE_PREDICTION)
            references = gr.Textbox(label="References (one per line)", value=EXAMPLE_REFERENCES, lines=6)
            similarity = gr.Radio(["f1", "em"], value="f1", label="Similarity")
            break_types = gr.Radio(["binary", "typed"], value="binary", label="Break types")
            theta = gr.Slider(0.0, 0.99, value=0.5, step=0.01, label="θ (accepted iff best > θ)")
            button = gr.Button("Evaluate", variant="primary")
        with gr.Column():
            verdict = gr.Markdown(elem_id="verdict")
            table = gr.Dataframe(headers=["#", "reference", "score", "matched", "missing", "extra"],
                                 label="Every reference", wrap=True)
            details = gr.JSON(label="Details")
    button.click(judge, [prediction, references, similarity, theta, break_types], [verdict, table, details],
                 api_name="explain")

if __name__ == "__main__":
    demo.launch()
