# Two commands set up and run everything on a fresh machine (see README.md):
#   make demo   - create .venv, install kometrics, run every metric on real Korean data
#   make test   - create .venv, install kometrics with test tools, run ruff and the whole test suite
#   make mutation - check that the tests catch a list of planted bugs (tests/mutation/mutate.py)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.kometrics-installed
DEMO_ARGS ?=
PYTEST_ARGS ?=

MUTATION_ARGS ?=

.PHONY: demo test lint browser mutation clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	# The CPU wheel of torch first: an unpinned torch would pull a multi-GB CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[all,test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/kometrics demo $(DEMO_ARGS)

# Debian's chromium for the browser tests of the Spaces (Playwright never downloads its own browser), and a
# Hangul font so that pages and plots show Korean text.
browser:
	@{ command -v chromium >/dev/null 2>&1 && fc-list 2>/dev/null | grep -qi nanum; } || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-nanum >/dev/null; }

lint: $(STAMP)
	$(BIN)/ruff check .

# The real_model tier runs on Gemma-3-270M (the gemma extra, from PyPI): converted once here (about a minute; then
# reused from ~/.cache/kometrics/models, or $KOMETRICS_MODELS) before the workers start.
test: $(STAMP) browser
	$(BIN)/ruff check .
	$(BIN)/kometrics models prepare gemma-3-270m
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 --durations=15 $(PYTEST_ARGS)

# Plant known bugs one at a time in a copy of the checkout and check that the tests catch each (prints a table;
# fails if one survives). Not part of `make test`: it reruns the matching test files once per bug.
mutation: $(STAMP) browser
	OMP_NUM_THREADS=1 $(BIN)/python tests/mutation/mutate.py $(MUTATION_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
