"""plotly figures built from race results: each title states what the picture shows."""
import math
import re
import textwrap

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..explore import FAULT_WORDS, batch_item, describe, parse_move
from ..runs.races import clobbers
from .cycles import MARGIN, WIDTH, axis, cycle, cycle_figure, draw, history_cycle, title_of

WEBGL_FROM = 1_000
CONNECT_UP_TO = 400
COLOURS = {"expected": "#9e9e9e", "ok": "#2e7d32", "lost": "#c62828", "read": "#1565c0", "kept": "#2e7d32",
           "overwritten": "#9e9e9e", "clobber": "#c62828", "conflict": "#ef6c00", "refused": "#000000"}


def counted(n, word):
    """'1 credit', '-38 credits': a number with its noun, plural unless the number is 1."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def whole_ticks(span):
    """A tick step for a count axis spanning `span`: a whole number, about five ticks."""
    return max(1, math.ceil(span / 5))


def with_note(title, *races):
    """A figure title, followed by the note of each race that has one ("stopped after 869 of 10,000 operations"), named
    by its strategy when the figure compares several."""
    notes = [f"{race.label}: {race.note}" if len(races) > 1 else race.note for race in races if race.note]
    return f"{title}<br><sup>{'; '.join(notes)}: the operations that completed</sup>" if notes else title


def expected_vs_final(*races):
    """Bars of expected and final value per race, with the lost updates written over each pair."""
    names = [r.label for r in races]
    figure = go.Figure([
        go.Bar(name="expected", x=names, y=[r.expected for r in races], marker_color=COLOURS["expected"],
               text=[r.expected for r in races], textposition="outside"),
        go.Bar(name="final value in DynamoDB", x=names, y=[r.final for r in races],
               marker_color=[COLOURS["lost"] if r.lost else COLOURS["ok"] for r in races],
               text=[r.final for r in races], textposition="outside"),
    ])
    top = max(max(r.expected, r.final) for r in races)
    for name, r in zip(names, races):
        figure.add_annotation(x=name, y=top * 1.12, showarrow=False, font={"size": 15,
                              "color": COLOURS["lost"] if r.lost else COLOURS["ok"]},
                              text=f"<b>{r.lost} lost</b>" if r.lost else "<b>exact: none lost</b>")
    first = races[0]
    verdict = ", ".join(f"{n} lost {r.lost or 'none'}" for n, r in zip(names, races))
    figure.update_layout(
        title=with_note(f"{first.completed} updates from {first.threads} threads at once: {verdict}", *races),
        yaxis_title="counter value", yaxis_range=[0, top * 1.22], xaxis_title="strategy", barmode="group",
        legend_title="", legend={"orientation": "h", "y": -0.2}, height=430, margin={"t": 70})
    return figure


def scatter(many):
    """go.Scattergl when a trace has many points (WebGL keeps the figure fast), else go.Scatter."""
    return go.Scattergl if many else go.Scatter


def timeline(race):
    """Each thread a lane; each read and write a mark over time; every write that erased others in red."""
    log = clobbers(race.log, race.final)
    many = len(log) * 2 > WEBGL_FROM
    Trace = scatter(many)
    lane = log["thread"].map(lambda t: f"thread {t}")
    figure = go.Figure()
    has_read = log["read_ms"].notna()
    windows_x = np.column_stack([log["read_ms"], log["end_ms"], np.full(len(log), np.nan)])[has_read].ravel()
    windows_y = np.column_stack([lane, lane, np.full(len(log), None)])[has_read].ravel()
    if has_read.any():
        figure.add_trace(Trace(x=windows_x, y=windows_y, mode="lines", name="read → write window",
                               line={"color": "#bdbdbd", "width": 1}, hoverinfo="skip"))
        reads = log[has_read]
        figure.add_trace(Trace(x=reads["read_ms"], y=lane[has_read], mode="markers", name="read",
                               marker={"symbol": "circle-open", "color": COLOURS["read"], "size": 7},
                               text=[f"read {v:g}" for v in reads["read"]], hoverinfo="text+x+y"))
    clobbered_by = log[log["overwritten"]].groupby("erased_by").size()
    erased_count = log.index.map(clobbered_by).fillna(0).astype(int)
    kinds = {
        "write that survived": (log["outcome"] == "written") & ~log["overwritten"] & (erased_count == 0),
        "write overwritten later (update lost)": log["overwritten"] & (erased_count == 0),
        "write that erased others' updates": (log["outcome"] == "written") & (erased_count > 0),
        "version conflict, retried": log["outcome"] == "conflict, retried",
        "refused by the condition": log["outcome"] == "refused",
    }
    styles = {
        "write that survived": {"symbol": "circle", "color": COLOURS["kept"], "size": 8},
        "write overwritten later (update lost)": {"symbol": "circle", "color": COLOURS["overwritten"], "size": 8},
        "write that erased others' updates": {"symbol": "x", "color": COLOURS["clobber"], "size": 11},
        "version conflict, retried": {"symbol": "diamond-open", "color": COLOURS["conflict"], "size": 8},
        "refused by the condition": {"symbol": "square", "color": COLOURS["refused"], "size": 7},
    }
    for name, rows in kinds.items():
        if rows.any():
            chosen = log[rows]
            figure.add_trace(Trace(x=chosen["end_ms"], y=lane[rows], mode="markers", name=name,
                                   marker=styles[name], text=hover(chosen, erased_count[rows.to_numpy()]),
                                   hoverinfo="text+x"))
    survivors = log[(log["outcome"] == "written") & ~log["overwritten"]].sort_values("end_ms")
    if race.lost and len(survivors) <= CONNECT_UP_TO:
        figure.add_trace(go.Scatter(x=survivors["end_ms"], y=lane[survivors.index], mode="lines+markers",
                                    name=(f"the {len(survivors)} updates that survive, in the order they chain up "
                                          f"to the final {race.final:g}" if len(survivors) > 1 else
                                          f"the one update that survives: the final {race.final:g}"),
                                    line={"color": COLOURS["kept"], "width": 2},
                                    marker={"symbol": "circle-open", "color": COLOURS["kept"], "size": 15,
                                            "line": {"width": 2}},
                                    hoverinfo="skip"))
    pairs = log[log["erased_by"] >= 0]
    if 0 < len(pairs) <= CONNECT_UP_TO:
        eraser = log.loc[pairs["erased_by"]]
        xs = np.column_stack([pairs["end_ms"], eraser["end_ms"], np.full(len(pairs), np.nan)]).ravel()
        ys = np.column_stack([lane[pairs.index], lane[eraser.index], np.full(len(pairs), None)]).ravel()
        figure.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name="erased by (lost update → the write over it)",
                                    line={"color": COLOURS["clobber"], "width": 1, "dash": "dot"},
                                    hoverinfo="skip"))
    threads = sorted(log["thread"].unique())
    figure.update_layout(
        title=with_note(timeline_title(race), race), xaxis_title="time since the threads were released (ms)",
        yaxis_title="",
        yaxis={"categoryorder": "array", "categoryarray": [f"thread {t}" for t in reversed(threads)]},
        legend={"orientation": "h", "y": -0.15 - 0.5 / max(len(threads), 4)}, height=280 + 24 * len(threads),
        margin={"t": 100})
    return figure


def hover(rows, erased):
    """Hover text for write marks: what was read, what was written, how many updates it erased."""
    return [f"op {op} attempt {attempt}: " + ("" if np.isnan(read) else f"read {read:g}, ")
            + ("" if np.isnan(wrote) else f"wrote {wrote:g}") + f" ({outcome})"
            + (f"<br>erased {count} update(s) written after its read" if count else "")
            for op, attempt, read, wrote, outcome, count in zip(rows["operation"], rows["attempt"], rows["read"],
                                                                  rows["wrote"], rows["outcome"], erased)]


def timeline_title(race):
    """The lesson of one race's timeline, in one line."""
    who = f"{race.label}, {race.threads} threads × {race.completed} operations"
    if race.strategy == "racy" or race.lost:
        return (f"{who}: {race.lost} of {race.completed} updates were overwritten"
                "<br><sup>○ read, then its write at the end of the grey line; red ✕ = a write based on a stale read,"
                "<br>which erased the updates that landed after that read (dotted: lost update → its eraser)</sup>")
    if race.retries:
        return f"{who}: every update landed; {race.retries} version conflicts were retried"
    if race.refused:
        return f"{who}: {race.written} sold, {race.refused} refused at the floor, never below zero"
    return f"{who}: no reads, nothing to overwrite: every update landed"


