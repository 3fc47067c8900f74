"""helpers/ in layers: each imports only the layers below it, its old paths import the same modules, and no file grows
past a screenful's reach (helpers/__init__.py draws the layers)."""
import ast
import importlib
import json
import re
from pathlib import Path

import pytest

import helpers

ROOT = Path(__file__).resolve().parent.parent
HELPERS = ROOT / "helpers"
LAYERS = {  # package under helpers/: its layer, lowest first
    "labserver": 0,
    "lab": 1,
    "anomalies": 2,
    "explore": 3,
    "runs": 4,
    "views": 5, "figures": 5,
    "teaching": 6, "checks": 6,
}
GOING_UP = {  # (importer, imported package): why it may
    ("helpers.lab.clients", "explore"): "every DynamoDB client built in a kernel gets the explorer's hold (botocore's "
                                        "client plugin); imported lazily, so the lab server's process never loads it",
}


def module_name(path):
    """helpers.lab.backend for helpers/lab/backend.py, helpers.explore for helpers/explore/__init__.py."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(name, source, is_package=False):
    """The helpers modules `source` (the text of module `name`) imports, at its top or inside a function."""
    package = name if is_package else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found += [module] if node.module else [f"{module}.{alias.name}" for alias in node.names]
    return [module for module in found if module.startswith("helpers.")]


def layer_of(module):
    """(package under helpers/, its layer) of a module name, or None for helpers itself."""
    package = module.split(".")[1] if module.count(".") else None
    return (package, LAYERS[package]) if package in LAYERS else None


def upward_imports(name, source, is_package=False):
    """The imports of module `name` that reach a higher layer than its own, less those GOING_UP names."""
    own = layer_of(name)
    wrong = []
    for module in imported(name, source, is_package):
        target = layer_of(module)
        if own and target and target[1] > own[1] and (name, target[0]) not in GOING_UP:
            wrong.append(f"{name} imports {module} ({own[0]} is layer {own[1]}, {target[0]} layer {target[1]})")
    return wrong


def helpers_files():
    """Every Python file in helpers/."""
    return sorted(HELPERS.rglob("*.py"))


def test_every_package_of_helpers_has_a_layer():
    packages = {path.parent.name for path in HELPERS.glob("*/__init__.py")}
    assert packages - set(LAYERS) == set()


def test_no_layer_imports_a_layer_above_it():
    wrong = [line for path in helpers_files()
             for line in upward_imports(module_name(path), path.read_text(), path.name == "__init__.py")]
    assert wrong == []


def test_a_planted_upward_import_is_caught():
    planted = "def draw():\n    from ..views import plots\n    return plots\n"
    assert upward_imports("helpers.lab.meter", planted) == [
        "helpers.lab.meter imports helpers.views (lab is layer 1, views layer 5)"]
    assert upward_imports("helpers.labserver.protocol.handler", "import helpers.lab.knobs\n") != []
    assert upward_imports("helpers.views.plots", "from ..explore import parse_move\n") == []


def test_the_one_upward_import_allowed_is_still_there_and_lazy():
    source = (HELPERS / "lab" / "clients.py").read_text()
    assert "helpers.explore" in imported("helpers.lab.clients", source)
    top_level = [node for node in ast.parse(source).body if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert not any("explore" in ast.unparse(node) for node in top_level)


def test_helpers_keeps_few_modules_at_its_top_and_no_long_files():
    assert len(list(HELPERS.glob("*.py"))) <= 6
    long = {str(path.relative_to(ROOT)): n for path in helpers_files()
            if (n := len(path.read_text().splitlines())) > 900}
    assert long == {}


@pytest.mark.parametrize("old", sorted(helpers.OLD_PATHS))
def test_an_old_path_imports_the_very_module_at_its_new_path(old):
    assert importlib.import_module(old) is importlib.import_module(helpers.OLD_PATHS[old])


def notebook_imports():
    """(module, names) of every `from helpers... import ...` line of every notebook."""
    lines = set()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                source = "".join(cell["source"])
                for module, wrapped, names in re.findall(
                        r"^\s*from (helpers[\w.]*) import (?:\(([\w,\s]+)\)|([\w, ]+))", source, re.M):
                    lines.add((module, tuple(name.strip() for name in (wrapped or names).split(",") if name.strip())))
    return sorted(lines)


@pytest.mark.parametrize("module, names", notebook_imports())
def test_every_name_a_notebook_imports_is_where_it_imports_it_from(module, names):
    imported_module = importlib.import_module(module)
    assert [name for name in names if not hasattr(imported_module, name)] == []
