"""Mirror rules: a repo name or URL prefix fetched from elsewhere, dataset lines untouched."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ci_runner import CISettings
from ci_runner.errors import WorkspaceError
from ci_runner.git_mirrors import GitMirrors, MirrorRuleError
from ci_runner.workspace import Workspaces
from tests.conftest import MakeRepo

GITHUB = "https://github.com/hashicorp/raft.git"


def test_a_repo_rule_maps_the_github_url_and_the_bare_name() -> None:
    rules = GitMirrors.of({"hashicorp/raft": "/srv/raft.git"})
    assert rules.resolve(GITHUB) == "/srv/raft.git"
    assert rules.resolve("hashicorp/raft") == "/srv/raft.git"
    assert rules.resolve("https://github.com/HashiCorp/Raft") == "/srv/raft.git"
    assert (
        rules.resolve("https://github.com/junegunn/fzf.git")
        == "https://github.com/junegunn/fzf.git"
    )


def test_a_prefix_rule_appends_the_rest_or_fills_placeholders() -> None:
    appended = GitMirrors.of({"https://github.com/": "https://git.corp.example/gh/"})
    assert appended.resolve(GITHUB) == "https://git.corp.example/gh/hashicorp/raft.git"
    templated = GitMirrors.of({"https://github.com/": "/mirrors/{owner}+{name}.git"})
    assert templated.resolve(GITHUB) == "/mirrors/hashicorp+raft.git"


def test_the_most_specific_rule_wins() -> None:
    rules = GitMirrors.of(
        {
            "https://github.com/": "/all/{repo}",
            "https://github.com/hashicorp/": "/hashicorp/{name}",
            "hashicorp/raft": "/raft.git",
        }
    )
    assert rules.resolve(GITHUB) == "/raft.git"
    assert rules.resolve("https://github.com/hashicorp/vault.git") == "/hashicorp/vault"
    assert rules.resolve("https://github.com/junegunn/fzf.git") == "/all/junegunn/fzf"


@pytest.mark.parametrize("spec", ["hashicorp/raft", "raft=/x", "=/x", "hashicorp/raft="])
def test_a_bad_rule_names_itself(spec: str) -> None:
    with pytest.raises(MirrorRuleError, match=r"raft|FROM=TO|both sides"):
        GitMirrors.parse([spec])


def test_the_setting_reads_json_or_from_to_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_GIT_MIRRORS", '{"hashicorp/raft": "/a.git"}')
    assert CISettings().mirror_rules().resolve(GITHUB) == "/a.git"
    monkeypatch.setenv("ARENA_GIT_MIRRORS", "hashicorp/raft=/a.git, junegunn/fzf=/b.git")
    rules = CISettings().mirror_rules()
    assert rules.resolve("https://github.com/junegunn/fzf.git") == "/b.git"


def test_a_mirrored_repo_is_fetched_from_the_mirror_and_found_again_without_the_rule(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    local, commit = make_repo({"README": "hello\n"})
    rules = GitMirrors.of({"acme/widget": local})
    with_rule = Workspaces(tmp_path / "mirrors", tmp_path / "runs", rules)
    source = "https://github.com/acme/widget.git"
    assert with_rule.read_text(source, commit, "README") == "hello\n"
    # later commands (build-env, CI runs) find the cached mirror under the task's own name
    without_rule = Workspaces(tmp_path / "mirrors", tmp_path / "runs")
    run_dir, _ = without_rule.checkout(source, commit)
    assert (run_dir / "README").read_text() == "hello\n"


def test_a_missing_mirror_is_named_in_the_error(tmp_path: Path) -> None:
    rules = GitMirrors.of({"acme/widget": str(tmp_path / "nowhere.git")})
    workspaces = Workspaces(tmp_path / "mirrors", tmp_path / "runs", rules)
    with pytest.raises(WorkspaceError, match=r"mirror: .*nowhere\.git"):
        workspaces.mirror("https://github.com/acme/widget.git", "0" * 40)


def test_a_bundle_makes_a_mirror(tmp_path: Path, make_repo: MakeRepo) -> None:
    """As the real instances ship: `git clone --mirror X.bundle` is a mirror a rule can name."""
    local, commit = make_repo({"a.txt": "a\n"})
    bundle = tmp_path / "acme+widget.bundle"
    subprocess.run(["git", "-C", local, "bundle", "create", str(bundle), "--all"], check=True)
    mirror = tmp_path / "acme+widget.git"
    subprocess.run(["git", "clone", "-q", "--mirror", str(bundle), str(mirror)], check=True)
    rules = GitMirrors.of({"https://github.com/": str(tmp_path / "{owner}+{name}.git")})
    workspaces = Workspaces(tmp_path / "mirrors", tmp_path / "runs", rules)
    assert workspaces.read_text("https://github.com/acme/widget.git", commit, "a.txt") == "a\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="handing files to another user needs root")
def test_mirrors_another_service_user_owns_serve_this_one(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    """The API and LLM workers run as uid 10001 and the CI worker as root, sharing the
    operator's mirror folder and the cache's mirrors: a repo another user owns is read."""
    local, commit = make_repo({"README": "hello\n"})
    rules = GitMirrors.of({"acme/widget": local})
    source = "https://github.com/acme/widget.git"
    first = Workspaces(tmp_path / "mirrors", tmp_path / "runs", rules)
    assert first.read_text(source, commit, "README") == "hello\n"  # fetched into the cache
    for owned in (Path(local), tmp_path / "mirrors"):
        subprocess.run(["chown", "-R", "10001:10001", str(owned)], check=True)
    other = Workspaces(tmp_path / "mirrors", tmp_path / "runs", rules)
    run_dir, _ = other.checkout(source, commit)
    assert (run_dir / "README").read_text() == "hello\n"
    fresh = Workspaces(tmp_path / "fresh-mirrors", tmp_path / "runs", rules)
    assert fresh.read_text(source, commit, "README") == "hello\n"  # fetched from 10001's repo
