"""How `make test` spreads the tests and notebooks over its pytest-xdist workers (`-n`): in groups, each run in order
on one worker. A notebook's cells are one group (they share a kernel), and so are a test file's tests (they share
its module fixtures), except that the browser's notebook runs, the slowest tests, are dealt into BROWSER_GROUPS
groups, each with its own JupyterLab, and that each test of the files in SPLIT_FILES is a group of its own. The
longest groups (LONGEST_FIRST, measured with --junitxml) are handed out first, so that none of them starts last."""
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent / "notebooks").glob("*.ipynb"))
BROWSER_TEST = "tests/browser/test_browser_notebooks.py::test_notebook_runs_in_the_browser["
BROWSER_GROUPS = 2
SPLIT_FILES = ("tests/test_checks_p25.py", "tests/test_checks_p26.py", "tests/test_checks_p27.py",
               "tests/test_checks_p28.py", "tests/test_checks_p35.py", "tests/test_checks_practice.py")
LONGEST_FIRST = ("tests/test_checks_p28.py", "tests/test_binder.py", "browser-", "tests/test_lock.py",
                 "tests/browser/test_book.py", "tests/test_checks_p26.py", "tests/test_learner_kernel.py",
                 "notebooks/25-", "tests/test_checks_p27.py", "notebooks/24-")


def group_of(nodeid):
    """The group of the test or notebook cell with this node id."""
    if nodeid.startswith(BROWSER_TEST):
        stem = nodeid[len(BROWSER_TEST):-1]
        return f"browser-{[path.stem for path in NOTEBOOKS].index(stem) % BROWSER_GROUPS}"
    path = nodeid.split("::", 1)[0]
    return nodeid if path in SPLIT_FILES else path


def rank(group):
    """Where a group stands in LONGEST_FIRST (len(LONGEST_FIRST) for every other group)."""
    return next((place for place, prefix in enumerate(LONGEST_FIRST) if group.startswith(prefix)), len(LONGEST_FIRST))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's scope scheduler, with group_of as the scope of each test."""
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        """Send each group whole to one worker: the longest first, then the others in the order they were collected."""

        ranked = False

        def _split_scope(self, nodeid):
            return group_of(nodeid)

        def _assign_work_unit(self, node):
            if not self.ranked:
                for group in sorted(self.workqueue, key=rank):
                    self.workqueue.move_to_end(group)
                self.ranked = True
            super()._assign_work_unit(node)

    return GroupScheduling(config, log)
