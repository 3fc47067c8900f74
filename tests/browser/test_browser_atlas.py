"""The isolation atlas in JupyterLab: choosing a red cell and pressing Replay plays that order in a step-through panel."""
from pathlib import Path

from test_browser_notebooks import RENDER_MS, open_notebook, run_all_cells

ATLAS = Path(__file__).resolve().parents[2] / "notebooks" / "33-isolation-atlas.ipynb"
CELL = "BatchGetItem · G-single read skew (2 of 8)"
FRACTURED_ORDER = ["alice ▶ TransactWriteItems [Update, Update] → OK",
                   "alice ▶ TransactWriteItems: make {PK: 'PAIR', SK: 'x'} visible → visible",
                   "bob ▶ BatchGetItem → OK",
                   "alice ▶ TransactWriteItems: make {PK: 'PAIR', SK: 'y'} visible → visible"]
PANEL_DONE_JS = """replay => [...replay.querySelectorAll('.widget-html')].some(html => html.textContent.startsWith('all done'))"""


def test_replay_opens_a_red_cell_s_order_in_the_step_through_panel(page, jupyter_lab, screenshots):
    open_notebook(page, jupyter_lab, ATLAS)
    run_all_cells(page)
    replay = page.locator(".lab-atlas-replay").first
    replay.scroll_into_view_if_needed()
    replay.locator("select").select_option(label=CELL)
    replay.get_by_role("button", name="Replay").click()
    page.wait_for_function(PANEL_DONE_JS, arg=replay.element_handle(), timeout=RENDER_MS, polling=250)
    panel = replay.locator(".lab-panel")
    steps = [" ".join(step.split()) for step in panel.locator("li").all_inner_texts()]
    assert steps == FRACTURED_ORDER
    assert "bob → [90, 100]" in panel.inner_text()
    replay.screenshot(path=screenshots / "33-isolation-atlas-replay.png")
