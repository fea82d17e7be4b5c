# Two commands on a fresh machine: `make book` and `make test`. Both create .venv first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: venv book test bench clean

venv: $(STAMP)

# requirements.lock pins every package (torch==2.13.0, the CPU build); the package itself goes in editable.
$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

book: venv
	$(BIN)/attncoda book

test: venv
	$(BIN)/python -m pytest

bench: venv
	$(BIN)/python benchmarks/calibration_grid.py

clean:
	rm -rf _build
