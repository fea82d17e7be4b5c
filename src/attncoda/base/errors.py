"""The errors a reader sees: each message is one line that says what to do."""

from __future__ import annotations


class AttncodaError(RuntimeError):
    """Base of the package's one-line errors (the command line prints the message, never a traceback)."""


class ModelError(AttncodaError):
    """A model cannot be resolved, installed or loaded."""


class ChapterError(AttncodaError):
    """A chapter could not be run."""


class CacheError(AttncodaError):
    """The cache folder cannot be written."""
