"""A CI pipeline: ordered shell steps and where their test report is."""

from enum import StrEnum
from pathlib import PurePosixPath
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)


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
    # a job that checks the repository out into a subfolder (`Pipeline.checkout_path`) runs
    # some steps above it, in the job's folder: where, relative to that folder (else None)
    job_workdir: str | None = None

    @field_validator("workdir")
    @classmethod
    def _workdir_inside(cls, value: str) -> str:
        return _relative_posix(value, "workdir")

    @field_validator("job_workdir")
    @classmethod
    def _job_workdir_inside(cls, value: str | None) -> str | None:
        return None if value is None else _relative_posix(value, "job workdir")

    @model_serializer(mode="wrap")
    def _without_job_workdir(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        """A step in the repository dumps as before job folders existed: stored tasks, the
        environment images and the CI results cached by content keep their keys."""
        data: dict[str, Any] = handler(self)
        if self.job_workdir is None:
            data.pop("job_workdir", None)
        return data


class ReportSpec(BaseModel):
    """Where the test report is: a file in the workspace, every file a pattern matches (`*`
    stands for any characters, `/` included, as in find's `-path`: one report per module of
    a build, `*/target/surefire-reports/TEST-*.xml`), or the log of a named step."""

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


def _port_pairs(value: Any) -> Any:
    """GitHub's `ports:` list (`"5432:5432"`, `"6379"`, `3306`) as {container port: local port}."""
    if not isinstance(value, (list, tuple)):
        return value
    pairs: dict[int, int] = {}
    for item in value:
        text = str(item).strip().removesuffix("/tcp")
        local, _, inside = text.rpartition(":")
        local = local.rpartition(":")[2]  # "127.0.0.1:5432:5432" names an address too
        pairs[int(inside)] = int(local or inside)
    return pairs


class Service(BaseModel):
    """A `services:` container of the job (PostgreSQL, MySQL, Redis, ...), run beside every
    CI run and the environment build, reachable from the job as `localhost`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    image: str = Field(min_length=1)  # as the job names it: `postgres:12`, `redis:7-alpine`
    env: dict[str, str] = Field(default_factory=dict)
    # container port -> the port the job reaches it on at localhost
    ports: dict[int, int] = Field(default_factory=dict)

    @field_validator("ports", mode="before")
    @classmethod
    def _github_ports(cls, value: Any) -> Any:
        return _port_pairs(value)


class Pipeline(BaseModel):
    """`setup` steps install the environment: they run once, as root and with network, when the
    task's environment image is built, never in a CI run; `steps` run offline in every CI run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    steps: tuple[Step, ...] = Field(min_length=1)
    report: ReportSpec
    env: dict[str, str] = Field(default_factory=dict)
    setup: tuple[Step, ...] = ()
    services: dict[str, Service] = Field(default_factory=dict)
    # where the job checks the repository out (`actions/checkout` with `path: src/app`),
    # relative to its folder: steps with a `job_workdir` run there, beside the checkout
    checkout_path: str | None = None

    @field_validator("checkout_path")
    @classmethod
    def _checkout_path_inside(cls, value: str | None) -> str | None:
        if value is None:
            return None
        path = _relative_posix(value, "checkout path")
        if path == ".":
            raise ValueError("checkout path must be a subfolder of the job's folder, got '.'")
        return path

    @model_serializer(mode="wrap")
    def _without_empty_services(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        """A pipeline without services or a checkout path dumps as before they existed:
        stored tasks and the CI results cached by request content keep their keys."""
        data: dict[str, Any] = handler(self)
        if not self.services:
            data.pop("services", None)
        if self.checkout_path is None:
            data.pop("checkout_path", None)
        return data

    def env_values(self, key: str) -> list[str]:
        """The values `key` has in the pipeline's env and in each step's that sets it."""
        return [env[key] for env in (self.env, *(s.env for s in self.steps)) if key in env]

    @model_validator(mode="after")
    def _names_unique(self) -> "Pipeline":
        names = [step.name for step in self.steps]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"step names must be unique, repeated: {', '.join(dupes)}")
        if self.report.step is not None and self.report.step not in names:
            raise ValueError(f"report step {self.report.step!r} is not a step of the pipeline")
        if self.checkout_path is None and any(
            s.job_workdir is not None for s in (*self.setup, *self.steps)
        ):
            raise ValueError("a step runs in the job's folder, but no checkout path is given")
        return self
