"""Failure first: in each notebook listed, the first code cell after Setup runs the failure and asserts the
broken invariant, before any cell runs the pattern's own code. Reads the stored notebooks; runs nothing."""
import ast
import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

# Notebook -> the names its pattern's code uses (whole words): none may run before the failure has been shown.
PATTERN_CODE = {
    "22-conditional-writes": ("ConditionExpression",),
    "23-optimistic-locking": ("ConditionExpression",),
    "24-atomic-counters": ("ADD",),
    "25-transactions": ("transact_write_items",),
    "26-unique-constraints": ("transact_write_items",),
    "27-idempotency-keys": ("attribute_not_exists",),
    "28-gsi-eventual-consistency": ("query_gsi_until_found", "ConditionExpression"),
    "29-distributed-locking": ("ConditionExpression",),
    "30-seat-booking": ("ConditionExpression",),
    "32-wallet-interview": ("ConditionExpression",),
    "34-global-tables": ("home_region",),
    "35-streams-consumers": ("attribute_not_exists",),
    "36-libraries": ("uuid4",),
}


def cells(name):
    """The notebook's cells as (kind, source, cell) triples."""
    notebook = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())
    return [(cell["cell_type"], "".join(cell["source"]), cell) for cell in notebook["cells"]]


def code_after_setup(name):
    """The code cells after the Setup heading, in order; the first is Setup's own cell."""
    all_cells = cells(name)
    setup = next(i for i, (kind, source, _) in enumerate(all_cells)
                 if kind == "markdown" and source.lstrip().startswith("## Setup"))
    return [(source, cell) for kind, source, cell in all_cells[setup + 1:] if kind == "code"]


def assertions(source):
    """The assert statements of a cell."""
    return [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Assert)]


def printed(cell):
    """What the cell showed when it was stored: its streams and displayed text."""
    texts = [output.get("text", "") for output in cell["outputs"] if output["output_type"] == "stream"]
    texts += [output["data"].get("text/plain", "") for output in cell["outputs"] if "data" in output]
    return "".join("".join(text) for text in texts)


@pytest.mark.parametrize("name", sorted(PATTERN_CODE))
def test_the_first_cell_after_setup_runs_the_failure_and_asserts_it(name):
    failure, cell = code_after_setup(name)[1]
    assert assertions(failure), f"{name}: the first cell after Setup asserts nothing"
    assert cell["execution_count"] is not None and ">>> " in printed(cell), \
        f"{name}: the failure must be stored run, with its transcript"
    assert not any(output["output_type"] == "error" for output in cell["outputs"])


@pytest.mark.parametrize("name", sorted(PATTERN_CODE))
def test_the_pattern_runs_only_after_the_failure(name):
    (setup, _), (failure, _), *rest = code_after_setup(name)
    for code in PATTERN_CODE[name]:
        uses = re.compile(rf"\b{code}\b").search
        assert not uses(setup + failure), f"{name}: {code} runs before the failure is shown"
        assert any(uses(source) for source, _ in rest), f"{name}: {code} is not the pattern's code here"
