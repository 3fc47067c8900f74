"""ipywidgets panels: bounded controls, a Run button, and an output area for figures and tables."""
import ipywidgets as widgets
from IPython.display import display


class Panel:
    """Controls + Run button + output; run(**values) returns what to display (figures, frames)."""

    def __init__(self, title, run, **controls):
        self.run = run
        self.controls = controls
        self.button = widgets.Button(description="Run", button_style="primary", icon="play")
        self.output = widgets.Output()
        self.last = None
        self.button.on_click(self.click)
        self.view = widgets.VBox([widgets.HTML(f"<b>{title}</b>"), *controls.values(), self.button, self.output])

    def click(self, _=None):
        """Run once with the current control values; ignored while a run is in progress."""
        if self.button.disabled:
            return
        self.button.disabled = True
        try:
            self.output.clear_output(wait=True)
            self.last = self.run(**{name: control.value for name, control in self.controls.items()})
            with self.output:
                for shown in self.last if isinstance(self.last, tuple) else (self.last,):
                    display(shown)
        finally:
            self.button.disabled = False

    def _ipython_display_(self):
        display(self.view)


def slider(description, low, high, value, step=1):
    """An integer slider that cannot leave [low, high]."""
    return widgets.IntSlider(value=value, min=low, max=high, step=step, description=description,
                             continuous_update=False, style={"description_width": "initial"})
