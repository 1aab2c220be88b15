# Every target sets up its own virtual environment on first use; a second run
# reuses it (the stamp is rebuilt only when the package metadata changes).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# the package and its extras installed, nothing compiled: all that `make docs` needs
INSTALL_STAMP := $(VENV)/.packages-installed

.PHONY: browser docs test experiments experiments-quick bench bench-huge lint warm clean clean-cache

$(INSTALL_STAMP): setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,ray]'
	touch $(INSTALL_STAMP)

# the install, the browser for its tests, and every kernel compiled (tabular-warm)
$(STAMP): $(INSTALL_STAMP)
	$(MAKE) --no-print-directory browser
	$(VENV)/bin/tabular-warm > /dev/null
	touch $(STAMP)

# Headless Chromium and its driver for the browser tests (Debian's packages), when
# missing: as root, or through sudo where it needs no password; where neither works the
# tests are skipped, saying why, and the set-up goes on.
APT_BROWSER := apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -qq chromium chromium-driver
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then sh -c '$(APT_BROWSER)' || echo "$(NO_BROWSER)"; \
	elif sudo -n true 2>/dev/null; then sudo sh -c '$(APT_BROWSER)' || echo "$(NO_BROWSER)"; \
	else echo "$(NO_BROWSER)"; fi
NO_BROWSER := could not install chromium and chromium-driver: the browser test is skipped

# The documentation site into docs/_build/html: every warning is an error (all of them
# are reported first), every cross-reference must resolve; -E rereads every docstring,
# which Sphinx's own change tracking would miss. Sphinx imports the package and runs no
# kernel: the docs install compiles nothing (no tabular-warm).
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): $(INSTALL_STAMP)
	$(PY) -m pip install --quiet -e '.[dev,ray,docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(PY) -m sphinx -E -b html -W --keep-going -n -q docs docs/_build/html

# worksteal: each worker starts on its own half of the suite, so the two rarely compile
# the same kernel at once (as round-robin dealing makes them do)
test: $(STAMP)
	$(PY) -m pytest -n 2 --dist worksteal -q

experiments: $(STAMP)
	$(PY) -m tabular.experiments

experiments-quick: $(STAMP)
	$(PY) -m tabular.experiments --quick

# The benchmarks' optional peers (JAX) come with the [bench] extra.
BENCH_STAMP := $(VENV)/.bench-installed
$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,ray,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(PY) -m benchmarks

# Value iteration on 10^8 states (minutes, ~9 GiB): never part of `make bench`.
bench-huge: $(STAMP)
	$(PY) -m benchmarks huge

# Compile every public entry point's kernels into numba's on-disk cache (done once after
# installing), so that a first call loads them instead of compiling.
warm: $(STAMP)
	$(VENV)/bin/tabular-warm

# ruff, then mypy on tabular/ and envs/ (its settings: setup.cfg's [mypy] section)
lint: $(STAMP)
	$(PY) -m ruff check tabular envs experiments tests benchmarks
	$(PY) -m mypy

# Numba's on-disk cache is keyed on each kernel's own source file, not on the
# helpers it inlines from other modules: after editing tabular/model/mdp.py, rng.py or
# policy.py, drop the cache so every kernel is recompiled.
clean-cache:
	find tabular envs experiments tests benchmarks -name '*.nbi' -delete -o -name '*.nbc' -delete

clean: clean-cache
	rm -rf $(VENV) results build docs/_build *.egg-info