def sweep(frame):
    """Lost updates (% of operations) against threads and against think time, one dot per run."""
    figure = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06, subplot_titles=(
        f"more threads (think time {frame.attrs['fixed_think_ms']} ms)",
        f"longer think time ({frame.attrs['fixed_threads']} threads)"))
    for column, knob, axis in ((1, "threads", "threads"), (2, "think ms", "think time between read and write (ms)")):
        runs = frame[frame["varied"] == knob]
        medians = runs.groupby("value")["lost %"].median()
        figure.add_trace(go.Scatter(x=runs["value"], y=runs["lost %"], mode="markers", name="one run",
                                    marker={"color": COLOURS["lost"], "opacity": 0.45, "size": 8},
                                    showlegend=column == 1), row=1, col=column)
        figure.add_trace(go.Scatter(x=medians.index, y=medians.values, mode="lines+markers", name="median",
                                    line={"color": "#424242", "width": 2}, showlegend=column == 1),
                         row=1, col=column)
        figure.update_xaxes(title_text=axis, row=1, col=column)
    figure.update_yaxes(title_text="updates lost (% of operations)", range=[-3, 103], row=1, col=1)
    figure.update_layout(
        title=f"The race gets worse as the window widens ({frame.attrs['operations']} racy increments per run, "
              f"{frame.attrs['repeats']} runs per point)<br><sup>each client waits a random 0-"
              f"{2 * frame.attrs['pause_ms']} ms between operations, as spread-out traffic does</sup>",
        legend={"orientation": "h", "y": -0.25}, height=430, margin={"t": 90})
    return figure


