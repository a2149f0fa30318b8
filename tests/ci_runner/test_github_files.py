"""$GITHUB_ENV and $GITHUB_PATH from step to step, by GitHub's rules, run by real bash."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ci_runner.github_files import with_earlier_steps


class Job:
    """Steps run one after another as the runner runs them: a fresh bash each, the job's env."""

    def __init__(self, tmp: Path) -> None:
        self.env = {
            "PATH": "/usr/bin:/bin",
            "RUNNER_TEMP": str(tmp),
            "GITHUB_ENV": str(tmp / "github_env"),
            "GITHUB_PATH": str(tmp / "github_path"),
            "GITHUB_WORKSPACE": "/workspace",
            "JOB_LEVEL": "job",
        }

    def step(self, run: str, env: dict[str, str] | None = None) -> str:
        own = env or {}
        done = subprocess.run(
            [
                "bash",
                "--noprofile",
                "--norc",
                "-eo",
                "pipefail",
                "-c",
                with_earlier_steps(run, own),
            ],
            env={**self.env, **own},
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout


def test_a_value_reaches_the_steps_after_the_one_writing_it(tmp_path: Path) -> None:
    job = Job(tmp_path)
    assert job.step('echo "CC=clang" >> "$GITHUB_ENV"; echo "[${CC:-}]"') == "[]\n"
    assert job.step('echo "$CC"') == "clang\n"
    assert job.step('echo "CC=gcc" >> "$GITHUB_ENV"; echo "$CC"') == "clang\n"
    assert job.step('echo "$CC"') == "gcc\n"  # a later value wins


def test_a_step_overwriting_the_file_loses_nothing_of_earlier_steps(tmp_path: Path) -> None:
    job = Job(tmp_path)
    job.step('echo "FIRST=1" >> "$GITHUB_ENV"')
    job.step('echo "SECOND=2" > "$GITHUB_ENV"')  # `>`: its own file only
    assert job.step('echo "$FIRST $SECOND"') == "1 2\n"


def test_multiline_values_and_windows_line_ends(tmp_path: Path) -> None:
    job = Job(tmp_path)
    job.step(
        "{ echo 'NOTES<<EOF_1'; echo 'line one'; echo 'x=y'; echo 'EOF_1';"
        " printf 'CRLF=value\\r\\n'; } >> \"$GITHUB_ENV\""
    )
    assert job.step('printf "%s|%s" "$NOTES" "$CRLF"') == "line one\nx=y|value"


def test_the_steps_own_env_and_githubs_names_are_not_overridden(tmp_path: Path) -> None:
    job = Job(tmp_path)
    job.step(
        "{ echo JOB_LEVEL=file; echo OWN=file; echo GITHUB_WORKSPACE=/elsewhere;"
        ' echo RUNNER_TEMP=/x; echo NODE_OPTIONS=--inspect; echo ARENA_X=1; } >> "$GITHUB_ENV"'
    )
    out = job.step(
        'echo "$JOB_LEVEL $OWN $GITHUB_WORKSPACE $RUNNER_TEMP ${NODE_OPTIONS:-} ${ARENA_X:-}"',
        env={"OWN": "step"},
    )
    # the file wins over the job's env; the step's own env wins over the file
    assert out == f"file step /workspace {tmp_path}  \n"


def test_path_entries_go_first_the_last_written_first(tmp_path: Path) -> None:
    job = Job(tmp_path)
    job.step('echo /opt/a >> "$GITHUB_PATH"; echo /opt/b >> "$GITHUB_PATH"; echo "$PATH"')
    assert job.step('echo "$PATH"') == "/opt/b:/opt/a:/usr/bin:/bin\n"


def test_lines_that_set_nothing_are_passed_over_and_nothing_leaks(tmp_path: Path) -> None:
    job = Job(tmp_path)
    job.step("printf '# a comment\\n\\n1BAD=x\\nGOOD=y\\n' >> \"$GITHUB_ENV\"")
    out = job.step('echo "$GOOD"; declare -F | grep -c _arena_ || true; echo "${_arena_own-unset}"')
    assert out == "y\n0\nunset\n"


def test_a_pipeline_without_the_files_runs_its_steps_unchanged(tmp_path: Path) -> None:
    job = Job(tmp_path)
    del job.env["GITHUB_ENV"], job.env["GITHUB_PATH"]
    assert job.step("echo plain; exit 0") == "plain\n"
    assert not list(tmp_path.iterdir())


def test_bash_still_counts_the_steps_own_lines_in_its_errors(tmp_path: Path) -> None:
    job = Job(tmp_path)
    job.step('echo "A=1" >> "$GITHUB_ENV"')
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
         with_earlier_steps('echo "$A"\nno_such_command_here', {})],
        env=job.env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.stdout == "1\n"
    assert "line 2: no_such_command_here: command not found" in done.stderr
