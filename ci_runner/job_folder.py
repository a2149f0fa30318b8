"""Jobs that check the repository out into a subfolder of their folder.

On GitHub's runner, `actions/checkout` with `path: src/app` puts the repository at
`$GITHUB_WORKSPACE/src/app`, and the job's steps run in `$GITHUB_WORKSPACE` unless they say
otherwise (`node src/app/script/build.js`). A sandbox keeps the repository at its workspace,
so a step that runs outside the checkout runs in a job folder made for it, where the
checkout path is a link to the workspace (`ci_runner.workflows.steps` makes the checkout a
step that lays it out): the paths the step names resolve as on the runner.
"""

from __future__ import annotations

import posixpath
import shlex

from ci_runner.github_files import with_earlier_steps
from ci_runner.pipeline import Pipeline, Step

# in /tmp, which every sandbox and build box may write; GITHUB_WORKSPACE of such a job
JOB_FOLDER = "/tmp/arena-job"


def in_job_folder(script: str, job_workdir: str) -> str:
    """`script` preceded, on its own first line (so bash's `line N:` still counts the step's
    lines), by the bash that enters `job_workdir` of the job's folder. The checkout in it is
    laid out by a step of its own, where the job checks out: the steps before it see none."""
    target = posixpath.normpath(posixpath.join(JOB_FOLDER, job_workdir))
    return f"mkdir -p {shlex.quote(target)} && cd {shlex.quote(target)} || exit 1; {script}"


def step_command(pipeline: Pipeline, step: Step) -> tuple[str, str]:
    """The bash a step runs (with what earlier steps left in GitHub's environment files), and
    where it starts, relative to the workspace."""
    script = with_earlier_steps(step.run, step.env)
    if step.job_workdir is None or pipeline.checkout_path is None:
        return script, step.workdir
    return in_job_folder(script, step.job_workdir), "."
