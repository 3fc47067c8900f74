"""IPython extension every lab kernel loads (jupyter/ipython_kernel_config.json): a NameError met because this kernel
has not run the cells before (it is new, or was restarted) says to run the notebook from the top, instead of a bare
NameError: before the Setup cell has run, for any name; after it, for a name another cell of the notebook defines."""
import ast
import json
import sys

RUN_ALL_ABOVE = "run the notebook from the top (Run → Run All Above Selected Cell), then this cell again."
SETUP_FIRST = ("This kernel has not run the notebook's cells above this one (it is new, or was restarted): "
               + RUN_ALL_ABOVE)


def setup_has_run():
    """True once this kernel has connected to a backend, as every Setup cell does."""
    backend = sys.modules.get("helpers.lab.backend")
    return backend is not None and backend._lab is not None


def bound_names(code):
    """The names a cell's Python code binds in the notebook's namespace (not those bound inside its functions)."""
    try:
        nodes = list(ast.parse(code).body)
    except SyntaxError:
        return set()
    names = set()
    while nodes:
        node = nodes.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif not isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            nodes.extend(ast.iter_child_nodes(node))
    return names


def another_cell_defines(shell, name):
    """True when a code cell of the kernel's notebook (`__session__`, which JupyterLab sets), other than the one
    running, binds `name`."""
    try:
        with open(shell.user_ns.get("__session__") or "", encoding="utf-8") as notebook:
            cells = json.load(notebook)["cells"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    running = shell.history_manager.input_hist_parsed[-1].strip()
    codes = [shell.transform_cell("".join(cell["source"])) for cell in cells if cell.get("cell_type") == "code"]
    return any(name in bound_names(code) for code in codes if code.strip() != running)


def hint(shell, value):
    """What to add to a NameError's message so that the learner can go on, or ''."""
    if not setup_has_run():
        return SETUP_FIRST
    name = getattr(value, "name", None)
    if name and another_cell_defines(shell, name):
        return (f"Another cell of this notebook defines {name}, and this kernel has not run it (a restarted kernel "
                f"forgets every cell it ran): {RUN_ALL_ABOVE}")
    return ""


def explain_name_error(shell, etype, value, tb, tb_offset=None):
    """IPython custom exception handler: the NameError's traceback, with what to run when the cells before have not."""
    words = hint(shell, value)
    if words:
        value = etype(f"{value}. {words}", name=getattr(value, "name", None))
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


def load_ipython_extension(shell):
    """Register the NameError handler in this kernel."""
    shell.set_custom_exc((NameError,), explain_name_error)
