"""Gradio Space for KLUE-STS: a table of (prediction, reference) scores in, Pearson / Spearman / F1 out."""

from pathlib import Path

import evaluate
import gradio as gr
import pandas as pd

metric = evaluate.load(str(Path(__file__).with_name("klue_sts.py")))

EXAMPLE = pd.DataFrame({"prediction": [4.5, 0.5, 3.2, 1.0, 2.5], "reference": [5.0, 0.0, 2.8, 1.4, 3.1]})


def score(table: pd.DataFrame, threshold: float, with_ci: bool) -> dict:
    """Score the table's two columns; errors are shown to the user with the offending row."""
    if table is None or len(table) == 0:
        raise gr.Error("The table is empty: enter one (prediction, reference) pair per row.")
    table = table.dropna(how="all")
    try:
        preds = pd.to_numeric(table.iloc[:, 0], errors="raise").tolist()
        refs = pd.to_numeric(table.iloc[:, 1], errors="raise").tolist()
    except (ValueError, TypeError) as e:
        raise gr.Error(f"Every cell must be a number: {e}") from None
    kwargs = {"confidence_level": 0.95, "n_resamples": 1000, "seed": 0} if with_ci else {}
    try:
        return metric.compute(predictions=preds, references=refs, threshold=float(threshold), **kwargs)
    except (ValueError, TypeError) as e:
        raise gr.Error(str(e)) from None


with gr.Blocks(title="KLUE-STS") as demo:
    gr.Markdown(
        "# KLUE-STS\nPearson's r, Spearman's rho and F1 of the positive class (score >= threshold), exactly as "
        "the official KLUE baseline, on the 0-1 scale. Enter predicted and gold similarity scores (0-5)."
    )
    with gr.Row():
        table = gr.Dataframe(value=EXAMPLE, headers=["prediction", "reference"], datatype=["number", "number"],
                             column_count=(2, "fixed"), label="scores", interactive=True)
        with gr.Column():
            threshold = gr.Number(value=3.0, label="threshold")
            with_ci = gr.Checkbox(value=False, label="95% bootstrap confidence intervals")
            button = gr.Button("Score", variant="primary")
    output = gr.JSON(label="result")
    button.click(score, inputs=[table, threshold, with_ci], outputs=output, api_name="score")

if __name__ == "__main__":
    demo.launch()
