"""A CI pipeline: ordered shell steps and where their test report is."""

from enum import StrEnum
from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class ReportFormat(StrEnum):
    JUNIT = "junit"
    GO_JSON = "go-json"
    LIBTEST = "libtest"
    CTEST = "ctest"


def _relative_posix(value: str, what: str) -> str:
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts:
        raise ValueError(f"{what} must be a path inside the repository, got {value!r}")
    return str(path)


class Step(BaseModel):
    """One shell command run with bash -eo pipefail, as GitHub Actions does."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    run: str = Field(min_length=1)
    timeout_s: float = Field(default=600, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    workdir: str = "."
    continue_on_error: bool = False

    @field_validator("workdir")
    @classmethod
    def _workdir_inside(cls, value: str) -> str:
        return _relative_posix(value, "workdir")


class ReportSpec(BaseModel):
    """Where the test report is: a file in the workspace, or the log of a named step."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: ReportFormat
    path: str | None = None
    step: str | None = None

    @field_validator("path")
    @classmethod
    def _path_inside(cls, value: str | None) -> str | None:
        return None if value is None else _relative_posix(value, "report path")

    @model_validator(mode="after")
    def _one_source(self) -> "ReportSpec":
        if (self.path is None) == (self.step is None):
            raise ValueError("report needs exactly one of 'path' (a file) or 'step' (a step's log)")
        return self


class Pipeline(BaseModel):
    """`setup` steps install the environment: they run once, as root and with network, when the
    task's environment image is built, never in a CI run; `steps` run offline in every CI run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    steps: tuple[Step, ...] = Field(min_length=1)
    report: ReportSpec
    env: dict[str, str] = Field(default_factory=dict)
    setup: tuple[Step, ...] = ()

    @model_validator(mode="after")
    def _names_unique(self) -> "Pipeline":
        names = [step.name for step in self.steps]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"step names must be unique, repeated: {', '.join(dupes)}")
        if self.report.step is not None and self.report.step not in names:
            raise ValueError(f"report step {self.report.step!r} is not a step of the pipeline")
        return self
