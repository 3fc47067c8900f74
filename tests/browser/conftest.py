"""JupyterLab started the way `make lab` starts it, and a real Chromium to look at it with."""
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAYWRIGHT_PIN = "playwright==1.65.2"
CHROMIUM_NAMES = ("chromium", "chromium-browser")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
BACKEND_VARIABLES = ("AWS_ENDPOINT_URL_DYNAMODB", "DYNAMODB_LAB_USE_AWS")
# What `make test` opens in the browser (nbval runs every notebook anyway): the first notebook, the race panel with
# its interrupt and restart (24), and the notebooks a learner plays by hand in a step-through panel (30's double
# booking, the atlas's replays, 34's booking lost between two Regions). LAB_BROWSER_NOTEBOOKS=all opens every
# notebook, as before a release.
BROWSER_NOTEBOOKS = ("00-start-here", "24-atomic-counters", "30-seat-booking", "33-isolation-atlas", "34-global-tables")
VIEWPORT = {"width": 1280, "height": 900}
SERVER_START_SECONDS = 60
AUTOSAVE_SETTINGS = Path("@jupyterlab", "docmanager-extension", "plugin.jupyterlab-settings")
BROWSER_MISSING = pytest.StashKey[str]()


@dataclass
class JupyterLab:
    """A running `jupyter lab` server: where it listens, what it serves, and the token it made up at start."""

    process: subprocess.Popen
    port: int
    log: Path
    token: str | None = None
    root_dir: Path | None = None
    stopping: list = field(default_factory=list)

    @property
    def url(self):
        """The server's base URL on loopback."""
        return f"http://127.0.0.1:{self.port}"

    def tree_url(self, path):
        """The URL that opens a file of the repository in JupyterLab, token included."""
        return f"{self.url}/lab/tree/{path.relative_to(self.root_dir).as_posix()}?token={self.token}"

    def request(self, path, method="GET", token=True):
        """Send one request to the server's REST API, with or without the token; return (status, body)."""
        headers = {"Authorization": f"token {self.token}"} if token else {}
        request = urllib.request.Request(self.url + path, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def shut_down_kernels(self):
        """Stop every kernel the browser started, in the background (a kernel and its lab server take seconds)."""
        _, body = self.request("/api/kernels")
        for kernel in json.loads(body):
            stop = threading.Thread(target=self.request, args=(f"/api/kernels/{kernel['id']}", "DELETE"))
            stop.start()
            self.stopping.append(stop)


def free_port():
    """A TCP port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def lab_environment(home):
    """The caller's environment on the embedded backend, with Jupyter's per-user state kept under `home`."""
    environment = {name: value for name, value in os.environ.items() if name not in BACKEND_VARIABLES}
    environment.update(JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
                       JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
                       JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"))
    return environment


def write_user_settings(settings_dir):
    """Turn autosave off, so running the notebooks in the browser never rewrites them on disk."""
    path = settings_dir / AUTOSAVE_SETTINGS
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"autosave": False}))


def make_lab_command(*make_arguments):
    """The command `make lab` runs (as `make -n lab` prints it): the tests start JupyterLab exactly that way."""
    printed = subprocess.run(["make", "--no-print-directory", "-n", "lab", *make_arguments], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout
    return shlex.split(next(line for line in reversed(printed.splitlines()) if "jupyter lab" in line))


def server_info(runtime_dir):
    """What the server wrote to its runtime file (token, root_dir...), or None until it has written it."""
    for server_file in runtime_dir.glob("jpserver-*.json"):
        try:
            return json.loads(server_file.read_text())
        except ValueError:
            return None
    return None


def wait_until_serving(lab, runtime_dir):
    """Block until the server has written its token and answers with it; fail with its log if it exits or hangs."""
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if lab.process.poll() is not None:
            pytest.fail(f"jupyter lab exited with code {lab.process.returncode}:\n{lab.log.read_text()[-3000:]}")
        if info := server_info(runtime_dir):
            lab.token, lab.root_dir = info["token"], Path(info["root_dir"])
            try:
                if lab.request("/api/status")[0] == 200:
                    return
            except OSError:
                pass  # written its file but not listening yet
        time.sleep(0.2)
    pytest.fail(f"jupyter lab did not answer within {SERVER_START_SECONDS} s:\n{lab.log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def jupyter_lab(tmp_path_factory):
    """JupyterLab started by `make lab`'s own command, on the embedded backend, with test-only state in a temp dir.

    Added to that command: no browser, a free port, checkpoints outside the repository."""
    home = tmp_path_factory.mktemp("jupyter")
    write_user_settings(home / "settings")
    port = free_port()
    command = make_lab_command(f"PORT={port}") + ["--no-browser", "--ServerApp.port_retries=0",
                                    f"--FileCheckpoints.root_dir={home / 'checkpoints'}"]
    log = home / "jupyter-lab.log"
    with log.open("w") as output:
        process = subprocess.Popen(command, cwd=REPO, env=lab_environment(home), stdout=output,
                                   stderr=subprocess.STDOUT)
    lab = JupyterLab(process, port, log)
    try:
        wait_until_serving(lab, home / "runtime")
        yield lab
    finally:
        for stop in lab.stopping:
            stop.join(timeout=30)
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def make_lab(tmp_path):
    """Run `make lab` itself with make arguments until JupyterLab serves; return (its runtime info, what it printed)."""
    def run(*arguments):
        environment = {**lab_environment(tmp_path), "BROWSER": "true"}
        log = tmp_path / "make-lab.log"
        with log.open("w") as output:
            make = subprocess.Popen(["make", "--no-print-directory", "lab", *arguments], cwd=REPO, env=environment,
                                    stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            while not (info := server_info(tmp_path / "runtime")):
                assert make.poll() is None, log.read_text()
                time.sleep(0.2)
        finally:
            os.killpg(make.pid, signal.SIGTERM)
            make.wait(timeout=30)
        return info, log.read_text()
    return run


def missing_browser(config, reason):
    """Skip the browser tests with `reason` (repeated in the summary); under CI (CI=true) fail instead."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run the browser tests: {reason}", pytrace=False)
    config.stash[BROWSER_MISSING] = reason
    pytest.skip(reason)