def retries(race):
    """Optimistic locking: retries per thread, and how many attempts each successful update took."""
    log = race.log
    per_thread = log[log["outcome"] == "conflict, retried"].groupby("thread").size().reindex(
        sorted(log["thread"].unique()), fill_value=0)
    attempts = log[log["outcome"] == "written"]["attempt"]
    figure = make_subplots(rows=1, cols=2, horizontal_spacing=0.1, subplot_titles=(
        "retries per thread", "attempts each update needed"))
    figure.add_trace(go.Bar(x=[f"thread {t}" for t in per_thread.index], y=per_thread.values, name="retries",
                            marker_color=COLOURS["conflict"], showlegend=False), row=1, col=1)
    counts = attempts.value_counts().sort_index()
    figure.add_trace(go.Bar(x=counts.index, y=counts.values, name="updates", marker_color=COLOURS["ok"],
                            showlegend=False), row=1, col=2)
    figure.update_xaxes(title_text="thread", row=1, col=1)
    figure.update_xaxes(title_text="attempts until the write landed", dtick=1 if counts.index.max() <= 12 else None,
                        row=1, col=2)
    figure.update_yaxes(title_text="retries", row=1, col=1)
    figure.update_yaxes(title_text="updates", row=1, col=2)
    figure.update_layout(
        title=with_note(f"Version check + retry: all {race.final - race.start} of {race.completed} updates landed, "
                        f"paid for with {race.retries} retries "
                        f"({race.retries / max(race.completed, 1):.1f} per update)", race),
        height=400, margin={"t": 90})
    return figure


CLIENT_COLOURS = ("#1565c0", "#ef6c00", "#6a1b9a", "#00838f")
# Lighter shades of each client's colour for its other moves ("alice+0", "alice~1", "alice!lost"), with dark text.
MOVE_SHADES = {"#1565c0": ("#64b5f6", "#bbdefb"), "#ef6c00": ("#ffb74d", "#ffe0b2"),
               "#6a1b9a": ("#ba68c8", "#e1bee7"), "#00838f": ("#4dd0e1", "#b2ebf2")}
ORDERS_UP_TO = 24
LONGEST_CELL_WORD = 7  # a longer operation name ("UpdateItem") is split on two lines in its cell
OUTCOME_LINE = 44  # characters per line of an order's outcome beside its row
NARROW_OUTCOME_LINE = 24  # ... beside a row of more than ROOMY_STEPS steps, which needs the width for its cells' words
ROOMY_STEPS = 9
LEGEND_ROW = 20  # px a row of a horizontal legend takes
DISCOVERY = ("ListStreams", "DescribeStream", "GetShardIterator")  # a stream consumer's requests finding its shard
CELL_FONT = 9  # px: every cell's words at least this size, all of a figure's alike
ARRIVAL_COLOUR = "#ffe082"  # a stream record entering its stream: no client's move


