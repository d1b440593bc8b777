"""Dataset builders and readers of the raw Korean corpora (``kometrics.datasets_scripts``)."""
