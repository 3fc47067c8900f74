"""A cell's order replayed step by step in a step-through panel."""

import ipywidgets as widgets
from IPython.display import display

from ...views.widgets import FITTED_ROW_STYLE, StepThrough, fitted_row


def replay_panel(cell, title=None):
    """A step-through panel for a cell's scenario, with its first order that shows the anomaly played; its verdict
    names the anomaly when an order shows it."""
    panel = StepThrough(cell.scenario.clients, cell.scenario.reset, None, orders=cell.frame,
                        title=title or f"{cell.row} · {cell.column}: its orders, step by step",
                        consistency="dynamodb", judge=cell.scenario.judge(cell.column))
    panel.replay(cell.first)
    return panel


class Replayer:
    """A dropdown of the cells where an anomaly occurs and a button that opens the chosen one's order."""

    def __init__(self, cells):
        occurring = [cell for cell in cells.values() if cell.verdict == "occurs"]
        self.cells = {f"{cell.row} · {cell.column} ({cell.occurs} of {cell.orders})": cell for cell in occurring}
        self.choice = widgets.Dropdown(options=list(self.cells), description="cell")
        self.button = widgets.Button(description="Replay this cell", icon="play")
        self.button.on_click(lambda _: self.replay())
        self.output = widgets.Output()
        self.panel = None
        self.view = widgets.VBox([fitted_row(self.choice, self.button), self.output, widgets.HTML(FITTED_ROW_STYLE)])
        self.view.add_class("lab-atlas-replay")

    def replay(self, label=None):
        """Open the chosen cell's first anomalous order in a step-through panel below the button."""
        if self.panel is not None:
            self.panel.stepper.close()
        self.panel = replay_panel(self.cells[label or self.choice.value])
        self.output.clear_output()
        with self.output:
            display(self.panel)
        return self.panel

    def _ipython_display_(self):
        display(self.view)
