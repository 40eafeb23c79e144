# nandlab — one entry point for people and CI.
#   make demo   build, then run the built-in default experiment and print its table
#   make test   build, then run the Rust and the Python test suites
#   make bench  the speed benchmark (simulated host page writes per wall second)
#   make lint   rustfmt, clippy (warnings are errors), ruff, mypy, nandlab-core's module graph
#               (no cycle), references in comments, scripts/tidy.py (function length,
#               file-level import circles in every crate) and scripts/check_docs.py (the
#               README's key table and ARCHITECTURE's tree against the code),
#               scripts/check_policy_names.py (no policy name compared outside its owner): the
#               checks CI runs
#   make experiments   regenerate experiments/*/ CSVs, PNGs (needs ../shared/traces for traces)

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
CARGO  ?= cargo
NANDLAB := target/release/nandlab

.PHONY: demo test bench lint rust-test python-test setup python build experiments clean

demo: build
	$(NANDLAB) demo

build:
	$(CARGO) build --release -p nandlab-cli

bench: build
	$(NANDLAB) bench

test: rust-test python-test

# The tests build in the `ci` profile (Cargo.toml): release optimisation without LTO, which
# would otherwise run again for each of the ~40 test binaries (about 1 s per binary instead of
# about 50 s on 2 cores). `make build`, `make bench` and the Python module keep `release`.
rust-test:
	$(CARGO) test --profile ci --workspace --exclude nandlab-py

# Clippy checks every crate with its tests, nandlab-py included (pyo3 needs only a Python
# interpreter to check, not the extension-module link). It runs in the tests' `ci` profile so that
# it shares the build scripts and proc macros `make test` compiled; the crates themselves are
# checked afresh (check mode keeps no code, so it cannot reuse the release build). `ruff format`
# is not enforced: much of the Python predates it. mypy's settings are in pyproject.toml.
lint: $(VENV)/.deps
	scripts/check_references.sh
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --profile ci --workspace --tests -- -D warnings
	# The Python wheel's CLI: nandlab-cli without its `serve` feature (no OpenSSL).
	$(CARGO) clippy --profile ci -p nandlab-cli --no-default-features --tests -- -D warnings
	$(VENV)/bin/ruff check python tests/python experiments
	$(VPY) -m mypy
	$(PYTHON) scripts/module_graph.py >/dev/null
	$(PYTHON) scripts/tidy.py
	$(PYTHON) scripts/check_docs.py
	$(PYTHON) scripts/check_policy_names.py

# The Python side: a private virtualenv with the package built in place by maturin.
$(VENV)/.deps: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet "maturin>=1.5,<2" pandas matplotlib pyarrow pytest mypy pandas-stubs ruff
	# The sweeps' Ray backend and its tests; optional: without it those tests are
	# skipped with a note.
	$(VPY) -m pip install --quiet "ray>=2.9" || echo "note: Ray could not be installed: its tests will be skipped" >&2
	touch $@

python: $(VENV)/.deps
	$(VENV)/bin/maturin develop --release --quiet

python-test: python
	$(VPY) -m pytest -q

experiments: build python
	$(VPY) experiments/dac/run.py
	$(VPY) experiments/migration/run.py
	$(VPY) experiments/fab/run.py
	$(VPY) experiments/wear/run.py
	$(VPY) experiments/deb/run.py

clean:
	$(CARGO) clean
	rm -rf $(VENV)