def move_colours(moves):
    """{move: (fill, text colour)}: a colour per client, and lighter shades of it for that client's other moves (a
    transaction's item becoming visible, an older copy answering, a fault), so every move of alice looks like alice."""
    bases = list(dict.fromkeys(parse_move(move)[0] for move in moves if parse_move(move)[1] != "#"))
    seen, colours = {}, {}
    for move in moves:
        base, kind, _ = parse_move(move)
        if kind == "#":
            colours[move] = (ARRIVAL_COLOUR, "#212121")
            continue
        if kind == "?":  # every option of a client's choice alike: the cell's words say which
            colours[move] = (MOVE_SHADES[CLIENT_COLOURS[bases.index(base) % len(CLIENT_COLOURS)]][0], "#212121")
            continue
        colour = CLIENT_COLOURS[bases.index(base) % len(CLIENT_COLOURS)]
        if move == base:
            colours[move] = (colour, "white")
        else:
            shades = MOVE_SHADES[colour]
            colours[move] = (shades[seen.setdefault(base, 0) % len(shades)], "#212121")
            seen[base] += 1
    return colours


def move_words(move):
    """A move as a legend names it: 'alice', 'alice: item 2 of her transaction visible', 'alice: a stale answer',
    'alice: BatchGetItem reads item 1', 'alice: response lost, the SDK retries'."""
    name, kind, place = parse_move(move)
    if kind == "+":
        return f"{name}: item {place + 1} of its write visible"
    if kind == "~":
        return f"{name}: an older answer" + (f" (item {batch_item(move) + 1} of its BatchGetItem)"
                                             if batch_item(move) is not None else "")
    if kind == "@":
        return f"{name}: BatchGetItem reads item {place + 1}"
    if kind == "!":
        return f"{name}: {FAULT_WORDS[place]}"
    if kind == "#":
        return "a record enters its stream" if name == "stream" else f"a write arrives in {name}"
    if kind == "?":
        return f"{name}: its choice"
    return name


def cell_words(steps):
    """{step: its words short enough for a cell}. A transaction's item becoming visible ("TransactWriteItems makes
    {PK: 'USER#grace', SK: 'PROFILE'} visible") is named by the part of its key that tells the items apart
    ("USER#grace visible"); a record entering a stream is named by its item's key ("ORDER#1 in stream"), a replicated
    write by its key and, on a line of its own, the Region it arrives in ("ORDER#1<br>→ eu-west-1": one line would
    shrink to unreadable); a read an older copy answered is "Query (stale)"; a write with a fault is its operation
    alone ("PutItem": the cell's colour and the legend say "response lost" or "crashes"); other steps keep their
    words."""
    keys = {step: tuple(re.findall(r"'([^']*)'", step)) for step in steps
            if " makes " in step and step.endswith(" visible") and "'" in step}
    entering = {step: " ".join(re.findall(r"'([^']*)'", step.split("}")[0])) for step in steps
                if step.endswith("'s stream") and "'" in step}
    distinct = set(keys.values())
    telling = next((i for i in range(max(map(len, distinct), default=0))
                    if len({key[i] for key in distinct if len(key) > i}) == len(distinct)), None)
    words = {}
    for step in steps:
        if step in entering:
            words[step] = f"{entering[step]} in stream"
        elif " arrives in " in step and "'" in step:
            key = " ".join(re.findall(r"'([^']*)'", step.split("}")[0]))
            words[step] = f"{key}<br>→ {step.rpartition(' ')[2]}"
        elif step in keys:
            key = keys[step]
            words[step] = (key[telling] if telling is not None and telling < len(key) else " ".join(key)) + " visible"
        elif " (stale: " in step:
            words[step] = step.split(" (stale: ")[0] + " (stale)"
        elif any(step.endswith(f" ({fault})") for fault in FAULT_WORDS.values()):
            words[step] = two_lines(step.split(" (")[0])
        else:
            words[step] = two_lines(step)
    return words


