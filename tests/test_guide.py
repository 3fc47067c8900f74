"""The instructors' guide: `make guide` rewrites only its measured table, and the table covers every notebook."""
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("guide", ROOT / "tools" / "guide.py")
guide = importlib.util.module_from_spec(spec)
spec.loader.exec_module(guide)


def test_the_table_is_rewritten_between_its_markers_and_nothing_else_changes():
    text = f"# Guide\n\nbefore\n\n{guide.START}\n| old |\n{guide.END}\n\nafter\n"
    rewritten = guide.with_table(text, "| new |")
    assert rewritten == f"# Guide\n\nbefore\n\n{guide.START}\n| new |\n{guide.END}\n\nafter\n"


def test_a_guide_without_its_markers_is_refused_with_what_to_put_back():
    with pytest.raises(SystemExit, match="put `<!-- make guide: table start -->`"):
        guide.with_table("# Guide with no table\n", "| new |")


def test_the_committed_guide_measures_every_notebook_with_a_run_time_and_a_reading_time():
    text = (ROOT / "docs" / "instructors.md").read_text()
    table = text.split(guide.START)[1].split(guide.END)[0]
    rows = dict(re.findall(r"^\| \[[^]]+\]\(\.\./notebooks/([^)]+)\) \| .*? \| (\d+ s) \| \d+ min \|$", table, re.M))
    assert set(rows) == {path.name for path in (ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb")}
