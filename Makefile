# The lab's two everyday commands: `make lab` and `make test`. Everything installs into .venv.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
FIRST_NOTEBOOK := notebooks/00-start-here.ipynb
SANITIZE := --nbval-sanitize-with tests/nbval-sanitize.cfg
AS_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: lab test stress bench notebooks clean

$(INSTALLED): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "The lab needs Python 3.11 or newer; run make with PYTHON=python3.11 (or newer).")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt -e .
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp jupyter/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	touch $@

lab: $(INSTALLED)
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 $(AS_ROOT) $(FIRST_NOTEBOOK)

test: $(INSTALLED)
	time $(BIN)/python -m pytest --nbval $(SANITIZE) -q

stress: $(INSTALLED)
	LAB_STRESS_RUNS=20 $(BIN)/python -m pytest -q -m stress tests/

bench: $(INSTALLED)
	$(BIN)/python tests/bench_throughput.py
	$(BIN)/python tests/bench_races.py

notebooks: $(INSTALLED)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace notebooks/*.ipynb

clean:
	rm -rf $(VENV)
