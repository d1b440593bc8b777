"""Streaming and sharding runners (jsonl in/out, resumable, ``accelerate`` sharding) for the model-based metrics.

Tooling: imports the metrics as ``kometrics.<name>``; never shipped to a Space."""
