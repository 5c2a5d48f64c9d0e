PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_DIR ?= runs/demo
# Touched after a complete install; rebuilt when the package's metadata or build script changes, so
# `make demo` and `make test` on a fresh clone install first, and a later edit of the dependencies
# (or a new top-level package, which an editable install only finds after reinstalling) reinstalls.
STAMP := $(VENV)/.installed

.PHONY: setup test lint demo bench docs clean

$(STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,train,hf]'
	touch $@

# Always reinstalls (rebuilds the compiled extractor too); the other targets install only when needed.
setup:
	rm -f $(STAMP)
	$(MAKE) $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .

# the suite in parallel (pytest-xdist, one worker per core); each test makes its own files (tmp_path), so the
# order and the workers never change a result. PYTEST_WORKERS=0 runs it in one process.
PYTEST_WORKERS ?= auto
test: lint
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS)

demo: $(STAMP)
	$(BIN)/envbench demo --out $(DEMO_DIR)

# docs/cli.md from every command's --help (tests/envbench/cli/test_reference.py checks it is current).
docs: $(STAMP)
	$(BIN)/python -m envbench.cli.reference

bench: $(STAMP)
	$(BIN)/python bench/ingest.py --quick
	$(BIN)/python bench/generate.py --quick
	$(BIN)/python bench/evaluate.py

clean:
	rm -rf $(DEMO_DIR) .pytest_cache .ruff_cache

# The ICL harness against a real llama.cpp server on 127.0.0.1: prompts -> run -> parse -> evaluate on
# 3 Re-DocRED test documents, a cached rerun, a server killed mid-run. The first run installs the server
# (compiled: ~6 minutes on 2 cores) and a 98 MB model into ~/.cache/envbench-icl (ENVBENCH_ICL_CACHE).
.PHONY: icl-smoke
icl-smoke: $(STAMP)
	$(BIN)/python bench/icl_smoke.py

# Every paper preset (models/presets/ less cpu-*) trains 20 steps on 16 Re-DocRED dev documents and predicts, and
# one trains under torchrun --nproc_per_node 2 (bench/gpu_smoke.py). Without encoders it runs tiny random BERT
# and RoBERTa encoders on the CPU; on a lent GPU, point it at the real ones:
#   make gpu-smoke GPU_SMOKE_ARGS="--bert DIR --roberta DIR --device cuda"
GPU_SMOKE_ARGS ?=
.PHONY: gpu-smoke
gpu-smoke: $(STAMP)
	ENVBENCH_SHARED=$(SHARED) $(BIN)/python bench/gpu_smoke.py $(GPU_SMOKE_ARGS)

# Env-Re-DocRED test through the offline flow from ../shared/data (kb-from-corpus dev+test -> ingest-dump
# -> generate test --seeds 5), pinned by tests/locks/env-redocred-test.lock.json (docs/verify.md).
# `make lock` rewrites the lock after a deliberate change of the benchmark (commit it with the change);
# `make verify-lock` (run by .ci/run) regenerates and fails on any difference from the committed lock;
# VERIFY_ARGS="--published runs/lock/env" names the entity and field when runs/lock/env holds the
# lock's run (`make lock` of the committed code leaves it there).
SHARED ?= ../shared/data
LOCK_RUN ?= runs/lock
REDOCRED_LOCK ?= tests/locks/env-redocred-test.lock.json
.PHONY: lock verify-lock lock-inputs
lock-inputs: $(STAMP)
	$(BIN)/envbench kb-from-corpus $(SHARED)/re-docred/dev_revised.json $(SHARED)/re-docred/test_revised.json \
	    --out $(LOCK_RUN)/redocred-kb.json.gz --links $(LOCK_RUN)/redocred-links.json >/dev/null
	$(BIN)/envbench ingest-dump $(LOCK_RUN)/redocred-kb.json.gz --out $(LOCK_RUN)/index --force --no-progress >/dev/null

lock: lock-inputs
	$(BIN)/envbench generate $(SHARED)/re-docred/test_revised.json --index $(LOCK_RUN)/index \
	    --links $(LOCK_RUN)/redocred-links.json --exclude-names-from $(SHARED)/re-docred/dev_revised.json \
	    --seeds 5 --out $(LOCK_RUN)/env --force --no-progress >/dev/null
	$(BIN)/envbench lock $(LOCK_RUN)/env --index $(LOCK_RUN)/index --out $(REDOCRED_LOCK)

verify-lock: lock-inputs
	$(BIN)/envbench verify $(REDOCRED_LOCK) --docs $(SHARED)/re-docred/test_revised.json \
	    --index $(LOCK_RUN)/index --links $(LOCK_RUN)/redocred-links.json \
	    --exclude-names-from $(SHARED)/re-docred/dev_revised.json $(VERIFY_ARGS)
