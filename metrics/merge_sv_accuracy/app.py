"""Gradio Space for merge_sv_accuracy: upload predictions on a MERGE set, see the SV curve and MC."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import evaluate
import gradio as gr
import pandas as pd

metric = evaluate.load(str(Path(__file__).with_name("merge_sv_accuracy.py")))
# The evaluate module's siblings travel with it: the app reaches its helpers as the module's attributes.
module = sys.modules[type(metric).__module__]

#: Accepted column names (first match wins).
COLUMNS = {
    "predictions": ("prediction", "predictions", "pred"),
    "references": ("label", "reference", "references", "gold"),
    "seed_ids": ("seed_id", "seed_ids"),
    "is_seed": ("is_seed",),
    "word_classes": ("word_class", "word_classes"),
}

EXAMPLE = """seed_id,is_seed,word_class,label,prediction
s1,true,,0,0
s1,false,NOUN,0,0
s1,false,VERB,0,1
s1,false,NOUN,0,0
s2,true,,2,2
s2,false,ADJ,2,2
s2,false,NOUN,2,2
s3,true,,1,1
s3,false,VERB,1,0
s3,false,NOUN,1,0
s3,false,ADV,1,1
"""


def read_table(text: str, name: str = "upload.csv") -> pd.DataFrame:
    """A CSV/TSV/JSONL table with one row per seed or variant (see COLUMNS for the names)."""
    if name.endswith(".jsonl") or text.lstrip().startswith("{"):
        return pd.read_json(io.StringIO(text), lines=True, dtype=False)
    sep = "\t" if name.endswith(".tsv") else ","
    return pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False)


def _column(df: pd.DataFrame, key: str):
    for name in COLUMNS[key]:
        if name in df.columns:
            return df[name].tolist()
    return None


def _ints(values, name):
    out = []
    for i, v in enumerate(values):
        try:
            out.append(int(str(v).strip()))
        except ValueError:
            raise gr.Error(f"{name} row {i}: {v!r} is not an integer class id") from None
    return out


def _bools(values):
    out = []
    for i, v in enumerate(values):
        s = str(v).strip().lower()
        if s not in ("true", "false", "1", "0"):
            raise gr.Error(f"is_seed row {i}: {v!r} is not true/false")
        out.append(s in ("true", "1"))
    return out


def score(file, text: str, thresholds: str):
    if file is not None:
        path = Path(file if isinstance(file, str) else file.name)
        table = read_table(path.read_text(encoding="utf-8"), path.name)
    elif text and text.strip():
        table = read_table(text)
    else:
        raise gr.Error("upload a file or paste a table")
    inputs = {}
    for key in COLUMNS:
        col = _column(table, key)
        if col is None and key in ("predictions", "references", "seed_ids"):
            raise gr.Error(f"the table needs a column {COLUMNS[key][0]!r}; it has {list(table.columns)}")
        inputs[key] = col
    inputs["predictions"] = _ints(inputs["predictions"], "prediction")
    inputs["references"] = _ints(inputs["references"], "label")
    inputs["seed_ids"] = [str(s) for s in inputs["seed_ids"]]
    if inputs["is_seed"] is not None:
        inputs["is_seed"] = _bools(inputs["is_seed"])
    if inputs["word_classes"] is not None:
        inputs["word_classes"] = ["" if v is None else str(v) for v in inputs["word_classes"]]
    cts = None
    if thresholds and thresholds.strip():
        try:
            cts = [float(t) for t in thresholds.replace(",", " ").split()]
        except ValueError:
            raise gr.Error("thresholds: numbers in (0, 1] separated by spaces or commas") from None
    try:
        result = metric.compute(**{k: v for k, v in inputs.items() if v is not None}, thresholds=cts)
    except (ValueError, TypeError) as e:
        raise gr.Error(str(e)) from None
    mc = result["matching_correctness"]
    summary = (f"**MC = {mc:.2f}**" if mc is not None else "**MC: needs seed rows (is_seed)**") + (
        f" · seed accuracy {result['seed_accuracy']:.3f}" if result["seed_accuracy"] is not None else "") + (
        f" · variant accuracy {result['accuracy']:.3f} · {result['n_seeds']} seeds, {result['n_variants']} variants")
    fig = module.plot_sv_curve(result)
    return fig, summary, json.loads(json.dumps(result, default=str))


with gr.Blocks(title="MERGE seed-variant accuracy") as demo:
    gr.Markdown("# MERGE seed-variant accuracy\nUpload one row per seed problem and per variant: columns "
                "`seed_id`, `label`, `prediction`, optional `is_seed` (true on the seed row) and `word_class`. "
                "The SV curve shows the share of seeds whose share of correct variants is at least CT; MC is "
                "the CT whose SV accuracy is closest to the seed accuracy.")
    with gr.Row():
        upload = gr.File(label="predictions (csv, tsv or jsonl)", file_types=[".csv", ".tsv", ".jsonl"])
        pasted = gr.Textbox(label="... or paste a CSV table", value=EXAMPLE, lines=12)
    cts_box = gr.Textbox(label="thresholds CT (empty: 0.05 ... 1.0)", value="")
    button = gr.Button("Score", variant="primary")
    plot = gr.Plot(label="SV curve")
    summary = gr.Markdown()
    raw = gr.JSON(label="result")
    button.click(score, inputs=[upload, pasted, cts_box], outputs=[plot, summary, raw], api_name="score")

if __name__ == "__main__":
    demo.launch()
