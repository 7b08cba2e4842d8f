"""The exceptions labpose raises: the same message and hint the command line prints."""


class Error(Exception):
    """A labpose error: ``str(error)`` says what is wrong and where; ``error.hint`` what to do."""

    def __init__(self, message, hint=""):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self):
        return f"{self.message}\nhint: {self.hint}" if self.hint else self.message


class UsageError(Error, ValueError):
    """An argument labpose cannot use (an unknown or unsupported one, a value out of range)."""


class Interrupted(Error, KeyboardInterrupt):
    """A long call stopped by an interrupt (the kernel's stop button, Ctrl-C) after saving its state:
    ``train_network`` saves a snapshot, and the same call with ``resume=True`` continues."""
