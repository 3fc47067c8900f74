"""helpers.guide_table reads the table `make guide` writes, in the format tools/guide.py writes it."""
import importlib.util
from pathlib import Path

import pytest

from helpers import guide_table

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("guide", ROOT / "tools" / "guide.py")
guide = importlib.util.module_from_spec(spec)
spec.loader.exec_module(guide)

TABLE = "\n".join([
    "Measured by `make guide` on 2026-12-01 (Linux x86_64, 2 cores); reading at 180 words a minute.", "",
    "| notebook | objective | run all | reading |", "|---|---|---|---|",
    "| [00-start-here](../notebooks/00-start-here.ipynb) | know what this lab teaches. | 16 s | 5 min |",
    "| [22-conditional-writes](../notebooks/22-conditional-writes.ipynb) | refuse a write. | failed (NameError) | 14 min |",
    "| **all** | | **0.3 min** | **19 min** |",
])
GUIDE_TEXT = guide.with_table(f"# Guide\n\n{guide.START}\n{guide.END}\n\nafter | [x](../notebooks/x.ipynb) | 1 s | 1 min |\n", TABLE)


def test_the_markers_are_the_ones_make_guide_writes():
    assert (guide_table.START, guide_table.END) == (guide.START, guide.END)


def test_rows_are_read_from_between_the_markers_only_with_failed_runs_kept_as_written():
    rows = guide_table.measured_rows(GUIDE_TEXT)
    assert rows.to_dict("records") == [
        {"notebook": "00-start-here.ipynb", "reading": 5, "run all": "16 s"},
        {"notebook": "22-conditional-writes.ipynb", "reading": 14, "run all": "failed (NameError)"},
    ]
    assert guide_table.measured_when(GUIDE_TEXT).startswith("Measured by `make guide` on 2026-12-01")


def test_a_guide_without_its_markers_is_an_error_that_says_to_run_make_guide():
    with pytest.raises(ValueError, match="run make guide"):
        guide_table.measured_rows("# Guide with no table\n")


def test_the_markdown_links_each_notebook_and_totals_the_reading():
    markdown = guide_table.as_markdown(guide_table.measured_rows(GUIDE_TEXT), "Measured today.")
    assert markdown.splitlines() == [
        "| notebook | reading | run all |", "|---|---|---|",
        "| [00-start-here](00-start-here.ipynb) | 5 min | 16 s |",
        "| [22-conditional-writes](22-conditional-writes.ipynb) | 14 min | failed (NameError) |",
        "| **all** | **19 min** | |", "", "Measured today.",
    ]


def test_the_committed_guide_gives_minutes_for_every_notebook():
    rows, when = guide_table.minutes_table()
    assert set(rows["notebook"]) == {path.name for path in (ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb")}
    assert (rows["reading"] >= 1).all() and when.startswith("Measured by `make guide` on ")


@pytest.mark.parametrize("load, said", [
    ("15.9", " Its 2 cores were busy then (load average 15.9), so Run All takes less on a quiet machine."),
    ("0.9", ""), ("2.0", "")])
def test_a_measurement_on_a_busy_machine_says_so_under_the_table(load, said):
    when = (f"Measured by `make guide` on 2026-12-05 (Linux x86_64, 2 cores, load average {load} at the start, Python "
            "3.11.7); reading at 180 words a minute, markdown cells only.")
    markdown = guide_table.as_markdown(guide_table.measured_rows(GUIDE_TEXT), when)
    assert markdown.splitlines()[-1] == when + said
