"""LMRE: LLM-based multi-reference evaluation of Korean phrase-break annotations.

Library API (the metric module ``lmre.py``, the CLI, the demo and the Spaces all call these):

- formats: :func:`parse_annotation`, :func:`format_annotation`, :func:`canonicalize`,
  :func:`annotation_to_labels`, :func:`labels_to_annotation`, :func:`annotation_to_break_indices`,
  :func:`break_indices_to_annotation`;
- scoring: :func:`score` (the metric), :func:`explain` (one annotation, why accepted or not);
- :func:`correlate_with_human` (Pearson / Spearman against human scores);
- reference sets: :func:`load_references` (a folder written by ``kometrics lmre build``),
  :func:`references_for`; the builder itself is :mod:`kometrics.datasets_scripts.phrase_break.builder` (imported on demand);
- :func:`make_compute_metrics` for a ``transformers`` token-classification phrase-break tagger.
"""

from .analysis import acceptance_gap, correlate_with_human, format_gap_table
from .formats import (
    AP,
    IP,
    LABELS,
    NB,
    Annotation,
    AnnotationError,
    annotation_to_break_indices,
    annotation_to_labels,
    break_indices_to_annotation,
    canonicalize,
    format_annotation,
    labels_to_annotation,
    parse_annotation,
)
from .lookup import ReferenceLookup, load_reference_records, load_references, references_for
from .scoring import DEFAULT_THETA, VERSION, explain, score, signature
from .trainer import make_compute_metrics

__all__ = [
    "AP",
    "IP",
    "LABELS",
    "NB",
    "Annotation",
    "AnnotationError",
    "DEFAULT_THETA",
    "ReferenceLookup",
    "VERSION",
    "acceptance_gap",
    "annotation_to_break_indices",
    "annotation_to_labels",
    "break_indices_to_annotation",
    "canonicalize",
    "correlate_with_human",
    "explain",
    "format_annotation",
    "format_gap_table",
    "labels_to_annotation",
    "load_reference_records",
    "load_references",
    "make_compute_metrics",
    "parse_annotation",
    "references_for",
    "score",
    "signature",
]