@pytest.fixture(scope="module")
def chromium(request):
    """A headless Debian Chromium driven by Playwright (skipped, or failed under CI, when either is missing).

    Module-scoped: Playwright's event loop must be gone before nbval's kernels run the notebooks."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing_browser(request.config, f"Playwright is not installed: run `.venv/bin/pip install {PLAYWRIGHT_PIN}`")
    executable = next(filter(None, map(shutil.which, CHROMIUM_NAMES)), None)
    if executable is None:
        missing_browser(request.config, "Chromium not found: install it with `sudo apt-get install chromium`")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def screenshots(request):
    """build/screenshots/ (tests/conftest.py empties it as the test run starts)."""
    request.config.screenshots_dir.mkdir(parents=True, exist_ok=True)
    return request.config.screenshots_dir


@pytest.fixture
def page(chromium, jupyter_lab):
    """A fresh browser tab on a laptop-sized window; afterwards the kernels it started are shut down."""
    context = chromium.new_context(viewport=VIEWPORT)
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    yield tab
    context.close()
    jupyter_lab.shut_down_kernels()


def browser_notebooks():
    """The notebooks to open in the browser: BROWSER_NOTEBOOKS, or every one with LAB_BROWSER_NOTEBOOKS=all."""
    notebooks = sorted((REPO / "notebooks").glob("*.ipynb"))
    if os.environ.get("LAB_BROWSER_NOTEBOOKS") == "all":
        return notebooks
    return [path for path in notebooks if path.stem in BROWSER_NOTEBOOKS]


def pytest_generate_tests(metafunc):
    """A test taking `notebook` runs once for each of browser_notebooks()."""
    if "notebook" in metafunc.fixturenames:
        notebooks = browser_notebooks()
        metafunc.parametrize("notebook", notebooks, ids=[path.stem for path in notebooks])


def pytest_terminal_summary(terminalreporter, config):
    """Say why the browser tests were skipped (under xdist, `make test`'s -rs says it in the short summary)."""
    if BROWSER_MISSING in config.stash:
        terminalreporter.write_line(f"Browser tests skipped: {config.stash[BROWSER_MISSING]}")
