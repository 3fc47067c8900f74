"""Figures for the practice notebooks: 30's seat race and 32's wallet, four ways (bars labelled, red where wrong)."""
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..plots import COLOURS

WALLET_COLUMNS = ("balance after the race (from 100)", "race: paid out and recorded",
                  "withdrawals paid twice after a retry")


def verdict_colours(broken):
    """Red for each bar that shows something wrong, green for each that does not."""
    return [COLOURS["lost"] if bad else COLOURS["ok"] for bad in broken]


def counted(n, word):
    """'1 seat', '13 confirmations': a number with its noun, plural unless the number is 1."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def label_room(values, floor=0):
    """An axis range that holds 0, `floor` and every value, with room beyond each end for a label outside its bar."""
    low, high = min(0, floor, *values), max(0, floor, *values)
    room = max(1, high - low) * 0.45
    return [low - (room if low < 0 else 0), high + room]


def seat_race_figure(summary, clients):
    """Confirmations given against seats held, per strategy; labels upright above the bars.

    summary: one row per strategy with columns strategy, confirmations given, seats actually held
    (as notebook 30's seat_race builds it).
    """
    confirmed = summary["confirmations given"].astype(int)
    held = summary["seats actually held"].astype(int)
    figure = go.Figure([
        go.Bar(name="confirmations given", x=summary["strategy"], y=confirmed,
               marker_color=verdict_colours(confirmed != held), text=[counted(n, "confirmation") for n in confirmed]),
        go.Bar(name="seats actually held", x=summary["strategy"], y=held, marker_color=COLOURS["expected"],
               text=[f"{counted(n, 'seat')} held" for n in held]),
    ])
    figure.update_traces(textposition="outside", textangle=0, cliponaxis=False)
    figure.add_hline(y=1, line_dash="dot")
    figure.add_annotation(x=1, xref="paper", xanchor="left", y=1, text=" seats that exist", showarrow=False)
    blind = confirmed[summary["strategy"] == "blind writes"].iloc[0]
    legend = "left bar of each pair: confirmations (red: more than the seats held); right bar, grey: seats held"
    figure.update_layout(title=f"{clients} clients, one seat: blind writes confirmed it {counted(blind, 'time')}, "
                               f"the version condition once<br><sup>{legend}</sup>",
                         yaxis_title="count", yaxis_range=[0, max(2, *confirmed) * 1.2], barmode="group",
                         showlegend=False, height=460, margin={"t": 100, "r": 130})
    return figure


def add_stage_row(figure, row, stage, retried):
    """One stage's three cells: its balance, paid out beside recorded, and retried withdrawals paid twice."""
    balance, paid, recorded = (int(stage[column]) for column in (
        "balance after the race", "paid out in the race", "recorded (100 - balance)"))
    twice = int(stage["paid twice after a retry"])
    figure.add_bar(y=[stage["stage"]], x=[balance], marker_color=verdict_colours([balance < 0]),
                   text=[str(balance)], row=row, col=1)
    figure.add_bar(y=["recorded", "paid out"], x=[recorded, paid], marker_color=verdict_colours([recorded != paid] * 2),
                   text=[f"recorded {recorded}", f"paid out {paid}"], row=row, col=2)
    figure.add_bar(y=[""], x=[twice], marker_color=verdict_colours([twice > 0]), text=[f"{twice} of {retried}"],
                   row=row, col=3)
    figure.update_xaxes(range=label_room([balance], 100), row=row, col=1)
    figure.update_xaxes(range=label_room([paid, recorded]), row=row, col=2)
    figure.update_xaxes(range=label_room([twice], retried), row=row, col=3)
    figure.update_yaxes(showticklabels=False, row=row, col=2)


def wallet_stages_figure(summary, clients, amount):
    """Four rows, one per stage, each on axes of its own so a small bar beside -470 still reads.

    summary: one row per stage with columns stage, balance after the race, paid out in the race,
    recorded (100 - balance), paid twice after a retry (as notebook 32's wallet_stages builds it).
    """
    rows = len(summary)
    figure = make_subplots(rows=rows, cols=3, column_titles=WALLET_COLUMNS, horizontal_spacing=0.12,
                           vertical_spacing=0.07)
    for row, (_, stage) in enumerate(summary.iterrows(), start=1):
        add_stage_row(figure, row, stage, clients // 2)
    figure.update_traces(orientation="h", textposition="outside", textangle=0, cliponaxis=False, showlegend=False)
    figure.update_xaxes(zeroline=True, zerolinecolor="black", zerolinewidth=1)
    legend = "each row a stage, each cell on its own scale; red: what is wrong (a negative balance, money paid but " \
             "not recorded, a retry paid twice)"
    title = f"{clients} withdrawals of {amount} at once, four ways: only the ledger transaction has no red"
    figure.update_layout(title=f"{title}<br><sup>{legend}</sup>", height=130 + 105 * rows, bargap=0.3,
                         margin={"t": 110, "l": 170, "b": 40})
    return figure
