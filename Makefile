# tfcc: the two commands of the README are `make demo` and `make test`. Both install what they need
# (a project venv with the Python package built by maturin; Debian packages via apt where root is
# needed) and then run. Nothing relies on what was installed by hand.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
CARGO ?= cargo
# The cargo profile of the installed package: `release` for the demo and benchmarks; `make test`
# builds with `ci` (Cargo.toml: release optimisation, no debug info, assertions on), so the
# extension, the native `tfcc run` and the Rust tests share one build of the dependencies.
PROFILE ?= release
# cargo's output directory (helpers and CI may point CARGO_TARGET_DIR elsewhere).
TARGET_DIR := $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)
# Where `make demo` writes its sweep and report (a re-run resumes: only missing runs run).
OUT ?= out/fairness-map

.PHONY: demo test install rust-tools ns2 chromium ffmpeg tshark testbed-tools debs-start lint rust-test py-test fmt bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# The Python package (and its compiled core) into the venv, and the native `tfcc run`
# executable beside it (python/tfcc/_bin, see python/tfcc/entry.py); cargo's incremental build
# makes a repeated install cheap.
#
# The Python dependencies install in the background (scripts/python_deps.py) while cargo builds
# `tfcc-run` and with it nearly all of the Rust code; `maturin develop` then finds them
# satisfied and compiles only pyo3 and the bindings. (maturin alone runs pip first: about two
# minutes spent waiting on the package index before any compiling.) `-p tfcc-py` beside
# `--bin tfcc-run`: cargo resolves features as maturin does for tfcc-py, so maturin reuses this
# build (alone, tfcc-run's narrower feature set recompiled syn up to parquet).
install: $(BIN)/python
	$(BIN)/python -m pip install -q "maturin>=1.7,<2"
	@log=$$(mktemp); \
	  $(BIN)/python scripts/python_deps.py --extra test >$$log 2>&1 & pip=$$!; \
	  echo "$(CARGO) build --profile $(PROFILE) -q -p tfcc-run -p tfcc-py --bin tfcc-run (pip installs the Python dependencies beside it)"; \
	  $(CARGO) build --profile $(PROFILE) -q -p tfcc-run -p tfcc-py --bin tfcc-run; built=$$?; \
	  wait $$pip; deps=$$?; cat $$log; rm -f $$log; \
	  if [ $$deps != 0 ]; then echo "error: installing the Python dependencies failed (pip's output above)" >&2; fi; \
	  exit $$(( built != 0 || deps != 0 ))
	PIP_QUIET=1 VIRTUAL_ENV=$(CURDIR)/$(VENV) $(BIN)/maturin develop --profile $(PROFILE) --extras test -q
	install -D -m 755 $(TARGET_DIR)/$(PROFILE)/tfcc-run python/tfcc/_bin/tfcc-run

# rustfmt and clippy are rustup components; a fresh toolchain may lack them.
rust-tools:
	@command -v rustup >/dev/null && rustup component add rustfmt clippy >/dev/null 2>&1 || true

# A Debian package's installer runs here, or, under `make test`, was started in the background
# at the run's start (DEBS_DIR, scripts/debs.sh) and is waited for here.
DEBS_DIR ?=
deb = if [ -n "$(DEBS_DIR)" ]; then bash scripts/debs.sh wait $(DEBS_DIR) $(1); else bash scripts/install-$(1).sh; fi

ns2:
	@$(call deb,ns2)

# The headless browser the report test renders `tfcc report` in.
chromium:
	@$(call deb,chromium)

# ffmpeg with its H.261 encoder and decoder, for `tfcc video-quality` and its tests (002 R7-R9).
ffmpeg:
	@$(call deb,ffmpeg)

# tshark with Lua, which reads the simulator's and the testbed's pcap files with
# tools/wireshark/tfcc.lua (tests/test_pcap.py, crates/tfcc-run/tests/testbed_backend.rs).
tshark:
	@$(call deb,tshark)

# ip, tc and ethtool for the emulated testbed's tests (they run as root only).
testbed-tools:
	@$(call deb,testbed-tools)

# The equation table first, then the flagship: 002's TCP-friendliness map as a sweep + report.
demo: install
	$(BIN)/tfcc demo
	$(BIN)/tfcc sweep scenarios/002-fairness-map.toml --out $(OUT)
	$(BIN)/tfcc report $(OUT)

