"""Mage's targets are followed as make's are: `mage check` is a test step when the target (or
one it depends on) runs `go test`, and the leg's scope is what that `go test` names."""

from __future__ import annotations

from ci_runner.workflows import derive_pipelines
from ci_runner.workflows.commands import runner_lines
from ci_runner.workflows.commands import test_runner as runner_of
from ci_runner.workflows.magefiles import mage_recipes

MAGEFILE = """//go:build mage

package main

import (
\t"github.com/magefile/mage/mg"
\t"github.com/magefile/mage/sh"
)

const goexe = "go"

// Build the binary
func Build() error {
\treturn sh.Run(goexe, "build", "./...")
}

// Run the linters and the tests
func Check() {
\tmg.Deps(Vet, Fmt)
\tmg.Deps(TestRace)
}

func Vet() error { return sh.Run(goexe, "vet", "./...") }

func Fmt() error { return sh.Run("gofmt", "-l", ".") }

// Run the tests with the race detector
func TestRace() error {
\tenv := map[string]string{"GOFLAGS": ""}
\treturn runCmd(env, goexe, "test", "-p", "2", "-race", "./...", "-tags", buildTags())
}

type Integration mg.Namespace

// The integration tests
func (Integration) Run() error {
\treturn sh.RunV(mg.GoCmd(), "test", "./integration/...")
}

func runCmd(env map[string]string, cmd string, args ...any) error {
\treturn sh.RunWith(env, cmd, args...)
}

func buildTags() string { return "extended" }
"""
FILES = {"magefile.go": MAGEFILE}


def test_a_targets_go_test_calls_are_its_recipe_and_its_dependencies_are_followed() -> None:
    recipes = mage_recipes(MAGEFILE)
    assert recipes["testrace"] == ([], "go test -p 2 -race ./...")  # -tags' value is computed
    assert recipes["integration:run"][1] == "go test ./integration/..."
    assert recipes["check"][0][:3] == ["vet", "fmt", "testrace"]
    assert recipes["build"][1] == ""


def test_mage_targets_that_reach_go_test_are_test_steps() -> None:
    assert runner_of("mage -v check", ".", FILES.get) == "go test (in magefile.go: mage check)"
    assert [r.line for r in runner_lines("mage testRace", ".", FILES.get)] == [
        "go test -p 2 -race ./..."
    ]
    assert runner_of("mage -t 10m integration:run", ".", FILES.get) is not None
    assert runner_of("mage build", ".", FILES.get) is None
    assert runner_of("mage -v check", ".", {}.get) is None  # no magefile: nothing to follow


def test_a_mage_leg_ranks_by_the_packages_its_go_test_names() -> None:
    workflow = """
on: pull_request
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: go install github.com/magefile/mage@v1.15.0
      - run: mage -v check
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: go vet ./...
"""
    derived = derive_pipelines(
        {".github/workflows/ci.yml": workflow},
        ["test", "lint"],
        "go",
        read_file=FILES.get,
        gold_paths=["hugolib/page_test.go"],
    )
    assert derived.best.leg == "test"
    chosen = next(r for r in derived.considered if r.leg == "test")
    assert "its tests reach the gold tests (go test -p 2 -race ./...)" in chosen.why
