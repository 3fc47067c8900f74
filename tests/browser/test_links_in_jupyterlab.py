"""00's links to the README and to the instructors' guide open them in JupyterLab started by `make lab`, whose
server root is the repository (so `../README.md` from a notebook is a file JupyterLab can open)."""
import pytest

LINKS = {"README": "README.md", "instructors' guide": "instructors.md"}
HEADINGS = {"README": "DynamoDB concurrency lab", "instructors' guide": "Instructors' guide"}
OPENED_MS = 30_000


@pytest.mark.parametrize("text", LINKS)
def test_start_here_links_open_in_jupyterlab(page, jupyter_lab, screenshots, text):
    assert (jupyter_lab.root_dir / "README.md").exists(), f"JupyterLab serves {jupyter_lab.root_dir}, not the repository"
    page.goto(jupyter_lab.tree_url(jupyter_lab.root_dir / "notebooks" / "00-start-here.ipynb"))
    page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').wait_for(timeout=OPENED_MS)
    link = page.locator(".jp-Notebook .jp-RenderedMarkdown a", has_text=text).first
    link.scroll_into_view_if_needed(timeout=OPENED_MS)
    link.click()
    tab = page.locator(".lm-TabBar-tab.jp-mod-current", has_text=LINKS[text])
    tab.wait_for(timeout=OPENED_MS)
    page.locator(".jp-MarkdownViewer:visible .jp-RenderedMarkdown h1", has_text=HEADINGS[text]).wait_for(
        timeout=OPENED_MS)
    assert not page.locator(".jp-Dialog").count(), page.locator(".jp-Dialog").all_inner_texts()
    page.screenshot(path=screenshots / f"00-start-here-opens-{LINKS[text].removesuffix('.md')}.png")
