"""IPython extension every lab kernel loads (jupyter/ipython_kernel_config.json): a cell run before the
notebook's Setup cell says to run the Setup cell first, instead of a bare NameError."""
import sys

SETUP_FIRST = ("This kernel has not run the notebook's Setup cell (it is new, or was restarted): run the Setup "
               "cell first, the first code cell of the notebook, then this cell again.")


def setup_has_run():
    """True once this kernel has connected to a backend, as every Setup cell does."""
    backend = sys.modules.get("helpers.backend")
    return backend is not None and backend._lab is not None


def explain_name_error(shell, etype, value, tb, tb_offset=None):
    """IPython custom exception handler: the NameError's traceback, saying to run Setup when it has not run."""
    if not setup_has_run():
        value = etype(f"{value}. {SETUP_FIRST}")
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


def load_ipython_extension(shell):
    """Register the NameError handler in this kernel."""
    shell.set_custom_exc((NameError,), explain_name_error)
