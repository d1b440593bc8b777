"""The Korean BERTScore paper's paraphrase experiment: n-gram metrics and korbertscore at every layer against
human scores (Tables 2-4), on a corpus built by :mod:`kometrics.datasets_scripts.paraphrase`.

- :mod:`.ngram`: sentence BLEU, GLEU, TER, chrF; :mod:`.bert`: korbertscore at every layer.
- :mod:`.correlation`: Pearson/Spearman with bootstrap intervals; :mod:`.benchmark`: Tables 2-4.
"""

from .benchmark import BenchmarkConfig, BenchmarkResult, run_benchmark, write_outputs

__all__ = ["BenchmarkConfig", "BenchmarkResult", "run_benchmark", "write_outputs"]