# clippy and rustdoc under the install's profile: their proc macros and build scripts (syn,
# serde_derive, pyo3's build configuration, ...) are then the ones `install` compiled; under the
# default dev profile they were compiled again. clippy from an installed `ci` tree here: 165 s
# of CPU against 229 s under dev.
lint: rust-tools install
	$(CARGO) fmt --all --check
	$(CARGO) clippy --profile $(PROFILE) --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --profile $(PROFILE) --workspace --no-deps --quiet
	$(BIN)/ruff check python tests bench scripts examples
	$(BIN)/ruff format --check python tests bench scripts examples

# tfcc-py is tested from Python (pytest), where the extension module is importable; it has no
# Rust test target, but selecting it with the extension's feature makes cargo resolve every
# dependency's features as `install` did (see Cargo.toml), so the tests reuse that build. The
# examples are left out (clippy --all-targets checks that they compile; none is a test). `--tests`
# takes the libraries' unit tests where `test = true`; an explicit `--lib` would also build
# tfcc-py's (`test = false`) and with it pyo3 a second time, for a binary with no test in it.
RUST_TEST := $(CARGO) test --profile ci --workspace --features tfcc-py/extension-module
# tshark: the smoke testbed test reads its pcap files with tools/wireshark/tfcc.lua.
rust-test: testbed-tools tshark
	TFCC_SKIP_TESTBED=$(OVERLAP_TESTBED) $(RUST_TEST) --bins --tests
	$(RUST_TEST) --doc

# Parallel workers (pytest-xdist), one per core: a serial run keeps one core about half busy (its
# tests wait on subprocesses, signals, sockets and ns-2), and `make test` had come within 14 s of
# its 15-minute budget on two cores. On this 2-core machine, idle: 2 workers 158 s, 3 workers
# 183 s (each worker makes its own session fixtures, e.g. the coded video clip); serially 233 s
# before (both with `--dist worksteal`). Plain `pytest` stays serial; PYTEST_WORKERS=0 makes
# this one serial too.
PYTEST_WORKERS ?= auto
py-test: install ns2 chromium ffmpeg tshark testbed-tools
	@if [ "$(OVERLAP_TESTBED)" = 1 ]; then \
	  log=$$(mktemp); \
	  echo "$(RUST_TEST) --test testbed_backend (in the background) and pytest -q -n $(PYTEST_WORKERS)"; \
	  $(RUST_TEST) --test testbed_backend >$$log 2>&1 & tb=$$!; \
	  $(BIN)/pytest -q -n $(PYTEST_WORKERS); py=$$?; \
	  wait $$tb; t=$$?; \
	  echo "--- the testbed tests, run beside pytest (exit $$t):"; cat $$log; rm -f $$log; \
	  exit $$(( py != 0 || t != 0 )); \
	else \
	  echo "$(BIN)/pytest -q -n $(PYTEST_WORKERS)"; $(BIN)/pytest -q -n $(PYTEST_WORKERS); \
	fi

# The root-only testbed tests (crates/tfcc-run/tests/testbed_backend.rs: 14 runs in real time,
# their sessions and relay under SCHED_FIFO) run beside the Python tests instead of before them:
# with the two one after the other `make test` took 884 s at 02854c4, 16 s short of its
# 15-minute budget. pytest keeps its two workers beside them: in the fresh-clone runs at 7b4671b
# the testbed tests took 222 s beside two workers and 219 s beside one (at bc88200), and pytest
# 180 s against 278 s, so the whole run took 783 s against 838 s. They had passed beside loads
# of 10-18 from other agents' testbed runs and builds too. `make rust-test` alone still runs them.
# Starting them in the background right after the install instead, beside lint and the Rust
# build (tried at 8e71c84, session 24): fresh-clone runs of 796 s (another agent's build beside
# it) and 783 s (quiet; 604 Python tests in 182 s) against 766 s before; building their two
# binaries (24 s) then sits before lint on the critical path, and pytest, CPU-bound, ends the
# run either way. Reverted; they passed beside a from-scratch clippy and Rust build 3 of 3.
#
# The Debian packages are installed in the background from the start (debs-start), beside the
# install, lint and Rust build, and each target that needs one waits for its installer.
test: PROFILE = ci
test: OVERLAP_TESTBED = 1
test: DEBS_DIR = $(CURDIR)/.debs
test: debs-start lint rust-test py-test

debs-start:
	@bash scripts/debs.sh start $(DEBS_DIR)

# tfcc and ns-2 on the same dumbbells, one after the other, into bench/RESULTS.md (issue 4), then
# the criterion microbenchmarks (event queue, per-ACK cost).
bench: install ns2
	@bash scripts/install-gnu-time.sh
	$(BIN)/python bench/compare.py
	$(CARGO) bench -p tfcc-sim

fmt:
	$(CARGO) fmt --all
	$(BIN)/ruff format python tests bench scripts examples
	$(BIN)/ruff check --fix python tests bench scripts examples
