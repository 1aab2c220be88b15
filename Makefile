# Every target sets up its own virtual environment on first use; a second run
# reuses it (the stamp is rebuilt only when the package metadata changes).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: test experiments experiments-quick bench bench-huge lint warm clean clean-cache

$(STAMP): setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,ray]'
	$(VENV)/bin/tabular-warm > /dev/null
	touch $(STAMP)

# worksteal: each worker starts on its own half of the suite, so the two rarely compile
# the same kernel at once (as round-robin dealing makes them do)
test: $(STAMP)
	$(PY) -m pytest -n 2 --dist worksteal -q

experiments: $(STAMP)
	$(PY) -m experiments

experiments-quick: $(STAMP)
	$(PY) -m experiments --quick

bench: $(STAMP)
	$(PY) -m benchmarks

# Value iteration on 10^8 states (minutes, ~9 GiB): never part of `make bench`.
bench-huge: $(STAMP)
	$(PY) -m benchmarks huge

# Compile every public entry point's kernels into numba's on-disk cache (done once after
# installing), so that a first call loads them instead of compiling.
warm: $(STAMP)
	$(VENV)/bin/tabular-warm

lint: $(STAMP)
	$(PY) -m ruff check tabular envs experiments tests benchmarks

# Numba's on-disk cache is keyed on each kernel's own source file, not on the
# helpers it inlines from other modules: after editing tabular/model/mdp.py, rng.py or
# policy.py, drop the cache so every kernel is recompiled.
clean-cache:
	find tabular envs experiments tests benchmarks -name '*.nbi' -delete -o -name '*.nbc' -delete

clean: clean-cache
	rm -rf $(VENV) results build *.egg-info
