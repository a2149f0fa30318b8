"""GitHub's environment files: what a step writes to `$GITHUB_ENV` and `$GITHUB_PATH` reaches
the steps after it, as on GitHub's runner.

Workflows pick a compiler (`echo CC=clang >> $GITHUB_ENV`), a job count, a tool's directory
(`echo ~/.local/bin >> $GITHUB_PATH`) in one step for the steps after it. Run as plain shell
steps, those writes went nowhere: the tests then ran with another compiler, or a tool was
"not found". Each step's script is therefore preceded by a few lines of bash that read what
the steps before it wrote, with GitHub's rules (docs: "Workflow commands", environment files):

- `NAME=value` lines and `NAME<<DELIMITER` ... `DELIMITER` blocks; a later value wins;
- the step writing a value does not see it; the steps after it do;
- each step gets the file empty (a step that overwrites it loses nothing of earlier steps);
- a step's own `env:` wins over the file; `GITHUB_*`, `RUNNER_*` and `NODE_OPTIONS` cannot be
  set this way (nor Arena's `ARENA_*`);
- `$GITHUB_PATH` lines go before `PATH`, the last written first.

An environment build runs the setup steps (installs) once; what they wrote is kept in the
image (`keep_for_runs`), where every CI run's steps read it first. Nothing is done when the
pipeline sets no `GITHUB_ENV`/`GITHUB_PATH` (a pipeline not derived from a workflow).
"""

from __future__ import annotations

import shlex
from collections.abc import Collection

from ci_runner.env_layout import ENV_ROOT

# what the build's setup steps wrote, kept in the environment image (read-only to runs)
KEPT_ENV = f"{ENV_ROOT}/github-env"
KEPT_PATH = f"{ENV_ROOT}/github-path"
# what this sandbox's earlier steps wrote: each step's own file is emptied into these
EARLIER_ENV = '"${RUNNER_TEMP:-/tmp}/.arena-github-env"'
EARLIER_PATH = '"${RUNNER_TEMP:-/tmp}/.arena-github-path"'
UNSETTABLE = ("GITHUB_*", "RUNNER_*", "NODE_OPTIONS", "ARENA_*")

_READ_ENV_FILE = r"""_arena_env_file() {
  local line name value piece delim first
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line%$'\r'}
    if [[ $line =~ ^([A-Za-z_][A-Za-z0-9_]*)'<<'(.+)$ ]]; then
      name=${BASH_REMATCH[1]}; delim=${BASH_REMATCH[2]}; value=; first=1
      while IFS= read -r piece || [ -n "$piece" ]; do
        piece=${piece%$'\r'}
        [ "$piece" = "$delim" ] && break
        if [ -n "$first" ]; then value=$piece; first=; else value+=$'\n'$piece; fi
      done
    elif [[ $line =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]]; then
      name=${BASH_REMATCH[1]}; value=${BASH_REMATCH[2]}
    else
      continue
    fi
    case " $_arena_own " in *" $name "*) continue ;; esac
    case $name in UNSETTABLE) continue ;; esac
    export "$name=$value"
  done < "$1"
}
_arena_path_file() {
  local dir
  while IFS= read -r dir || [ -n "$dir" ]; do
    dir=${dir%$'\r'}
    [ -n "$dir" ] && PATH="$dir:$PATH"
  done < "$1"
}
""".replace("UNSETTABLE", "|".join(UNSETTABLE))

# the step's own files (written by the step before it) join the earlier steps' ones
_CONSUME = f"""_arena_consume() {{
  if [ -n "${{1:-}}" ] && [ -f "$1" ] && [ ! -L "$1" ]; then
    cat -- "$1" >>"$2" 2>/dev/null && : >"$1" 2>/dev/null
  fi
  return 0
}}
_arena_consume "${{GITHUB_ENV:-}}" {EARLIER_ENV}
_arena_consume "${{GITHUB_PATH:-}}" {EARLIER_PATH}
"""


def with_earlier_steps(run: str, own_env: Collection[str]) -> str:
    """`run` preceded by the bash that gives it what earlier steps wrote to their environment
    files; `own_env` are the step's own `env:` names, which the files do not override.

    That bash is one `eval` put on the run's own first line, so bash's `line N:` in an error
    message still counts the step's lines."""
    own = " ".join(sorted(own_env))
    apply = "\n".join(
        f"if [ -f {path} ]; then {reader} {path}; fi"
        for path, reader in (
            (KEPT_ENV, "_arena_env_file"),
            (EARLIER_ENV, "_arena_env_file"),
            (KEPT_PATH, "_arena_path_file"),
            (EARLIER_PATH, "_arena_path_file"),
        )
    )
    prelude = (
        f"_arena_own={shlex.quote(own)}\n{_READ_ENV_FILE}{_CONSUME}{apply}\n"
        "unset -f _arena_env_file _arena_path_file _arena_consume; unset _arena_own\n"
    )
    return f'[ -z "${{GITHUB_ENV:-}}${{GITHUB_PATH:-}}" ] || eval -- {_one_line(prelude)}; {run}'


def _one_line(text: str) -> str:
    """`text` as one bash word on one line: ANSI-C quoting, its newlines escaped."""
    escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("\r", "\\r")
    return "$'" + escaped.replace("\n", "\\n") + "'"


def keep_for_runs() -> str:
    """Bash, run as root after the build's setup steps, that keeps what they wrote to their
    environment files in the image, where every CI run's steps read it."""
    return (
        f"{_CONSUME}"
        f"for pair in {EARLIER_ENV}:{KEPT_ENV} {EARLIER_PATH}:{KEPT_PATH}; do\n"
        "  from=${pair%%:*}; to=${pair#*:}\n"
        '  if [ -s "$from" ]; then cat -- "$from" >>"$to" && rm -f -- "$from"; fi\n'
        "done\n"
        "unset -f _arena_consume\n"
    )
