# The lab's two everyday commands: `make lab` and `make test`. Everything installs into .venv, from the lock.
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

# The lock. The direct inputs are edited by hand: requirements.txt (what the notebooks need) and, for each set
# named here, requirements-<set>.txt. A layer (LOCK_LAYERS) is installed on top of the lab, into .venv: its lock pins
# requirements.txt's set and its own together, at requirements.lock's versions. A set apart (LOCK_APART) is
# installed into a venv of its own: its lock pins its own set only, at requirements.lock's versions where the two
# share a package. `make lock` writes every lock, transitive pins too; every install reads a lock, never an input.
# To add a set: name it in one of the two lists, run `make lock`, install requirements-<set>.lock.
LOCK_LAYERS := test
LOCK_APART := book
LAB_LOCK := requirements.lock
LAYER_LOCKS := $(LOCK_LAYERS:%=requirements-%.lock)
SET_LOCKS := $(LAB_LOCK) $(LAYER_LOCKS) $(LOCK_APART:%=requirements-%.lock)
# uv (pinned in requirements-test.txt) resolves once for Linux, macOS and Windows and every Python from 3.11 on,
# one version per package where it can; with a wheelhouse/, from it alone.
UV := $(BIN)/uv
UV_FROM := $(if $(wildcard $(WHEELHOUSE)), --offline --no-index --find-links $(WHEELHOUSE))
COMPILE := $(UV) pip compile --quiet --no-config --universal --fork-strategy fewest --python-version 3.11 \
	--annotation-style line --custom-compile-command "make lock"$(UV_FROM)
# `make upgrade` runs these (default: every test and notebook, as `make test` does).
UPGRADE_TESTS ?=
UPGRADE := build/upgrade

.PHONY: lab test stress bench doctor wheelhouse guide notebooks book clean lock upgrade

$(LAB_INSTALLED): $(LAB_LOCK) pyproject.toml jupyter/install_settings.py jupyter/*.json
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "The lab needs Python 3.11 or newer; run make with PYTHON=python3.11 (or newer).")'
	$(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) -r $(LAB_LOCK) -e .
	$(BIN)/python jupyter/install_settings.py
	touch $@

# The test set is exactly requirements-test.lock: what an older lock installed and this one drops is uninstalled.
$(TEST_INSTALLED): $(LAB_INSTALLED) requirements-test.lock
	$(PIP_INSTALL) -r requirements-test.lock
	$(BIN)/python tools/lock.py prune requirements-test.lock
	touch $@

# The book's tools (Jupyter Book 1, Sphinx) live in a venv of their own.
BOOK_VENV := .venv-book
BOOK_INSTALLED := $(BOOK_VENV)/.installed-book
BOOK_DATA := build/book-data/atlas.json
BOOK_HTML := build/book/_build/html

$(BOOK_INSTALLED): requirements-book.lock
	$(PYTHON) -m venv $(BOOK_VENV)
	$(BOOK_VENV)/bin/pip install --quiet --disable-pip-version-check$(PIP_FROM) -r requirements-book.lock
	touch $@

# JupyterLab's port; when it is taken, JupyterLab tries the next ones (8889, 8890, ...) and prints the URL it got.
PORT ?= 8888
# `make test` runs this many pytest workers: most tests wait on a server, a kernel or a browser, so more than the cores.
TEST_WORKERS ?= 3

lab: $(LAB_INSTALLED)
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) --ServerApp.root_dir=. $(AS_ROOT) $(FIRST_NOTEBOOK)

# The book is built first: its browser test opens it (a second build with nothing changed takes seconds).
test: $(TEST_INSTALLED) book
	time $(BIN)/python -m pytest --nbval $(SANITIZE) -q -rfEs -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder --durations=25

stress: $(TEST_INSTALLED)
	LAB_STRESS_RUNS=20 $(BIN)/python -m pytest -q -m stress tests/

bench: $(TEST_INSTALLED)
	$(BIN)/python tests/bench_throughput.py
	$(BIN)/python tests/bench_races.py
	$(BIN)/python tests/bench_explore.py
	$(BIN)/python tests/bench_verdicts.py

doctor: $(LAB_INSTALLED)
	$(BIN)/python -m helpers.doctor

# Every wheel the locks install here, plus the few pins only other platforms install (for `make upgrade` offline).
wheelhouse: $(LAB_INSTALLED)
	$(BIN)/pip download --quiet --disable-pip-version-check --only-binary=:all: --dest $(WHEELHOUSE) \
		$(SET_LOCKS:%=-r %) "setuptools>=68" wheel
	$(BIN)/python tools/lock.py elsewhere $(WHEELHOUSE) $(SET_LOCKS)
	@echo "$(WHEELHOUSE)/: $$(ls $(WHEELHOUSE) | wc -l) wheels, $$(du -sh $(WHEELHOUSE) | cut -f1); make lab, test, doctor and book now install from it"

guide: $(LAB_INSTALLED)
	$(BIN)/python tools/guide.py

# The checkers these runs make are recorded in build/, never in the learner's own progress file; no progress bar is
# stored (helpers/lab/waiting.py: it would depend on the machine's speed).
notebooks: $(LAB_INSTALLED)
	DYNAMODB_LAB_PROGRESS=$(CURDIR)/build/make-notebooks-progress.json DYNAMODB_LAB_PROGRESS_BAR=off \
		$(BIN)/jupyter nbconvert --to notebook --execute --inplace notebooks/*.ipynb

# Re-pin every set after editing an input file, keeping the locked versions that still fit (`make upgrade` moves them).
# A lock whose text did not change keeps its time, so that nothing is reinstalled for it.
lock: $(TEST_INSTALLED)
	mkdir -p build/lock && cp -p $(wildcard $(SET_LOCKS)) build/lock/
	$(COMPILE) $(LOCK_ARGS) requirements.txt -o $(LAB_LOCK)
	$(foreach layer,$(LOCK_LAYERS),$(COMPILE) $(LOCK_ARGS) requirements.txt requirements-$(layer).txt \
		-c $(LAB_LOCK) -o requirements-$(layer).lock;)
	$(foreach set,$(LOCK_APART),$(COMPILE) $(LOCK_ARGS) requirements-$(set).txt \
		-c $(LAB_LOCK) -o requirements-$(set).lock;)
	for lock in $(SET_LOCKS); do \
		if cmp -s $$lock build/lock/$$lock; then touch -r build/lock/$$lock $$lock; fi; done
	$(BIN)/python tools/lock.py binder $(LAB_LOCK) binder/environment.yml

# Every package to its newest version within the direct pins' ranges, the tests and notebooks run on the new set,
# then the table of what changed and of the notebook cells whose stored output changes (exit 1 if a test failed).
upgrade: $(TEST_INSTALLED)
	rm -rf $(UPGRADE) && mkdir -p $(UPGRADE)/before && cp $(wildcard $(SET_LOCKS)) $(UPGRADE)/before/
	$(MAKE) --no-print-directory lock LOCK_ARGS=--upgrade
	$(MAKE) --no-print-directory $(TEST_INSTALLED)
	status=0; $(BIN)/python -m pytest --nbval $(SANITIZE) -q -rfEs -n $(TEST_WORKERS) --dist loadgroup \
		--no-loadscope-reorder -o junit_family=xunit1 --junitxml=$(UPGRADE)/junit.xml $(UPGRADE_TESTS) || status=$$?; \
	$(BIN)/python tools/lock.py report $(UPGRADE)/before $(UPGRADE)/junit.xml $(SET_LOCKS); exit $$status

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
