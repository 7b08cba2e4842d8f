"""Where the native code's console lines go: Python's sys.stderr, so that Jupyter shows them in the
cell. Progress bars redraw in place in a notebook or a terminal and are plain lines in a log."""
import os
import sys

from labpose import _labpose


def _in_notebook():
    kernel = sys.modules.get("ipykernel")
    return kernel is not None and type(sys.stderr).__module__.startswith("ipykernel")


def _live():
    if os.environ.get("LABPOSE_PLAIN_OUTPUT"):
        return False
    if _in_notebook():
        return True
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def _writer(live):
    # A terminal needs the rest of a redrawn line erased; a notebook clears it at the carriage return.
    erase = live and not _in_notebook()

    def write(text):
        stream = sys.stderr
        stream.write(text.replace("\r", "\r\033[K") if erase else text)
        stream.flush()

    return write


def call(function, *args):
    """function(*args, write, live) with the console wired to sys.stderr."""
    live = _live()
    return function(*args, _writer(live), live)


def run(arguments):
    """Runs `labpose <arguments...>` in this process; prints what it printed on stdout and returns it.
    Raises labpose.Error when the command fails."""
    # Headless always: nothing a notebook runs opens a browser or a window.
    code, printed = call(_labpose.run, ["--headless", *(str(argument) for argument in arguments)])
    if printed:
        sys.stdout.write(printed)
        sys.stdout.flush()
    if code != 0:
        from labpose._errors import Error

        raise Error(f"labpose {arguments[0]} ended with status {code}", "see the messages above")
    return printed