def two_lines(words):
    """'GetShard<br>Iterator', 'ORDER#1<br>in stream': a cell's words longer than a cell holds at a readable size, on
    two lines, split at the space, or else where the words of an operation's name meet, nearest the middle; shorter
    words as they are."""
    if len(words) <= LONGEST_CELL_WORD or "<br>" in words:
        return words
    spaced = " " in words
    parts = words.split(" ") if spaced else re.findall(r"[A-Z][a-z]*", words)
    if len(parts) < 2 or (not spaced and "".join(parts) != words):
        return words
    glue = " " if spaced else ""
    cut = min(range(1, len(parts)), key=lambda n: abs(len(glue.join(parts[:n])) - len(words) / 2))
    return glue.join(parts[:cut]) + "<br>" + glue.join(parts[cut:])


def choice_words(step):
    """'3,1,2<br>+2 again': an option of a choice (the words after its last ': '), short, and on two lines when it
    repeats a record, so that a cell shows it."""
    return step.rpartition(": ")[2].replace(", then ", "<br>+").replace(", ", ",")


def shared_discovery(rows):
    """How many first steps every row shares that are a stream consumer finding its shard (DISCOVERY), before any
    point of no return: the same in every order, they tell nothing apart."""
    first, skip = rows["steps"][0], 0
    doomed = [at for at in rows["doomed_at"] if at >= 0]
    while (skip < len(first) and first[skip].split(": ", 1)[-1].split(" ")[0] in DISCOVERY
           and all(len(steps) > skip and steps[skip] == first[skip] for steps in rows["steps"])
           and skip < min(doomed, default=skip + 1)):
        skip += 1
    return skip


def wrapped(text, line=OUTCOME_LINE):
    """An order's outcome on lines of at most `line` characters (plotly's <br>), so that it fits beside its row."""
    return "<br>".join(textwrap.wrap(text, line)) or text


