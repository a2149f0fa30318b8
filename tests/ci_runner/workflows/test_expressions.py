"""GitHub Actions expressions: GitHub's semantics, no eval, linear time, unsupported is explicit."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ci_runner.workflows.expressions import (
    ExpressionError,
    PartialContext,
    Unsupported,
    condition,
    evaluate,
    interpolate,
)

CONTEXTS: dict[str, Any] = {
    "matrix": {"os": "ubuntu-latest", "python-version": 3.1, "experimental": False},
    "env": {"MODE": "Fast", "EMPTY": ""},
    "runner": {"os": "Linux"},
    "github": PartialContext("github", {"workspace": "/workspace", "event_name": "pull_request"}),
    "secrets": {},
}


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("matrix.os == 'UBUNTU-latest'", True),  # strings compare case-insensitively
        ("matrix['python-version'] == '3.1'", True),  # mixed types compare as numbers
        ("matrix.python-version >= 3", True),
        ("matrix.experimental == false && runner.os != 'Windows'", True),
        ("!matrix.experimental", True),
        ("env.MISSING == ''", True),  # an unknown property is null, which equals ''
        ("env.EMPTY || 'fallback'", "fallback"),  # || and && return an operand
        ("env.MODE && 'yes'", "yes"),
        ("contains(fromJSON('[\"a\", \"b\"]'), 'B')", True),
        ("contains('Hello world', 'WORLD')", True),
        ("startsWith(matrix.os, 'ubuntu') && endsWith(matrix.os, 'LATEST')", True),
        ("format('{0}-{{x}}-{1}', runner.os, 3)", "Linux-{x}-3"),
        ("join(fromJSON('[1, 2]'), '+')", "1+2"),
        ("0x10 == 16 && 1e2 == 100 && -2 < 0.5", True),
        ("null == 0 && true == 1 && 'abc' != 1", True),
        ("'it''s'", "it's"),
        ("(1 == 1) == true", True),
        ("github.event_name == 'pull_request' || github.ref == 'x'", True),  # short-circuit
    ],
)
def test_values_follow_github(expression: str, value: Any) -> None:
    assert evaluate(expression, CONTEXTS) == value


def test_status_functions_assume_every_earlier_step_succeeded() -> None:
    assert condition("success()", CONTEXTS) and condition("always()", CONTEXTS)
    assert not condition("failure()", CONTEXTS) and not condition("${{ cancelled() }}", CONTEXTS)
    assert condition(None, CONTEXTS)  # no if: is success()
    assert not condition("${{ matrix.os == 'windows-latest' }}", CONTEXTS)
    assert condition("matrix.os == 'ubuntu-latest' && !failure()", CONTEXTS)


def test_interpolation_substitutes_every_expression() -> None:
    text = "pytest --py ${{ matrix.python-version }} -k '${{ env.MODE }}' ${{ github.workspace }}/t"
    assert interpolate(text, CONTEXTS) == "pytest --py 3.1 -k 'Fast' /workspace/t"
    assert interpolate("echo ${{ '}}' }}", CONTEXTS) == "echo }}"  # }} inside a string literal
    assert interpolate("${{ secrets.TOKEN }}", CONTEXTS) == ""  # unset, as in a fork's PR


@pytest.mark.parametrize(
    ("expression", "what"),
    [
        ("needs.build.outputs.x", "the needs context"),
        ("github.ref == 'refs/heads/main'", "github.ref"),
        ("hashFiles('**/go.sum')", "hashfiles"),
    ],
)
def test_unknowable_values_are_unsupported_not_guessed(expression: str, what: str) -> None:
    with pytest.raises(Unsupported, match=what):
        evaluate(expression, CONTEXTS)


def test_the_object_filter_maps_over_elements_and_values_keeping_what_is_not_null() -> None:
    event = {
        "labels": [{"name": "slow"}, {"id": 2}, {"name": "docs"}],
        "commits": {"a": {"files": ["x.py"]}, "b": {"files": ["y.go", "z.go"]}},
    }
    contexts = {**CONTEXTS, "event": event}
    assert evaluate("event.labels.*.name", contexts) == ["slow", "docs"]
    assert evaluate("contains(event.labels.*.name, 'SLOW')", contexts) is True
    assert evaluate("event.commits.*.files.*", contexts) == ["x.py", "y.go", "z.go"]
    assert evaluate("event.labels[*].id", contexts) == [2]
    assert evaluate("matrix.os.*", contexts) == []  # a filter over a string yields nothing
    assert evaluate("contains(event.missing.*.name, 'slow')", contexts) is False


@pytest.mark.parametrize(
    "expression", ["(1 == 1", "matrix.", "1 ==", "'open", "a $ b", "contains(1 2)", "!" * 80 + "x"]
)
def test_malformed_expressions_are_errors(expression: str) -> None:
    with pytest.raises(ExpressionError):
        evaluate(expression, {"x": 1})


def test_unclosed_interpolation_is_an_error() -> None:
    with pytest.raises(ExpressionError, match="unclosed"):
        interpolate("echo ${{ matrix.os", CONTEXTS)


def test_long_expressions_evaluate_in_linear_time_without_deep_recursion() -> None:
    chain = " || ".join(["false"] * 2400) + " || 'last'"  # ~22k chars is over the cap
    with pytest.raises(ExpressionError, match="longer than"):
        evaluate(chain, CONTEXTS)
    started = time.monotonic()
    assert evaluate(" || ".join(["false"] * 1000) + " || 'last'", CONTEXTS) == "last"
    assert evaluate(".".join(["env"] + ["a"] * 3000), CONTEXTS) is None
    assert evaluate(" == ".join(["1"] * 1500), CONTEXTS) is True  # ((1 == 1) == 1) == ...
    assert time.monotonic() - started < 1.0


# The examples of GitHub's own documentation ("Evaluate expressions in workflows and actions":
# literals, operators, functions, object filters), with the contexts they assume.
DOCS_CONTEXTS: dict[str, Any] = {
    "github": {
        "event_name": "push",
        "event": {"issue": {"labels": [{"name": "bug"}, {"name": "help wanted"}]}},
    },
    "env": {"continue": "true", "time": "3"},
    "job": {"status": "success"},
    "fruits": [
        {"name": "apple", "quantity": 1},
        {"name": "orange", "quantity": 2},
        {"name": "pear", "quantity": 1},
    ],
    "vegetables": {
        "scallions": {"colors": ["green", "white", "red"], "ediblePortions": ["roots", "stems"]},
        "beets": {"colors": ["purple", "red", "gold", "white", "pink"], "ediblePortions": ["roots", "stems", "leaves"]},
        "artichokes": {"colors": ["green", "purple", "red", "black"], "ediblePortions": ["hearts", "stems", "leaves"]},
    },
}  # fmt: skip


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("null", None),
        ("false", False),
        ("711", 711),
        ("-9.2", -9.2),
        ("0xff", 255),
        ("-2.99e-2", -0.0299),
        ("'It''s open source!'", "It's open source!"),
        ("contains('Hello world', 'llo')", True),
        ("contains(github.event.issue.labels.*.name, 'bug')", True),
        ("contains(fromJSON('[\"push\", \"pull_request\"]'), github.event_name)", True),
        ("startsWith('Hello world', 'He')", True),
        ("endsWith('Hello world', 'ld')", True),
        ("format('Hello {0} {1} {2}', 'Mona', 'the', 'Octocat')", "Hello Mona the Octocat"),
        ("format('{{Hello {0} {1} {2}!}}', 'Mona', 'the', 'Octocat')", "{Hello Mona the Octocat!}"),
        ("join(github.event.issue.labels.*.name, ', ')", "bug, help wanted"),
        ("toJSON(job)", '{\n  "status": "success"\n}'),
        ("fromJSON(env.continue)", True),
        ("fromJSON(env.time)", 3),
        ("fruits.*.name", ["apple", "orange", "pear"]),
        (
            "vegetables.*.ediblePortions",
            [["roots", "stems"], ["roots", "stems", "leaves"], ["hearts", "stems", "leaves"]],
        ),
        # loose equality: objects and arrays are equal only to themselves; as numbers, NaN
        ("fromJSON('[]') == fromJSON('[]')", False),
        ("fromJSON('{}') != 0", True),
        ("fromJSON('[1]') > 0 || fromJSON('[1]') <= 0", False),
        # objects and arrays where text is needed print as GitHub prints them
        ("format('{0}/{1}', fromJSON('[1]'), job)", "Array/Object"),
        ("join(fromJSON('[[1], {\"a\": 1}, 2.0, null, true]'))", "Array,Object,2,,true"),
        ("contains(job, 'object')", True),
        ("toJSON(fromJSON('{\"v\": 3.0, \"l\": [1.5, \"x\"]}'))", '{\n  "v": 3,\n  "l": [\n    1.5,\n    "x"\n  ]\n}'),
        ("case(env.time == '3', 'three', env.time == '4', 'four', 'other')", "three"),
        ("case(false, 1, 2)", 2),
    ],
)  # fmt: skip
def test_the_examples_of_githubs_documentation(expression: str, value: Any) -> None:
    assert evaluate(expression, DOCS_CONTEXTS) == value


def test_matrix_objects_and_arrays_are_read_by_property_and_index() -> None:
    matrix = {
        "os": {"name": "ubuntu", "version": "22.04"},
        "python-version": ["3.12", "312"],
    }
    contexts = {**CONTEXTS, "matrix": matrix}
    assert evaluate("matrix.os.name", contexts) == "ubuntu"
    assert evaluate("matrix['os']['VERSION']", contexts) == "22.04"
    assert evaluate("matrix.python-version[0]", contexts) == "3.12"
    assert evaluate("matrix.python-version[1]", contexts) == "312"
    assert evaluate("matrix.python-version[2]", contexts) is None
    assert interpolate(
        "tox -e py${{ matrix.python-version[1] }} on ${{ matrix.os }}", contexts
    ) == ("tox -e py312 on Object")
    assert (
        interpolate("${{ toJSON(matrix.python-version) }}", contexts) == '[\n  "3.12",\n  "312"\n]'
    )


def test_a_partly_known_context_is_never_written_whole() -> None:
    with pytest.raises(Unsupported, match="github"):
        evaluate("toJSON(github)", CONTEXTS)
