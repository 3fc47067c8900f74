"""A progress bar for work a learner waits on in a notebook: it appears once the work has run SHOWN_AFTER seconds, moves
as the work goes on, and is removed when the work ends or is interrupted (Kernel > Interrupt). It is never shown where
notebooks are run to store or compare their outputs, which must not depend on how fast the machine is: those runs set
DYNAMODB_LAB_PROGRESS_BAR=off (`make notebooks`, `make test`, the guide), and nothing is shown outside a kernel."""
import os
import time
from contextlib import contextmanager

SHOWN_AFTER = 2.0  # seconds of work before a bar appears: a shorter wait needs none
EVERY = 0.25  # seconds between two updates of a bar
SWITCH = "DYNAMODB_LAB_PROGRESS_BAR"


class Waiting:
    """One piece of work's progress: tick(done, words) after each of its parts (`unit`, at most `most` of them); the
    bar appears after SHOWN_AFTER s."""

    def __init__(self, what, unit, most):
        self.what, self.unit, self.most = what, unit, most
        self.began = self.updated = time.monotonic()
        self.bar = self.label = None

    def tick(self, done, words=""):
        """`done` parts of at most `most` are done (`words` say what they found); show or move the bar."""
        now = time.monotonic()
        if now - self.updated < EVERY or now - self.began < SHOWN_AFTER:
            return
        self.updated = now
        if self.bar is None:
            self.show()
            if self.bar is None:
                return
        self.bar.value = min(done, self.most)
        self.label.value = (f"{self.what}: {done:,} {self.unit} of at most {self.most:,}{words} · "
                            f"{now - self.began:.0f} s · Kernel → Interrupt stops it")

    def show(self):
        """Display the bar in the running cell's output, if a notebook's kernel runs this and the bar is wanted."""
        if not wanted():
            self.began = float("inf")  # never asked again
            return
        import ipywidgets as widgets
        from IPython.display import display
        self.bar = widgets.IntProgress(value=0, min=0, max=self.most, bar_style="info",
                                       layout=widgets.Layout(width="30%", min_width="120px"))
        self.label = widgets.Label(layout=widgets.Layout(width="auto", flex="1 1 auto"))
        self.box = widgets.HBox([self.bar, self.label], layout=widgets.Layout(flex_flow="row wrap"))
        display(self.box)

    def close(self):
        """Remove the bar, if it was shown."""
        if self.bar is not None:
            self.box.close()
            self.bar = None


def wanted():
    """True in a notebook's kernel (IPython's kernel shell) unless DYNAMODB_LAB_PROGRESS_BAR is off."""
    if os.environ.get(SWITCH, "").lower() in ("off", "0", "false", "no"):
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


@contextmanager
def waiting(what, unit, most):
    """A Waiting for the block, its bar removed when the block ends, however it ends."""
    progress = Waiting(what, unit, most)
    try:
        yield progress
    finally:
        progress.close()
