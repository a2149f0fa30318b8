"""Public request and result types of a CI run."""

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from ci_runner.pipeline import Pipeline
from ci_runner.stops import StopCause


class TestOutcome(StrEnum):
    __test__ = False  # not a pytest test class, despite the name

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    ERROR = "error"


class CIStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    TIMEOUT = "timeout"
    ERROR = "error"


class Limits(BaseModel):
    """Resource limits of one sandboxed run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cpus: float = Field(
        default=2.0, gt=0, description="at most the host's CPUs, at a quarter of the default weight"
    )
    memory_mb: int = Field(default=2048, ge=64)
    pids: int = Field(default=512, ge=16)
    tmpfs_mb: int = Field(default=512, ge=16)
    run_timeout_s: float = Field(default=1800, gt=0)
    max_output_bytes: int = Field(default=1024 * 1024, ge=1024)
    max_report_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
    disk_mb: int = Field(
        default=2048,
        ge=16,
        description="size of the workspace, and of what a run from an environment image may "
        "write to its caches (each in memory)",
    )
    max_tests: int = Field(default=100_000, ge=1, description="tests one report may name")


class CIRequest(BaseModel):
    """Run `pipeline` on `repo` at `commit` after applying `diffs` in order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo: str = Field(min_length=1, description="git URL or local path")
    commit: str = Field(min_length=4)
    pipeline: Pipeline
    image: str = Field(min_length=1)
    diffs: tuple[str, ...] = ()
    limits: Limits | None = None
    unseen_tests: tuple[int, ...] = Field(
        default=(),
        description="indexes of `diffs` whose tests the code under test has never seen (the "
        "gold tests, a reviewer's): the runner plants twins of them (ci_runner.languages.twins)",
    )
    twin_seed: int | None = Field(
        default=None,
        ge=0,
        description="which twins (tests, values, names, places): the same seed on the same "
        "unseen tests gives the same twins, so a run of the gold side can vouch for them; "
        "None: no twins",
    )

    @field_validator("unseen_tests")
    @classmethod
    def _unseen_are_diffs(cls, value: tuple[int, ...], info: ValidationInfo) -> tuple[int, ...]:
        count = len(info.data.get("diffs", ()))
        if any(not 0 <= i < count for i in value):
            raise ValueError(f"unseen_tests {value} names a diff beyond the {count} given")
        return value


class StepResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    exit_code: int | None
    duration_s: float
    log: str
    truncated: bool = False
    timed_out: bool = False
    oom_killed: bool = False
    skipped: bool = False
    sandbox_died: bool = False
    stopped_by: StopCause | None = Field(
        default=None,
        description="what stopped the step, or the sandbox, from inside: its own processes, "
        "its memory, process or disk limit (a stop from outside raises instead: never a result)",
    )
    tripwire_exit: bool = Field(
        default=False,
        description="its non-zero exit is the runner's own doing: the only failing tests of "
        "the run are the tripwires that must fail (ci_runner.tripwires)",
    )

    @property
    def succeeded(self) -> bool:
        ended_well = self.exit_code == 0 or self.tripwire_exit
        return ended_well and not self.timed_out and not self.skipped


class TripwireSite(BaseModel):
    """What one run showed of the tripwire tests the runner planted at one site (a test
    directory, a Go package, a Rust test target): a test that must pass and, where its
    failure cannot change what else runs, one that must fail (ci_runner.tripwires)."""

    model_config = ConfigDict(frozen=True)

    site: str = Field(description="where they were planted: `python tests/unit`, `rust src/lib.rs`")
    prefix: str | None = Field(
        default=None,
        description="how the report spells the ids of the site's tests (the part before the "
        "tripwire's own name); None when the run reported neither tripwire",
    )
    passing: TestOutcome | None = Field(
        default=None, description="the outcome of the test that must pass; None: missing"
    )
    failing: TestOutcome | None = Field(
        default=None,
        description="the outcome of the test that must fail; None: missing or not planted",
    )
    failing_planted: bool = False

    @property
    def held(self) -> bool:
        """Both tripwires reported as they must be (the failing one only where planted)."""
        failing_ok = not self.failing_planted or self.failing in (
            TestOutcome.FAILED,
            TestOutcome.ERROR,
        )
        return self.passing is TestOutcome.PASSED and failing_ok


class TwinResult(BaseModel):
    """A twin the runner planted (a copy of a test the code had never seen, expecting
    another value: ci_runner.languages.twins) and its original, as the run reported them."""

    model_config = ConfigDict(frozen=True)

    test: str = Field(description="the original test's id")
    twin: str = Field(description="the twin's id; never in `tests`")
    outcome: TestOutcome | None = Field(description="the original's outcome; None: missing")
    twin_outcome: TestOutcome


# how a run is read, as a version: bump when what a run reports for the same tree changes
# (C++ binaries split into their cases, `forged`, tripwires, ctest names with spaces, the
# unseen tests decided by the invocation run apart): every kept result is then recomputed
# once (the run key and a task's fingerprint hold it)
RESULT_RULES = 6


class CIResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    status: CIStatus
    steps: tuple[StepResult, ...] = ()
    tests: dict[str, TestOutcome] = Field(default_factory=dict)
    error: str | None = None
    patch_error: str | None = Field(default=None, description="set when a diff was refused")
    patch_error_diff: int | None = Field(default=None, description="0-based index of that diff")
    fuzz: tuple[str, ...] = Field(
        default=(),
        description="diffs that did not apply exactly: recounted hunks, offsets, fuzz",
    )
    duration_s: float = 0.0
    image: str | None = None
    forged: str | None = Field(
        default=None,
        description="why the run's report is not believed (it contradicts the test runner): "
        "the code under test wrote it, so the tree that ran is not correct",
    )
    tripwires: tuple[TripwireSite, ...] = Field(
        default=(),
        description="the runner's tripwire tests, site by site; their ids are never in `tests`",
    )
    twins: tuple[TwinResult, ...] = Field(
        default=(),
        description="the twins of unseen tests the runner planted; both passing is forged",
    )
    apart: StepResult | None = Field(
        default=None,
        description="the must-fail tripwires' own invocation, run after the steps where the "
        "pipeline stops at its first failure (ci_runner.tripwires.apart); its exit is not the "
        "run's",
    )

    def failing_tests(self) -> list[str]:
        return sorted(
            t for t, o in self.tests.items() if o in (TestOutcome.FAILED, TestOutcome.ERROR)
        )
