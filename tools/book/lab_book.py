"""The book's Sphinx extension: plotly's JavaScript, shipped once in _static/, loaded only by pages with a figure;
no page loads anything from the network (Thebe, which fetches its code from a CDN, is left out)."""
FIGURE_MARK = 'class="lab-figure"'
FIGURE_SCRIPTS = ("_static/plotly.min.js", "_static/lab-figures.js")
NETWORK_ASSETS = ("thebe", "THEBE_JS_URL")


def offline(assets):
    """The page's scripts or stylesheets once each, in order, without those that would reach the network and
    without the figure scripts (Jupyter Book adds every static script to every page; prepare_page adds them back)."""
    kept = []
    for asset in assets:
        named = f"{asset.filename} {asset.attributes.get('body', '')}"
        if (asset not in kept and not any(mark in named for mark in NETWORK_ASSETS)
                and not str(asset.filename).startswith(FIGURE_SCRIPTS)):
            kept.append(asset)
    return kept


def prepare_page(app, pagename, templatename, context, doctree):
    """Keep the page offline; a page holding a figure gets plotly.min.js and lab-figures.js at its end."""
    context["script_files"] = offline(context.get("script_files", []))
    context["css_files"] = offline(context.get("css_files", []))
    if FIGURE_MARK in context.get("body", ""):
        context["body"] += "".join(f'<script src="{context["pathto"](script, 1)}"></script>'
                                   for script in FIGURE_SCRIPTS)


def setup(app):
    """Register the per-page handling above (Jupyter Book itself loads _static/lab-book.css on every page)."""
    app.add_config_value("lab_book_tools", "", "env")  # stage.py's digest of tools/book/: a change rebuilds all
    app.connect("html-page-context", prepare_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
