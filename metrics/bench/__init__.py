"""Benchmarks and experiments: each metric against its reference implementation (``kometrics bench <metric>``),
the korbertscore layer sweep and the Korean BERTScore paper's paraphrase experiment (:mod:`.paraphrase`).

Tooling: imports the metrics as ``kometrics.<name>``; never shipped to a Space."""
