"""The `arena` command as tests run it: in this process by default, as a process when it matters.

Starting `arena` costs about 0.9 s of CPU, nearly all of it imports, and the fast lane started
it some fifty times. Output and exit codes are the same through typer's runner, which calls the
same click command the installed script calls, with the same environment. Tests of what only a
process shows (signals, the installed entry point, `serve`, `worker`) start `ARENA` instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from typer.testing import CliRunner

ARENA = str(Path(sys.executable).parent / "arena")
WIDTH = "200"  # tables keep whole cells, so tests can find them


def run_arena(
    args: Sequence[str], env: Mapping[str, str] | None = None, **extra: str
) -> subprocess.CompletedProcess[str]:
    """`arena *args` with `env` as its whole environment (this process's when None), tables
    `WIDTH` wide, plus `extra`.

    Variables of this process that `env` leaves out are unset for the call, as they would be
    for a child process, and everything is restored after it.
    """
    from cli import app  # the command's own modules load lazily, as in the script

    if not_variables := sorted(k for k, v in extra.items() if not isinstance(v, str)):
        raise TypeError(f"run_arena: {not_variables} are not variables (subprocess options?)")

    wanted = {**(os.environ if env is None else env), "COLUMNS": WIDTH, **extra}
    changes: dict[str, str | None] = {
        name: value for name, value in wanted.items() if os.environ.get(name) != value
    }
    changes.update({name: None for name in os.environ if name not in wanted})
    result = CliRunner().invoke(app, list(args), env=changes, prog_name="arena")
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        stderr += "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(
        [ARENA, *args], result.exit_code, stdout=result.stdout, stderr=stderr
    )
