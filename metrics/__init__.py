"""kometrics: Korean evaluation metrics for the Hugging Face ecosystem.

Each metric is a sub-package whose folder is also an ``evaluate`` module::

    import evaluate
    sts = evaluate.load("metrics/klue_sts")          # from a checkout
    from kometrics.klue_sts import compute_metrics  # as a library

The package maps to the ``metrics/`` folder of the repository.
"""

__version__ = "0.1.0"

#: Metric folders, in the order the demo and the docs present them.
METRICS = ("klue_sts", "korbertscore", "perplexity", "merge_sv_accuracy", "lmre")
