"""The minutes per notebook that `make guide` measured, read from docs/instructors.md (shown in 00-start-here).

tools/guide.py writes the table between two markers in the instructors' guide; this module only reads it, so
00 shows the latest measurement without a number typed in by hand.
"""
import re
from pathlib import Path

import pandas as pd

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "instructors.md"
START = "<!-- make guide: table start -->"
END = "<!-- make guide: table end -->"
BUSY = re.compile(r"(\d+) cores, load average ([\d.]+) at the start")
ROW = re.compile(r"^\| \[[^]]+\]\(\.\./notebooks/([^)]+)\) \| .*? \| ([^|]+?) \| (\d+) min \|$", re.M)


def measured_part(text):
    """The text between the guide's two markers; ValueError when a marker is missing."""
    if START not in text or END not in text:
        raise ValueError(f"the instructors' guide has lost its markers {START} and {END}; run make guide")
    return text.split(START, 1)[1].split(END, 1)[0]


def measured_rows(text):
    """One row per notebook measured in the guide's text: notebook (file name), reading (minutes), run all."""
    rows = [{"notebook": name, "reading": int(minutes), "run all": run_all}
            for name, run_all, minutes in ROW.findall(measured_part(text))]
    return pd.DataFrame(rows, columns=["notebook", "reading", "run all"])


def measured_when(text):
    """The guide's line saying when and on what machine the table was measured ('' when it has none)."""
    found = re.search(r"^Measured by .+$", measured_part(text), re.M)
    return found.group(0) if found else ""


def minutes_table(guide=GUIDE):
    """(the measured rows, the line saying when they were measured), read from the guide now."""
    text = Path(guide).read_text(encoding="utf-8")
    return measured_rows(text), measured_when(text)


def as_markdown(rows, when):
    """The rows as a markdown table linking each notebook, with a total of reading minutes and the `when` line."""
    lines = ["| notebook | reading | run all |", "|---|---|---|"]
    lines += [f"| [{Path(name).stem}]({name}) | {reading} min | {run_all} |" for name, reading, run_all in rows.itertuples(index=False)]
    lines.append(f"| **all** | **{rows['reading'].sum()} min** | |")
    return "\n".join(lines) + f"\n\n{when}{busy_words(when)}"


def busy_words(when):
    """' Its 2 cores were busy ...' when the `when` line's load average at the start was above its cores, else ''."""
    found = BUSY.search(when)
    if not found or float(found.group(2)) <= int(found.group(1)):
        return ""
    return (f" Its {found.group(1)} cores were busy then (load average {found.group(2)}), so Run All takes less on a "
            "quiet machine.")
