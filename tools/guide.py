"""Measure every notebook for docs/instructors.md: its run time (executed with nbclient) and reading time.

`make guide` runs this. Each notebook is executed in a fresh kernel from notebooks/ and timed; its
reading time is its markdown word count at WORDS_PER_MINUTE. Executed notebooks are never saved: only
the table between the two markers in docs/instructors.md is rewritten.
"""
import math
import os
import platform
import re
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
GUIDE = ROOT / "docs" / "instructors.md"
START = "<!-- make guide: table start -->"
END = "<!-- make guide: table end -->"
WORDS_PER_MINUTE = 180
OBJECTIVE = re.compile(r"\*\*Objective:\*\*\s*(.+?)(?:\n\s*\n|\Z)", re.S)


def markdown_of(notebook):
    """All markdown cells of a notebook, joined."""
    return "\n\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")


def objective_of(notebook):
    """The notebook's '**Objective:**' sentence, on one line ('' when it has none)."""
    found = OBJECTIVE.search(markdown_of(notebook))
    return " ".join(found.group(1).split()) if found else ""


def reading_minutes(notebook):
    """Minutes to read the notebook's markdown, rounded up."""
    return math.ceil(len(markdown_of(notebook).split()) / WORDS_PER_MINUTE)


def run_seconds(path):
    """Seconds to execute the notebook top to bottom in a fresh kernel started in its folder."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    began = time.perf_counter()
    client.execute()
    return time.perf_counter() - began


def measured_table():
    """(the markdown table: one row per notebook, then the totals; the notebooks that failed to run)."""
    rows, failed, total_run, total_read = [], [], 0.0, 0
    load = os.getloadavg()[0]
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb")):
        print(f"running {path.name} ...", flush=True)
        notebook = nbformat.read(path, as_version=4)
        minutes = reading_minutes(notebook)
        try:
            seconds = run_seconds(path)
            run_all = f"{seconds:.0f} s"
        except CellExecutionError as error:
            seconds, run_all = 0.0, f"failed ({error.ename})"
            failed.append(path.name)
        total_run, total_read = total_run + seconds, total_read + minutes
        rows.append(f"| [{path.stem}](../notebooks/{path.name}) | {objective_of(notebook)} | {run_all} | {minutes} min |")
    machine = (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, load average {load:.1f} at the "
               f"start, Python {platform.python_version()}")
    table = "\n".join([f"Measured by `make guide` on {date.today().isoformat()} ({machine}); reading at "
                       f"{WORDS_PER_MINUTE} words a minute, markdown cells only.", "",
                       "| notebook | objective | run all | reading |", "|---|---|---|---|", *rows,
                       f"| **all** | | **{total_run / 60:.1f} min** | **{total_read} min** |"])
    return table, failed


def with_table(text, table):
    """The guide's text with the part between the markers replaced by `table`."""
    if START not in text or END not in text:
        raise SystemExit(f"{GUIDE} has lost its markers; put `{START}` and `{END}` back, on their own lines, "
                         "around the measured table, then run make guide again.")
    head, rest = text.split(START, 1)
    return f"{head}{START}\n{table}\n{END}{rest.split(END, 1)[1]}"


def main():
    """Measure every notebook and rewrite the table in docs/instructors.md."""
    os.environ["DYNAMODB_LAB_PROGRESS"] = str(Path(tempfile.mkdtemp(prefix="guide-progress-")) / "progress.json")
    os.environ["DYNAMODB_LAB_PROGRESS_BAR"] = "off"  # the measured kernels store no bar (helpers/lab/waiting.py)
    table, failed = measured_table()
    GUIDE.write_text(with_table(GUIDE.read_text(encoding="utf-8"), table), encoding="utf-8")
    print(f"rewrote the measured table in {GUIDE.relative_to(ROOT)}")
    if failed:
        return f"{', '.join(failed)} failed to run (see above); fix them and run make guide again."
    return 0


if __name__ == "__main__":
    sys.exit(main())
