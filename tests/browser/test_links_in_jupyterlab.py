"""00's links to the README and to the instructors' guide open them in JupyterLab started by `make lab`, whose
server root is the repository (so `../README.md` from a notebook is a file JupyterLab can open)."""
LINKS = {"README": ("README.md", "DynamoDB concurrency lab"),
         "instructors' guide": ("instructors.md", "Instructors' guide")}
OPENED_MS = 30_000


def test_start_here_links_to_the_readme_and_the_guide_open_in_jupyterlab(page, jupyter_lab, screenshots):
    assert (jupyter_lab.root_dir / "README.md").exists(), f"JupyterLab serves {jupyter_lab.root_dir}, not the repository"
    page.goto(jupyter_lab.tree_url(jupyter_lab.root_dir / "notebooks" / "00-start-here.ipynb"))
    page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').wait_for(timeout=OPENED_MS)
    for text, (name, heading) in LINKS.items():
        page.locator(".lm-TabBar-tab", has_text="00-start-here.ipynb").click()
        link = page.locator(".jp-Notebook .jp-RenderedMarkdown a", has_text=text).first
        link.scroll_into_view_if_needed(timeout=OPENED_MS)
        link.click()
        page.locator(".lm-TabBar-tab.jp-mod-current", has_text=name).wait_for(timeout=OPENED_MS)
        page.locator(".jp-MarkdownViewer:visible .jp-RenderedMarkdown h1", has_text=heading).wait_for(timeout=OPENED_MS)
        assert not page.locator(".jp-Dialog").count(), page.locator(".jp-Dialog").all_inner_texts()
        page.screenshot(path=screenshots / f"00-start-here-opens-{name.removesuffix('.md')}.png")
