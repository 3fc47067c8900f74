"""The book (`make book`) opened from its folder in Chromium with the network off: every page loads without an error,
every stored plotly figure draws, no internal link is broken, and the atlas page holds every cell of the atlas."""
import json
import os
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

REPO = Path(__file__).resolve().parents[2]
VIEWPORT = {"width": 1280, "height": 900}
BOOK = REPO / "build" / "book" / "_build" / "html"
ATLAS_DATA = REPO / "build" / "book-data" / "atlas.json"
PLOTLY = "application/vnd.plotly.v1+json"
WIDGET = "application/vnd.jupyter.widget-view+json"
DRAW_MS = 20_000
# index.html only redirects to README.html.
SKIPPED_PAGES = {"index.html"}
LOCAL_SCHEMES = {"file", "data", "blob", "about"}

PAGE_JS = """() => ({
    ids: [...document.querySelectorAll('[id]')].map(element => element.id),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    figures: document.querySelectorAll('.lab-figure').length,
})"""

DRAWN_JS = """expected => document.querySelectorAll('.lab-figure.js-plotly-plot .main-svg').length >= expected"""

FIGURES_JS = """() => [...document.querySelectorAll('.lab-figure')].map(figure => ({
    drawn: figure.querySelector('.main-svg') !== null,
    traces: (figure._fullData || []).length,
}))"""