def orders(frame, broken, outcome=None, draw_cycle=True):
    """Every order an exploration ran: a row per schedule, a cell per request coloured by client.

    `broken` says in words what a failing order does ("lose an update"); `outcome(results)` names how
    an order ended (default: what each client returned). With more than ORDERS_UP_TO schedules there is
    one row per distinct outcome, showing its first order and how many orders end that way. A thick
    outline marks the step after which every continuation breaks the invariant (the point of no return);
    a hatched cell is a request DynamoDB answered with an error. A stream consumer's finding of its shard, the same
    first steps in every order (shared_discovery), is left out, the steps after it keeping their numbers. The minimal
    cycle of the first failing row whose history shows one is drawn below (with_cycle; draw_cycle=False leaves it out).
    """
    outcome = outcome or (lambda results: ", ".join(f"{name}: {describe(r)}" for name, r in results.items()))
    frame = frame.assign(outcome=frame["results"].map(outcome))
    if len(frame) > ORDERS_UP_TO:
        counts = frame.groupby(["outcome", "ok"], sort=False).size()
        rows = frame.drop_duplicates(["outcome", "ok"]).reset_index(drop=True)
        rows["outcome"] = [f"{text}   (×{counts[(text, ok)]} orders)" for text, ok in zip(rows["outcome"], rows["ok"])]
        names = [f"outcome {n + 1}, e.g." for n in range(len(rows))]
    else:
        rows = frame.reset_index(drop=True)
        names = [f"order {n + 1}" for n in range(len(rows))]
    clients = list(dict.fromkeys(name for schedule in frame["schedule"] for name in schedule))
    colours = move_colours(clients)
    words = cell_words({label.split(": ", 1)[1] for steps in rows["steps"] for label in steps})
    figure, legend, skip = go.Figure(), set(), shared_discovery(rows)
    for client in clients:
        cells = [(names[r], step - skip, label.split(": ", 1)[1], step == rows["doomed_at"][r],
                  rows["answers"][r][step])
                 for r in range(len(rows)) for step, label in enumerate(rows["steps"][r])
                 if rows["schedule"][r][step] == client and step >= skip]
        if not cells:
            continue
        y, x, steps, doomed, answers = zip(*cells)
        text = [choice_words(step) if parse_move(client)[1] == "?" else two_lines(words[step]) for step in steps]
        colour, text_colour = colours[client]
        if move_words(client) not in legend:
            legend.add(move_words(client))
            figure.add_bar(x=[None], y=names[:1], orientation="h", name=move_words(client), marker_color=colour)
        figure.add_bar(y=y, base=x, x=[0.96] * len(x), orientation="h", name=move_words(client), showlegend=False,
                       text=text, textposition="inside", insidetextanchor="middle", textangle=0,
                       insidetextfont={"color": text_colour},
                       marker={"color": colour,
                               "line": {"color": COLOURS["lost"], "width": [4 if d else 0 for d in doomed]},
                               "pattern": {"shape": ["" if a in (None, "OK") else "/" for a in answers],
                                           "fgcolor": "white", "size": 10, "solidity": 0.12}},
                       hovertext=[f"{parse_move(client)[0]}: {t} → {a}" for t, a in zip(steps, answers)],
                       hoverinfo="text")
    longest = max(len(steps) for steps in rows["steps"]) - skip
    line = OUTCOME_LINE if longest <= ROOMY_STEPS else NARROW_OUTCOME_LINE
    labels = [wrapped(("broken: " if not ok else "holds: ") + text, line)
              for ok, text in zip(rows["ok"], rows["outcome"])]
    figure.add_scatter(y=names, x=[longest + 0.15] * len(rows), mode="text", showlegend=False, text=labels,
                       textposition="middle right",
                       textfont={"color": [COLOURS["ok"] if ok else COLOURS["lost"] for ok in rows["ok"]]})
    if any(answer not in (None, "OK") for answers in rows["answers"] for answer in answers):
        figure.add_bar(x=[None], y=names[:1], orientation="h", name="answered with an error (e.g. its condition failed)",
                       marker={"color": "#757575", "pattern": {"shape": "/", "fgcolor": "white", "size": 10}})
    if (frame["doomed_at"] >= 0).any():
        figure.add_scatter(x=[None], y=[None], mode="markers", name="point of no return",
                           marker={"symbol": "square-open", "size": 14, "color": COLOURS["lost"], "line": {"width": 3}})
    bad = int((~frame["ok"]).sum())
    arrivals = {parse_move(move)[0] for move in clients if parse_move(move)[1] == "#"}
    step_title = "step (one request reaches DynamoDB)"
    if arrivals:
        step_title = step_title[:-1] + (", or one record enters its stream)" if arrivals == {"stream"} else
                                        ", or one write or record arrives)")
    if skip:
        step_title += f"; steps 1-{skip}, the consumer finding its shard, left out"
    lines = max([label.count("<br>") + 1 for label in labels]
                + [text.count("<br>") + 1 for trace in figure.data if trace.type == "bar" and trace.text
                   for text in trace.text])
    room = min(line, max(len(words) for label in labels for words in label.split("<br>"))) / 110  # of ~780 px
    entries = sum(trace.showlegend is not False for trace in figure.data)
    above = LEGEND_ROW * max(0, -(-entries // 2) - 2)  # a legend of more than two rows of two, under the title
    figure.update_layout(
        title={"text": f"{bad} of {'the first ' if frame.attrs.get('stopped') else ''}{len(frame)} distinct orders "
                       f"{broken}" if bad else f"None of the {len(frame)} distinct orders {broken}",
               "y": 0.98, "yanchor": "top"},
        barmode="overlay", height=150 + above + (30 if lines == 1 else 16 * lines + 6) * len(rows),
        margin={"t": 80 + above, "r": 20, "b": 50},
        xaxis={"title": step_title, "range": [-0.1, (longest + 0.3) / (1 - room)], "dtick": 1,
               "tickvals": [n + 0.48 for n in range(longest)], "ticktext": [str(n + 1 + skip) for n in range(longest)]},
        yaxis={"autorange": "reversed", "title": "", "categoryorder": "array", "categoryarray": names},
        legend={"orientation": "h", "x": 1, "xanchor": "right", "y": 1.02, "yanchor": "bottom"},
        uniformtext={"mode": "show", "minsize": CELL_FONT})
    return with_cycle(figure, rows, names) if draw_cycle else figure


CYCLE_GAP = 120  # px between an orders figure's rows and the cycle drawn below them: its step axis, the cycle's title


def with_cycle(figure, rows, names):
    """The orders figure with, below its rows, the minimal cycle (plots.cycle) of the first failing row whose history
    shows one, titled with that row's name; made WIDTH px wide for it. As it was when no failing row shows a cycle."""
    found = next(((name, shown) for name, ok, recorded in zip(names, rows["ok"], rows.get("history", [None] * len(rows)))
                  if not ok and (shown := history_cycle(recorded)) is not None), None)
    if found is None:
        return figure
    name, (case, report) = found
    figure.add_shape(type="rect", xref="x2 domain", yref="y2 domain", x0=0, x1=1, y0=0, y1=1, fillcolor="white",
                     line_width=0, layer="below")
    margin = {"l": 80, "r": 20, "t": figure.layout.margin.t, "b": MARGIN["b"]}
    width = WIDTH - margin["l"] - margin["r"]
    height = draw(figure, case, report, width, "x2", "y2")
    above = figure.layout.height - figure.layout.margin.t - figure.layout.margin.b
    plot = above + CYCLE_GAP + height
    title, subtitle = title_of(case, report)
    figure.add_annotation(xref="paper", yref="paper", x=0, y=(height + 10) / plot, xanchor="left", yanchor="bottom",
                          showarrow=False, align="left", font={"size": 14},
                          text=f"{name[0].upper()}{name[1:]}, its minimal cycle: {title}<br>"
                               f"<span style='font-size:12px'>{subtitle}</span>")
    figure.update_layout(width=WIDTH, height=margin["t"] + margin["b"] + plot, margin=margin,
                         yaxis={"domain": [(height + CYCLE_GAP) / plot, 1]},
                         xaxis2=axis(width, anchor="y2"), yaxis2=axis(height, anchor="x2", domain=[0, height / plot]))
    return figure


DELIVERY_COLOURS = {"ok": "#2e7d32", "failed": "#c62828", "died": "#6a1b9a", "discarded": "#9e9e9e"}
DELIVERY_WORDS = {"ok": "handled", "failed": "failed (raised, or reported failed)", "died": "the invocation died",
                  "discarded": "failed, retries spent: discarded"}


def delivery_kind(outcome):
    """'ok', 'died', 'discarded' or 'failed': how an invocation's row of helpers.consumer ended, for its colour."""
    if outcome == "ok":
        return "ok"
    if outcome.startswith("the invocation died"):
        return "died"
    return "discarded" if "discarded" in outcome or "Lambda would retry it" in outcome else "failed"


def deliveries(frame, title=None):
    """Each invocation of a stream consumer (helpers.consumer.EventSourceMapping.drain's rows) on a timeline: a column
    per invocation, a row per record, a square where the record was in that invocation's batch, coloured by what came
    of it and labelled with its attempt. A record handed over more than once has more than one square."""
    records = list(dict.fromkeys(event for events in frame["events"] for event in events))
    row = 34 if len(records) <= 12 else 20  # a long stream's rows closer together
    figure = go.Figure()
    for kind, colour in DELIVERY_COLOURS.items():
        rows = frame[frame["outcome"].map(delivery_kind) == kind]
        cells = [(row.invocation, event, row.attempt, row.outcome) for row in rows.itertuples() for event in row.events]
        if not cells:
            continue
        x, y, attempts, outcomes = zip(*cells)
        figure.add_scatter(x=x, y=y, mode="markers+text", name=DELIVERY_WORDS[kind], text=[f"#{a}" for a in attempts],
                           textfont={"color": "white", "size": 10 if row > 20 else 8},
                           marker={"symbol": "square", "size": row - 8, "color": colour},
                           hovertext=[f"invocation {i}, attempt {a}: {o}" for i, a, o in zip(x, attempts, outcomes)],
                           hoverinfo="text")
    handed = sum(len(events) for events in frame["events"])
    figure.update_layout(
        title={"text": title or f"{len(records)} records, handed to the function {handed} times in "
                                f"{counted(len(frame), 'invocation')}", "y": 0.97, "yanchor": "top"},
        height=170 + row * len(records), margin={"t": 80, "r": 20, "b": 50},
        xaxis={"title": "invocation (#: its attempt)", "dtick": 1, "range": [0.4, len(frame) + 0.6]},
        yaxis={"autorange": "reversed", "title": "", "categoryorder": "array", "categoryarray": records},
        legend={"orientation": "h", "x": 1, "xanchor": "right", "y": 1.02, "yanchor": "bottom"})
    return figure
