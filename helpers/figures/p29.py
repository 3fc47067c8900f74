"""Notebook 29's lease timelines: the lock and report calls a CallRecorder noted, and the figure drawn from them.

Each label sits in a row of its own above or below its lane, clear of the lease bars, and a label that
would overlap its neighbour in the same row moves to the other side or one row further out.
"""
import plotly.graph_objects as go

COLOURS = {"worker-A": "#4C78A8", "worker-B": "#F58518", "worker-C": "#54A24B"}
LANE_PX = 100
BAR_WIDTH = 0.36
ROW_PX = 14
GAP_PX = 5
CHAR_PX = 6.4
PLOT_PX = 820
BELOW = ("lease over", "write refused", "heartbeat")


def lease_events(recorder):
    """The lock and report calls a CallRecorder noted: time answered, worker, kind, outcome, lease end and token."""
    events = []
    for call in recorder.calls:
        body = call.request
        kind = describe_call(call.name, body)
        if kind is None:
            continue
        values, item = body.get("ExpressionAttributeValues", {}), body.get("Item", {})
        who = (item.get("owner") or item.get("writer") or values.get(":me") or {}).get("S")
        expires = (item.get("expiresAt") or values.get(":later") or {}).get("N")
        fence = ((item.get("fence") or values.get(":token") or {}).get("N")
                 or (call.answer.get("Attributes") or {}).get("fence"))
        events.append({"t": call.ended - recorder.origin, "who": who, "kind": kind,
                       "target": (body.get("Key") or item).get("PK", {}).get("S", ""), "ok": "Error" not in call.answer,
                       "lease_over": int(expires) + 1 - recorder.started_at if expires else None,
                       "token": int(fence) if fence is not None else None})
    return events


def describe_call(operation, body):
    """'acquire', 'heartbeat', 'release' or 'write' for a lock or report call; None for reads."""
    condition, update = body.get("ConditionExpression", ""), body.get("UpdateExpression", "")
    if operation == "PutItem":
        return "acquire" if "expiresAt" in condition else "write"
    if operation == "UpdateItem":
        return "acquire" if "expiresAt <" in condition else "release" if "REMOVE" in update else "heartbeat"
    return "release" if operation == "DeleteItem" else None


def lease_marks(events, resources):
    """Bars (worker, start, end, believed) and marks (t, lane, legend, symbol, colour, label) from recorded events."""
    held, bars, marks = {}, [], []
    last_seen = {e["who"]: e["t"] for e in events}

    def close(worker, until):
        start, over, released = held.pop(worker)
        bars.append((worker, start, until if released else min(until, over), False))
        if not released and until > over:
            bars.append((worker, over, until, True))
        if not released:
            marks.append((over, worker, "lease over", "line-ns", "grey", "lease over"))

    for e in events:
        who, t = e["who"], e["t"]
        token = f" (token {e['token']})" if e["token"] is not None else ""
        if e["kind"] == "write":
            marks.append((t, resources[e["target"]], "write accepted" if e["ok"] else "write refused",
                          "circle" if e["ok"] else "x", "green" if e["ok"] else "red",
                          f"{who.split('-')[1]} writes{token}"))
        elif not e["ok"]:
            marks.append((t, who, "refused", "x", "red", f"{e['kind']} refused{token}"))
        elif e["kind"] == "acquire":
            holders = [w for w in held if w != who and not held[w][2]]
            for w in holders:
                close(w, max(last_seen[w], held[w][1]))
            marks.append((t, who, "takes over" if holders else "acquired", "star" if holders else "triangle-right",
                          "gold" if holders else "black", ("takes over" if holders else "acquires") + token))
            held[who] = [t, e["lease_over"], False]
        elif e["kind"] == "heartbeat":
            held[who][1] = e["lease_over"]
            marks.append((t, who, "heartbeat", "line-ns", "black", "heartbeat"))
        elif e["kind"] == "release":
            held[who][2] = True
            close(who, t)
            marks.append((t, who, "released", "square", "black", "releases"))
    for worker in list(held):
        close(worker, max(last_seen[worker], held[worker][1]))
    return bars, marks


def label_rows(marks, x_range):
    """For each mark, its label's row: +1, +2, ... above its lane or -1, -2, ... below, no two labels overlapping."""
    per_unit = PLOT_PX / (x_range[1] - x_range[0])
    taken = {}
    rows = []
    for t, lane, legend, *_, text in marks:
        half = len(text) * CHAR_PX / 2 / per_unit
        first = -1 if legend in BELOW else 1
        for row in (first, -first, 2 * first, -2 * first, 3 * first):
            spans = taken.setdefault((lane, row), [])
            if all(t + half < low or t - half > high for low, high in spans):
                spans.append((t - half, t + half))
                rows.append(row)
                break
        else:
            rows.append(first)
    return rows


def label_shift(row):
    """Pixels from a lane's centre to the near edge of a label in `row`: past the bar, then one row per step."""
    edge = BAR_WIDTH * LANE_PX / 2 + GAP_PX + (abs(row) - 1) * ROW_PX
    return edge if row > 0 else -edge


def lease_timeline(events, title, workers, resources=None):
    """Lanes of workers and resources: leases held (bars), believed (hatched), heartbeats, refusals, writes.

    resources maps a written item's PK to the name of its lane, e.g. {"REPORT#plain": "report"}.
    """
    resources = resources or {}
    lanes = workers + list(resources.values())
    level = {lane: len(lanes) - 1 - i for i, lane in enumerate(lanes)}
    bars, marks = lease_marks(events, resources)
    right = max([m[0] for m in marks] + [end for _, _, end, _ in bars])
    x_range = [-0.6, right + 0.9]
    figure = go.Figure()
    for worker, start, end, believed in bars:
        colour = COLOURS.get(worker)
        marker = (dict(color="white", line_color=colour, line_width=1, pattern_shape="/", pattern_fgcolor=colour)
                  if believed else dict(color=colour))
        figure.add_bar(y=[level[worker]], base=[start], x=[end - start], orientation="h", width=BAR_WIDTH,
                       marker=marker, showlegend=False,
                       hovertext=f"{worker} {'still believes it holds' if believed else 'holds'} the lock")
    for legend in dict.fromkeys(m[2] for m in marks):
        group = [m for m in marks if m[2] == legend]
        figure.add_scatter(x=[m[0] for m in group], y=[level[m[1]] for m in group], mode="markers", name=legend,
                           marker=dict(symbol=group[0][3], color=group[0][4], size=16, line_width=2,
                                       line_color=group[0][4]), hovertext=[m[5] for m in group])
    for (t, lane, *_, text), row in zip(marks, label_rows(marks, x_range)):
        figure.add_annotation(x=t, y=level[lane], text=text, showarrow=False, font_size=11,
                              yshift=label_shift(row), yanchor="bottom" if row > 0 else "top")
    figure.update_layout(title=title, barmode="overlay", height=190 + LANE_PX * len(lanes),
                         xaxis=dict(title="seconds since the scene began", range=x_range),
                         legend=dict(orientation="h", y=-0.2, yanchor="top"),
                         yaxis=dict(tickvals=list(level.values()), ticktext=list(level),
                                    range=[-0.6, len(lanes) - 0.4]),
                         margin=dict(t=60))
    return figure
