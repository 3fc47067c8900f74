"""Install the lab's own Jupyter settings into the running Python's environment (make lab, Binder, conda):
JupyterLab's (no news popup), the Jupyter server's (kernels idle for an hour are shut down) and every
kernel's (helpers.kernel_hints: a cell run before the cells it needs says to run the notebook from the top)."""
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLACES = {"overrides.json": Path("share", "jupyter", "lab", "settings", "overrides.json"),
          "jupyter_server_config.json": Path("etc", "jupyter", "jupyter_server_config.json"),
          "ipython_kernel_config.json": Path("etc", "ipython", "ipython_kernel_config.json")}


def install(prefix=Path(sys.prefix)):
    """Copy each settings file of jupyter/ to where Jupyter reads it in the environment at `prefix`."""
    for name, place in PLACES.items():
        (prefix / place).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(HERE / name, prefix / place)


if __name__ == "__main__":
    install()
