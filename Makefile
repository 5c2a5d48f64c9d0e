PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_DIR ?= runs/demo

.PHONY: setup test lint demo bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)

setup: $(BIN)/python
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,train]'

lint:
	$(BIN)/ruff check .

test: lint
	$(BIN)/python -m pytest

demo:
	$(BIN)/envbench demo --out $(DEMO_DIR)

bench:
	$(BIN)/python bench/ingest.py --quick
	$(BIN)/python bench/generate.py --quick
	$(BIN)/python bench/evaluate.py

clean:
	rm -rf $(DEMO_DIR) .pytest_cache .ruff_cache
