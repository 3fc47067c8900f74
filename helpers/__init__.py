"""Plumbing for the DynamoDB concurrency lab, in layers that data flows down through (each imports only those below).

    labserver/  the embedded DynamoDB server (its own process): protocol, DynamoDB's rules, consistency model, Regions
    lab/        reach the lab: backend, clients, tables, knobs, meter, the transcript and the gate on every client
    anomalies/  name what a history shows, after Jepsen's Elle
    explore/    run requests in every order, one released at a time
    runs/       run requests at once: races, recorder, contention, a stream's consumer
    views/      show them: plots, widgets, and figures/ per notebook
    teaching/   teach: progress, the guide's table, the isolation atlas, and checks/ per notebook

The modules' old paths (`helpers.widgets`, `helpers.explore`, `helpers.knobs`, ...) still import: each is the same
module as at its new path (OLD_PATHS), so notebooks, learners' code and the README's commands keep working.
"""
import importlib
import importlib.abc
import importlib.util
import sys

OLD_PATHS = {
    **{f"helpers.{name}": f"helpers.lab.{name}" for name in (
        "backend", "clients", "doctor", "gate", "kernel_hints", "knobs", "labhttp", "meter", "tables", "trace")},
    **{f"helpers.{name}": f"helpers.runs.{name}" for name in ("consumer", "contention", "races", "recorder")},
    **{f"helpers.{name}": f"helpers.views.{name}" for name in ("plots", "widgets")},
    **{f"helpers.{name}": f"helpers.teaching.{name}" for name in ("atlas", "guide_table", "progress")},
    "helpers.reduction": "helpers.explore.reduction",
    **{f"helpers.labserver.{name}": f"helpers.labserver.{package}.{name}" for package, names in (
        ("protocol", ("handler", "server", "together")),
        ("replication", ("globaltables", "regions", "streamlog", "streams")),
        ("accounting", ("capacity", "metering")),
        ("rules", ("answers", "batches", "exports", "expressions", "items", "keys", "legacy", "partiql", "tables",
                   "transactions", "values")),
        ("model", ("consistency", "fresh", "knobs"))) for name in names},
}


class OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports a module by its old path as the very module at its new one (and runs it with `python -m`)."""

    def find_spec(self, fullname, path=None, target=None):
        """A spec for an old path (its origin the new path's file, for `python -m`), None for every other name."""
        if fullname not in OLD_PATHS:
            return None
        new = importlib.util.find_spec(OLD_PATHS[fullname])
        return importlib.util.spec_from_loader(fullname, self, origin=new.origin)

    def create_module(self, spec):
        """The module at the new path, imported once under its new name."""
        module = importlib.import_module(OLD_PATHS[spec.name])
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module):
        """Gives the module back its own spec (the import system set the old path's): it ran at its new path."""
        module.__spec__ = module.__spec__.loader_state

    def get_code(self, fullname):
        """The new path's code, for `python -m helpers.doctor` (runpy asks the loader for it)."""
        new = importlib.util.find_spec(OLD_PATHS[fullname])
        return new.loader.get_code(new.name)


if not any(isinstance(finder, OldPaths) for finder in sys.meta_path):
    sys.meta_path.append(OldPaths())

from .lab.backend import BackendError, Lab, connect  # noqa: E402  (below the finder, which must come first)
from .lab.knobs import as_weak_as_dynamodb  # noqa: E402
from .lab.tables import fresh_table, scan_frame  # noqa: E402
from .lab.trace import outcome, show, tracing  # noqa: E402

__all__ = ["BackendError", "Lab", "as_weak_as_dynamodb", "connect", "fresh_table", "outcome", "scan_frame", "show",
           "tracing"]
