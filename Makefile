# The lab's two everyday commands: `make lab` and `make test`. Everything installs into .venv.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
LAB_INSTALLED := $(VENV)/.installed-lab
TEST_INSTALLED := $(VENV)/.installed-test
WHEELHOUSE := wheelhouse
# With a wheelhouse/ (from `make wheelhouse`), every install comes from it and pip never touches the network.
PIP_FROM := $(if $(wildcard $(WHEELHOUSE)), --no-index --find-links $(WHEELHOUSE))
PIP_INSTALL := $(BIN)/pip install --quiet --disable-pip-version-check$(PIP_FROM)
FIRST_NOTEBOOK := notebooks/00-start-here.ipynb
SANITIZE := --nbval-sanitize-with tests/nbval-sanitize.cfg
AS_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: lab test stress bench doctor wheelhouse guide notebooks book clean

$(LAB_INSTALLED): requirements.txt pyproject.toml jupyter/install_settings.py jupyter/*.json
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "The lab needs Python 3.11 or newer; run make with PYTHON=python3.11 (or newer).")'
	$(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) -r requirements.txt -e .
	$(BIN)/python jupyter/install_settings.py
	touch $@

# The book's tools (Jupyter Book 1, Sphinx) live in a venv of their own.
BOOK_VENV := .venv-book
BOOK_INSTALLED := $(BOOK_VENV)/.installed-book
BOOK_DATA := build/book-data/atlas.json
BOOK_HTML := build/book/_build/html

$(BOOK_INSTALLED): requirements-book.txt
	$(PYTHON) -m venv $(BOOK_VENV)
	$(BOOK_VENV)/bin/pip install --quiet --disable-pip-version-check$(PIP_FROM) -r requirements-book.txt
	touch $@

$(TEST_INSTALLED): $(LAB_INSTALLED) requirements-test.txt
	$(PIP_INSTALL) -r requirements-test.txt
	touch $@

# JupyterLab's port; when it is taken, JupyterLab tries the next ones (8889, 8890, ...) and prints the URL it got.
PORT ?= 8888
# `make test` runs this many pytest workers: most tests wait on a server, a kernel or a browser, so more than the cores.
TEST_WORKERS ?= 3

lab: $(LAB_INSTALLED)
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) --ServerApp.root_dir=. $(AS_ROOT) $(FIRST_NOTEBOOK)

test: $(TEST_INSTALLED)
	time $(BIN)/python -m pytest --nbval $(SANITIZE) -q -rfEs -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

stress: $(TEST_INSTALLED)
	LAB_STRESS_RUNS=20 $(BIN)/python -m pytest -q -m stress tests/

bench: $(TEST_INSTALLED)
	$(BIN)/python tests/bench_throughput.py
	$(BIN)/python tests/bench_races.py
	$(BIN)/python tests/bench_explore.py

doctor: $(LAB_INSTALLED)
	$(BIN)/python -m helpers.doctor

wheelhouse:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip download --quiet --disable-pip-version-check --only-binary=:all: --dest $(WHEELHOUSE) \
		-r requirements.txt -r requirements-test.txt -r requirements-book.txt "setuptools>=68" wheel
	@echo "$(WHEELHOUSE)/: $$(ls $(WHEELHOUSE) | wc -l) wheels, $$(du -sh $(WHEELHOUSE) | cut -f1); make lab, test, doctor and book now install from it"

guide: $(LAB_INSTALLED)
	$(BIN)/python tools/guide.py

# The checkers these runs make are recorded in build/, never in the learner's own progress file.
notebooks: $(LAB_INSTALLED)
	DYNAMODB_LAB_PROGRESS=$(CURDIR)/build/make-notebooks-progress.json \
		$(BIN)/jupyter nbconvert --to notebook --execute --inplace notebooks/*.ipynb

# The atlas page's data: the atlas explored in the lab's venv, checked against notebook 33's stored outputs.
$(BOOK_DATA): $(LAB_INSTALLED) notebooks/33-isolation-atlas.ipynb tools/book/atlas_data.py $(shell find helpers -name '*.py')
	$(BIN)/python tools/book/atlas_data.py $@

# The book: every notebook as stored (never executed), the README, the guide, the sources and the atlas, in
# build/book/_build/html (open index.html; it works from a folder, offline). Sphinx rebuilds only changed pages.
book: $(BOOK_INSTALLED) $(BOOK_DATA)
	$(BOOK_VENV)/bin/python tools/book/stage.py $(BOOK_DATA)
	$(BOOK_VENV)/bin/jupyter-book build --quiet -W --keep-going build/book-src --path-output build/book
	@echo "The book: $(BOOK_HTML)/index.html ($$(du -sh $(BOOK_HTML) | cut -f1))"

clean:
	rm -rf $(VENV) $(BOOK_VENV)
