"""Model helpers: tiny random models built from Korean text (:mod:`.tiny`, for tests and the offline demo).

Tooling: never shipped to a Space."""