def stored_figures(notebook):
    """How many plotly figures a notebook stores: in its cells' outputs, and in its panels' Output widgets."""
    cells = notebook["cells"]
    state = notebook["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    outputs = [output for cell in cells for output in cell.get("outputs", [])]

    def in_widget(model_id):
        model = state.get(model_id, {"state": {}, "model_name": ""})
        own = [output for output in model["state"].get("outputs", []) if PLOTLY in output.get("data", {})]
        return len(own) + sum(in_widget(child.removeprefix("IPY_MODEL_")) for child in model["state"].get("children", []))

    return (sum(PLOTLY in output.get("data", {}) for output in outputs)
            + sum(in_widget(output["data"][WIDGET]["model_id"]) for output in outputs if WIDGET in output.get("data", {})))


def book_pages():
    """Every HTML page of the built book, as a path relative to its folder."""
    return sorted(path.relative_to(BOOK).as_posix() for path in BOOK.rglob("*.html")
                  if not path.relative_to(BOOK).parts[0].startswith("_") and path.name not in SKIPPED_PAGES)


@pytest.fixture(scope="module")
def book():
    """The built book's folder (skipped when `make book` has not run; under CI, which builds it, a failure)."""
    if not (BOOK / "README.html").exists() or not ATLAS_DATA.exists():
        reason = f"no book in {BOOK.relative_to(REPO)}: run `make book` first"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must build the book before its test: {reason}", pytrace=False)
        pytest.skip(reason)
    return BOOK


@pytest.fixture(scope="module")
def offline_book(chromium, book):
    """A browser tab on the book with every request that is not to a local file refused and noted."""
    context = chromium.new_context(viewport=VIEWPORT, offline=True)
    reached = []

    def refuse(route):
        if urlsplit(route.request.url).scheme in LOCAL_SCHEMES:
            route.continue_()
        else:
            reached.append(route.request.url)
            route.abort()

    context.route("**/*", refuse)
    context.on("request", lambda request: urlsplit(request.url).scheme in LOCAL_SCHEMES or reached.append(request.url))
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    tab.reached = reached
    yield tab
    context.close()


def visit(tab, page):
    """Open one page of the book; (its console errors and uncaught exceptions, what PAGE_JS says of it)."""
    errors = []
    on_console = lambda message: message.type == "error" and errors.append(f"console: {message.text}")
    on_error = lambda error: errors.append(f"exception: {error}")
    tab.on("console", on_console)
    tab.on("pageerror", on_error)
    try:
        tab.goto((BOOK / page).as_uri(), wait_until="load")
        seen = tab.evaluate(PAGE_JS)
        if seen["figures"]:
            tab.wait_for_function(DRAWN_JS, arg=seen["figures"], timeout=DRAW_MS)
            seen["drawn"] = tab.evaluate(FIGURES_JS)
    finally:
        tab.remove_listener("console", on_console)
        tab.remove_listener("pageerror", on_error)
    return errors, seen


def broken_links(pages):
    """Every link from one page of the book to a file or an anchor of the book that is not there, in words."""
    broken = []
    for page, seen in pages.items():
        for link in seen["links"]:
            parts = urlsplit(link)
            if parts.scheme != "file":
                continue
            target = Path(unquote(parts.path))
            if not target.exists():
                broken.append(f"{page} links to {target} (missing)")
                continue
            name = target.relative_to(BOOK).as_posix() if target.is_relative_to(BOOK) else None
            if parts.fragment and name in pages and unquote(parts.fragment) not in pages[name]["ids"]:
                broken.append(f"{page} links to {name}#{parts.fragment} (no such anchor)")
    return broken


def test_the_book_reads_offline_with_every_figure_drawn_and_every_link_whole(offline_book, screenshots):
    pages, problems = {}, []
    for page in book_pages():
        errors, pages[page] = visit(offline_book, page)
        problems += [f"{page}: {error}" for error in errors]
    assert not offline_book.reached, f"the book tried the network: {offline_book.reached}"
    assert not problems, "\n".join(problems)

    notebooks = {f"notebooks/{path.stem}.html": path for path in sorted((REPO / "notebooks").glob("*.ipynb"))}
    assert set(notebooks) | {"README.html", "docs/instructors.html", "docs/sources.html", "atlas.html"} <= set(pages)
    for page, path in notebooks.items():
        stored = stored_figures(json.loads(path.read_text(encoding="utf-8")))
        drawn = pages[page].get("drawn", [])
        assert len(drawn) == stored, f"{page}: {len(drawn)} figures on the page, {stored} stored in {path.name}"
        assert all(figure["drawn"] and figure["traces"] for figure in drawn), f"{page}: a figure is blank: {drawn}"
    assert broken_links(pages) == []

    offline_book.goto((BOOK / "notebooks" / "24-atomic-counters.html").as_uri())
    figure = offline_book.locator(".lab-figure.js-plotly-plot").first
    figure.scroll_into_view_if_needed()
    figure.locator(".main-svg").first.wait_for()
    figure.hover()
    figure.screenshot(path=screenshots / "book-24-atomic-counters-figure.png")
    offline_book.goto((BOOK / "notebooks" / "00-start-here.html").as_uri())
    panel = offline_book.locator(".lab-panel-static").first
    panel.locator(".main-svg").first.wait_for()
    panel.screenshot(path=screenshots / "book-00-start-here-panel.png")


def test_the_atlas_page_holds_every_cell_with_its_link_target(offline_book, book, screenshots):
    atlas = json.loads(ATLAS_DATA.read_text(encoding="utf-8"))
    offline_book.goto((book / "atlas.html").as_uri())
    grid_links = offline_book.eval_on_selector_all("table.lab-atlas td a", "links => links.map(a => a.hash)")
    sections = offline_book.eval_on_selector_all(
        "section.lab-atlas-cell", "cells => cells.map(cell => ({id: cell.id, text: cell.innerText, "
        "steps: cell.querySelectorAll('.lab-atlas-steps li').length}))")
    by_id = {section["id"]: section for section in sections}
    assert len(atlas["cells"]) == len(atlas["rows"]) * len(atlas["columns"])
    assert sorted(grid_links) == sorted(f"#{cell['anchor']}" for cell in atlas["cells"])
    for cell in atlas["cells"]:
        shown = by_id[cell["anchor"]]
        assert cell["verdict"] in shown["text"] and cell["words"] in shown["text"]
        if cell["verdict"] != "n/a":
            assert f"{cell['occurs']} of {cell['orders']} distinct orders" in shown["text"]
        if cell["verdict"] == "occurs":
            assert shown["steps"] == len(cell["steps"]) > 0 and cell["ending"] in shown["text"]
    offline_book.screenshot(path=screenshots / "book-atlas.png")
    offline_book.goto((book / "atlas.html").as_uri() + "#batchgetitem-read-skew")
    offline_book.screenshot(path=screenshots / "book-atlas-batchgetitem-read-skew.png")
    assert not offline_book.reached, f"the book tried the network: {offline_book.reached}"
