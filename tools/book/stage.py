"""Lay out the book's sources in build/book-src/ (python tools/book/stage.py ATLAS_JSON), for `jupyter-book build`.

The notebooks are taken as stored, never executed. Each plotly figure's JSON becomes a <div> that the book's own
lab-figures.js draws with the plotly.min.js shipped once in _static/; each panel (an ipywidgets output) becomes its
stored figure and a line saying that it plays in JupyterLab, with the ways to launch it. A file is written only
when its text changes, so Sphinx rebuilds only the pages whose sources changed.
"""
import hashlib
import html
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SOURCE = REPO / "build" / "book-src"
PLOTLY = "application/vnd.plotly.v1+json"
WIDGET = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
PAGES = ["README.md", "docs/instructors.md", "docs/sources.md"]
PARTS = [("Start here", ["00"]), ("The patterns", [f"{n}" for n in range(22, 30)]),
         ("Practice", ["30", "31", "32", "33", "atlas", "34", "35", "36"]), ("Interview", ["40"]),
         ("For instructors", ["docs/instructors", "docs/sources"])]
REPOSITORY_PLACEHOLDER = "<owner>/<repository>"


def write_if_changed(path, text):
    """Write `text` to `path` unless it already holds exactly that (Sphinx rebuilds a page whose file is newer)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def github_repository():
    """'owner/name' of the clone's GitHub origin, or None (the book then shows the README's placeholders)."""
    try:
        url = subprocess.run(["git", "remote", "get-url", "origin"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    for prefix in ("https://github.com/", "git@github.com:"):
        if url.startswith(prefix):
            return url.removeprefix(prefix).removesuffix(".git")
    return None


def launch_links(notebook, repository):
    """The HTML line saying where a panel plays: Binder, Codespaces, or `make lab` in a clone."""
    labpath = f"notebooks%2F{notebook}"
    if repository:
        binder = f"https://mybinder.org/v2/gh/{repository}/HEAD?labpath={labpath}"
        codespaces = f"https://codespaces.new/{repository}"
        ways = (f'<a class="lab-launch" href="{binder}">launch on Binder</a> · '
                f'<a class="lab-launch" href="{codespaces}">open in Codespaces</a>')
    else:
        ways = (f"Binder: <code>https://mybinder.org/v2/gh/{html.escape(REPOSITORY_PLACEHOLDER)}/HEAD?labpath={labpath}"
                "</code> with this repository's GitHub owner and name · Codespaces: on GitHub, Code → Codespaces")
    return (f'<p class="lab-plays-in-jupyterlab">▶ This panel plays in JupyterLab: its sliders and buttons run '
            f"real races there. {ways} · or on your laptop: <code>make lab</code> in a clone of the lab "
            f"(see the README).</p>")


def figure_div(figure):
    """A plotly figure as a <div> lab-figures.js draws: its JSON in a script element the browser never runs."""
    text = json.dumps(figure, separators=(",", ":")).replace("</", "<\\/")
    return f'<div class="lab-figure"><script type="application/json">{text}</script></div>'


def output_html(output):
    """One stored output (of a cell or of a panel's Output widget) as HTML."""
    data = output.get("data", {})
    if PLOTLY in data:
        return figure_div(data[PLOTLY])
    if "text/html" in data:
        return "".join(data["text/html"])
    if output.get("output_type") == "stream":
        return f'<pre class="lab-panel-text">{html.escape("".join(output["text"]))}</pre>'
    if "text/plain" in data:
        return f'<pre class="lab-panel-text">{html.escape("".join(data["text/plain"]))}</pre>'
    return ""


def widget_parts(state, model_id):
    """(title, outputs) of a panel: the first HTML label it shows, and what its Output widgets hold."""
    title, outputs = None, []
    model = state.get(model_id)
    if model is None:
        return title, outputs
    if model["model_name"] == "OutputModel":
        outputs += model["state"].get("outputs", [])
    if model["model_name"] == "HTMLModel" and "<style" not in model["state"].get("value", ""):
        title = model["state"]["value"]
    for child in model["state"].get("children", []):
        child_title, child_outputs = widget_parts(state, child.removeprefix("IPY_MODEL_"))
        title = title or child_title
        outputs += child_outputs
    return title, outputs


def panel_html(state, view, notebook, repository):
    """A panel's static form: its title, its stored figures and tables, and where it plays."""
    title, outputs = widget_parts(state, view["model_id"])
    parts = [f'<div class="lab-panel-title">{title}</div>' if title else ""]
    parts += [output_html(output) for output in outputs]
    parts.append(launch_links(notebook, repository))
    return '<div class="lab-panel-static">' + "".join(parts) + "</div>"


def book_output(output, state, notebook, repository):
    """A stored output as the book shows it: figures and panels as HTML, everything else unchanged."""
    data = output.get("data", {})
    if PLOTLY in data or WIDGET in data:
        shown = figure_div(data[PLOTLY]) if PLOTLY in data else panel_html(state, data[WIDGET], notebook, repository)
        return {"output_type": "display_data", "metadata": {}, "data": {"text/html": shown}}
    return output


def book_notebook(path, repository):
    """The notebook at `path` as the book renders it (JSON text)."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    state = notebook["metadata"].pop("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = "".join(cell["source"]).replace("```mermaid", "```text")
        if cell["cell_type"] != "code":
            continue
        cell["outputs"] = [book_output(output, state, path.name, repository) for output in cell["outputs"]]
        if cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"):
            cell["metadata"].setdefault("tags", []).append("hide-input")
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def atlas_page(atlas):
    """The atlas page (MyST markdown with HTML): the grid, every cell a link target, then each cell in words."""
    cells = {(cell["row"], cell["column"]): cell for cell in atlas["cells"]}
    marks = {"occurs": "occurs", "prevented": "✓", "n/a": ""}
    head = "".join(f'<th scope="col" title="{html.escape(column["words"])}">{html.escape(column["name"])}</th>'
                   for column in atlas["columns"])
    body = []
    for row in atlas["rows"]:
        tds = []
        for column in atlas["columns"]:
            cell = cells[(row["name"], column["name"])]
            count = f" {cell['occurs']}/{cell['orders']}" if cell["verdict"] != "n/a" else ""
            tds.append(f'<td class="lab-atlas-{cell["verdict"].replace("/", "")}"><a href="#{cell["anchor"]}" '
                       f'title="{html.escape(cell["text"])}">{marks[cell["verdict"]]}{count or "·"}</a></td>')
        body.append(f'<tr><th scope="row">{html.escape(row["name"])}</th>{"".join(tds)}</tr>')
    lines = ["# The isolation atlas", "",
             "Every way of reading and writing DynamoDB (rows) against every anomaly (columns), each cell explored "
             "by notebook [33](notebooks/33-isolation-atlas.ipynb) in every distinct order of its requests and every "
             "answer DynamoDB's consistency allows. **✓ k/n**: prevented in all *n* distinct orders; **occurs k/n**: "
             "the anomaly occurs in *k* of *n*; **·**: does not apply. Each cell links to its own paragraph below "
             "(copy the link to cite one cell); an anomalous cell shows the first order in which it occurs, step by "
             "step, as notebook 33's replay panel plays it.", "",
             '<div class="lab-atlas-scroll"><table class="lab-atlas">'
             f'<thead><tr><th scope="col">access pattern</th>{head}</tr></thead>'
             f'<tbody>{"".join(body)}</tbody></table></div>', "", "## The anomalies", ""]
    lines += [f"* **{column['name']}**: {column['words']} *For example: {column['example']}*"
              for column in atlas["columns"]]
    lines += ["", "## Every cell", ""]
    for row in atlas["rows"]:
        lines += [f"### {row['name']}", "", "```python", row["code"], "```", ""]
        if row["guide"]:
            lines += [f"The Developer Guide's isolation table (*Isolation levels for DynamoDB transactions*) gives "
                      f"it as **{row['guide']}**; notebook 33 checks this row's isolation columns against it.", ""]
        for column in atlas["columns"]:
            cell = cells[(row["name"], column["name"])]
            parts = [f'<section class="lab-atlas-cell lab-atlas-{cell["verdict"].replace("/", "")}" '
                     f'id="{cell["anchor"]}">',
                     f'<h4><a href="#{cell["anchor"]}">{html.escape(row["name"])} × '
                     f'{html.escape(column["name"])}</a></h4>',
                     f'<p class="lab-atlas-verdict"><b>{cell["verdict"]}</b>'
                     + (f": in {cell['occurs']} of {cell['orders']} distinct orders" if cell["verdict"] != "n/a" else "")
                     + "</p>",
                     f'<p class="lab-atlas-words">{html.escape(cell["words"])}</p>']
            if cell["steps"]:
                steps = "".join(f"<li><code>{html.escape(step)}</code></li>" for step in cell["steps"])
                parts.append(f'<ol class="lab-atlas-steps">{steps}</ol>'
                             f'<p class="lab-atlas-ending">{html.escape(cell["ending"])}</p>')
            parts.append("</section>")
            lines += ["".join(parts), ""]
    return "\n".join(lines)


def config(repository):
    """Jupyter Book's _config.yml: stored outputs only, nothing loaded from the network."""
    return json.dumps({
        "title": "DynamoDB concurrency lab",
        "author": "the DynamoDB concurrency lab",
        "only_build_toc_files": True,
        "execute": {"execute_notebooks": "off"},
        "parse": {"myst_enable_extensions": ["colon_fence", "deflist", "html_image", "substitution"],
                  "myst_heading_anchors": 3},
        "html": {"use_repository_button": False, "use_issues_button": False, "use_edit_page_button": False,
                 "use_multitoc_numbering": False, "comments": {"hypothesis": False, "utterances": False},
                 "extra_footer": "Built from the notebooks as stored, with their outputs; every panel plays in "
                                 "JupyterLab."},
        "launch_buttons": {"notebook_interface": "jupyterlab", "binderhub_url": "", "jupyterhub_url": "",
                           "thebe": False, "colab_url": ""},
        "repository": {"url": f"https://github.com/{repository}" if repository else "", "branch": "HEAD"},
        "sphinx": {"local_extensions": {"lab_book": str(HERE)}, "recursive_update": True,
                   "config": {"nb_ipywidgets_js": {}, "nb_render_markdown_format": "myst", "html_static_path": ["_static", "_figures"],
                              "html_theme_options": {"search_bar_text": "Search the lab…", "use_download_button": False,
                                                     "secondary_sidebar_items": {"atlas": []}},
                              "html_copy_source": False,
                              "html_context": {"default_mode": "light"},
                              "myst_heading_anchors": 3, "lab_book_tools": tools_digest()}},
    }, indent=1)


def tools_digest():
    """A digest of the book's own tools: when one changes, Sphinx's config differs and every page is rebuilt."""
    digest = hashlib.sha256()
    for path in sorted(HERE.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def toc():
    """_toc.yml: the README first, then the notebooks in the lab's order, the atlas beside 33, the guide last."""
    names = {path.name[:2]: f"notebooks/{path.stem}" for path in sorted((REPO / "notebooks").glob("*.ipynb"))}
    parts = [{"caption": caption, "chapters": [{"file": names.get(entry, entry)} for entry in entries]}
             for caption, entries in PARTS]
    missing = set(names) - {entry for _, entries in PARTS for entry in entries}
    if missing:
        raise SystemExit(f"notebooks {sorted(missing)} are in no part of the book: add them to PARTS in {__file__}")
    return json.dumps({"format": "jb-book", "root": "README", "parts": parts}, indent=1)


def stage(atlas_json):
    """Write every source of the book into build/book-src/."""
    repository = github_repository()
    for page in PAGES:
        write_if_changed(SOURCE / page, (REPO / page).read_text(encoding="utf-8"))
    for notebook in sorted((REPO / "notebooks").glob("*.ipynb")):
        write_if_changed(SOURCE / "notebooks" / notebook.name, book_notebook(notebook, repository))
    write_if_changed(SOURCE / "atlas.md", atlas_page(json.loads(Path(atlas_json).read_text(encoding="utf-8"))))
    write_if_changed(SOURCE / "_config.yml", config(repository))
    write_if_changed(SOURCE / "_toc.yml", toc())
    for folder, target in (("static", "_static"), ("figures", "_figures")):
        for asset in (HERE / folder).iterdir():
            write_if_changed(SOURCE / target / asset.name, asset.read_text(encoding="utf-8"))
    copy_if_changed(plotly_js(), SOURCE / "_figures" / "plotly.min.js")


def plotly_js():
    """plotly.min.js as the plotly package ships it (the notebooks' own plotly version)."""
    import plotly

    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def copy_if_changed(source, target):
    """Copy a file unless the target already holds the same bytes."""
    if not target.exists() or target.read_bytes() != source.read_bytes():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


if __name__ == "__main__":
    stage(sys.argv[1])
