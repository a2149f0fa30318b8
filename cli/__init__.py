"""The `arena` command line; each sub-module holds one command group."""

from cli.app import app, main

__all__ = ["app", "main"]
