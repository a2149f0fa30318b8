"""The gold patch picks the job: legs validated in rank order, the first valid one kept."""

from __future__ import annotations

from arena.ci import TaskCI
from arena.tasks.pipelines import OTHER_PART, refusal_category
from arena.tasks.schema import CandidateLeg, LegChoice, Task
from arena.validation import choose_leg
from ci_runner import CIResult, CIStatus, Pipeline, TestOutcome

P, F = TestOutcome.PASSED, TestOutcome.FAILED


def _pipeline(name: str) -> Pipeline:
    return Pipeline.model_validate(
        {
            "steps": [{"name": name, "run": f"run {name}"}],
            "report": {"format": "junit", "path": "r.xml"},
        }
    )


class ScriptedCI(TaskCI):
    """Results per (step name, with the gold patch?): what each leg's tests do."""

    def __init__(
        self, outcomes: dict[str, tuple[dict[str, TestOutcome], dict[str, TestOutcome]]]
    ) -> None:
        self.outcomes = outcomes
        self.deviations: dict[str, str] = {}
        self.runs: list[str] = []

    def deviation(self, task: Task) -> str | None:
        return self.deviations.get(task.require_pipeline().steps[0].name)

    def run(self, task: Task, diffs: tuple[str, ...], replica: int = 0) -> CIResult:
        name = task.require_pipeline().steps[0].name
        self.runs.append(name)
        before, after = self.outcomes[name]
        tests = after if task.patch in diffs else before
        failing = any(o is F for o in tests.values())
        return CIResult(status=CIStatus.FAILED if failing else CIStatus.PASSED, tests=tests)


def _task(legs: list[str]) -> Task:
    candidates = tuple(CandidateLeg(leg=n, workflow="ci.yml", pipeline=_pipeline(n)) for n in legs)
    choices = tuple(
        LegChoice(leg=n, workflow="ci.yml", status="candidate", why="runs tests", rank=i)
        for i, n in enumerate(legs)
    )
    task = Task.model_validate(
        {
            "instance_id": "acme__widget-1",
            "repo": "/nonexistent/widget",
            "base_commit": "0" * 40,
            "language": "python",
            "ci_name_list": legs,
            "patch": "diff --git a/w.py b/w.py\n",
            "test_patch": "diff --git a/test_w.py b/test_w.py\n",
        }
    )
    return task.model_copy(update={"ci_candidates": candidates, "ci_legs": choices}).on_leg(
        candidates[0]
    )


def test_the_first_leg_on_which_the_gold_patch_fixes_a_test_is_kept() -> None:
    ci = ScriptedCI(
        {
            "docs": ({"build": P}, {"build": P}),  # runs, fixes nothing
            "tests": ({"t_new": F, "t_old": P}, {"t_new": P, "t_old": P}),
            "compat": ({"t_new": F}, {"t_new": P}),
        }
    )
    chosen = choose_leg(_task(["docs", "tests", "compat"]), ci, max_legs=3)
    assert chosen.ci_job == "tests @ ci.yml"
    assert chosen.validation is not None and chosen.validation.valid
    assert chosen.validation.fail_to_pass == ("t_new",)
    status = {leg.leg: (leg.status, leg.why) for leg in chosen.ci_legs}
    assert status["tests"][0] == "chosen"
    assert status["docs"][0] == "tried" and "no test fails" in status["docs"][1]
    assert status["compat"][0] == "candidate"  # never run: the better leg was valid
    assert "compat" not in ci.runs
    # the stored verdict stands for the chosen pipeline: nothing runs again
    again = choose_leg(chosen, ci, max_legs=3)
    assert again == chosen and len(ci.runs) == 8


def test_legs_tried_are_bounded_and_the_reason_says_so() -> None:
    ci = ScriptedCI({n: ({"a": P}, {"a": P}) for n in ("one", "two", "three")})
    chosen = choose_leg(_task(["one", "two", "three"]), ci, max_legs=2)
    assert chosen.validation is not None and not chosen.validation.valid
    reason = chosen.validation.reason or ""
    assert "best-ranked leg one @ ci.yml" in reason and "2 legs tried" in reason
    assert "1 more not tried (ARENA_MAX_LEGS_TRIED=2)" in reason
    assert chosen.ci_job == "one @ ci.yml"
    assert "three" not in ci.runs


def test_a_refusal_names_what_the_legs_needed() -> None:
    def leg(name: str, category: str | None, why: str = "dropped") -> LegChoice:
        return LegChoice(leg=name, workflow="ci.yml", status="rejected", why=why, category=category)

    api = leg("api tests", "needs Docker in the job")
    core = leg("core tests", None, f"{OTHER_PART}: its steps run in core")
    assert refusal_category([core, api]) == "needs Docker in the job"
    assert refusal_category([leg("build (windows)", "Windows or macOS only")]) == (
        "Windows or macOS only"
    )
    assert refusal_category([leg("lint", "no test job")]) == "no test job"


def test_an_invalid_leg_on_another_toolchain_names_the_deviation() -> None:
    ci = ScriptedCI({"py312": ({"a": P}, {"a": P})})
    ci.deviations["py312"] = "the job asks for Python 3.12; Python 3.13 is used"
    chosen = choose_leg(_task(["py312"]), ci)
    assert chosen.validation is not None and not chosen.validation.valid
    assert chosen.validation.reason == (
        "no test fails without the gold patch and passes with it; the environment is not the "
        "job's: the job asks for Python 3.12; Python 3.13 is used"
    )
