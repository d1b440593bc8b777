"""MERE variant generator and MERGE dataset builder for Korean NLI (kiwipiepy + a masked or causal LM).

Not imported by the ``merge_sv_accuracy`` metric: scoring needs neither kiwipiepy nor transformers.
"""

from .build import (
    LABELS,
    apply_review,
    build_dataset,
    build_rows,
    export_review_csv,
    read_jsonl,
    read_review_csv,
    read_seeds,
    sample_variants,
    write_dataset,
)
from .causal import CausalLMScorer, sentence_logprobs
from .mere import (
    WORD_CLASSES,
    MaskScores,
    MereOptions,
    MLMFillMask,
    Seed,
    find_targets,
    generate_variants,
    scripted_scorer,
    word_class,
)

__all__ = [
    "CausalLMScorer",
    "LABELS",
    "WORD_CLASSES",
    "MaskScores",
    "MereOptions",
    "MLMFillMask",
    "Seed",
    "apply_review",
    "build_dataset",
    "build_rows",
    "export_review_csv",
    "find_targets",
    "generate_variants",
    "read_jsonl",
    "read_review_csv",
    "read_seeds",
    "sample_variants",
    "scripted_scorer",
    "sentence_logprobs",
    "word_class",
    "write_dataset",
]
