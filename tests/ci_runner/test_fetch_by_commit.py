"""Repos fetched by commit: the task's commit by id with the least history that works, a mirror
that holds the commit's objects serves, and a failed fetch says whose fault it is."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pygit2
import pytest

from ci_runner.errors import CommitMissing, HostUnreachable, MirrorIncomplete, RepoNotFound
from ci_runner.git_mirrors import GitMirrors
from ci_runner.workspace import Workspaces, remove_tree


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    done = subprocess.run(
        ["git", *identity, *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _history(root: Path) -> dict[str, str]:
    """A source repo: three commits on main (the task's is the second) and a side branch whose
    file nothing under the task's commit needs."""
    source = root / "source"
    source.mkdir()
    _git(source, "init", "-q", "-b", "main")
    commits = {}
    for n in range(3):
        (source / f"f{n}.txt").write_text(f"version {n}\n")
        _git(source, "add", "-A")
        _git(source, "commit", "-qm", f"c{n}")
        commits[f"c{n}"] = _git(source, "rev-parse", "HEAD")
    _git(source, "checkout", "-q", "-b", "side", commits["c0"])
    (source / "unrelated.bin").write_text("x" * 10_000)
    _git(source, "add", "-A")
    _git(source, "commit", "-qm", "side")
    commits["side-blob"] = _git(source, "rev-parse", "HEAD:unrelated.bin")
    _git(source, "checkout", "-q", "main")
    commits["c1-blob"] = _git(source, "rev-parse", f"{commits['c1']}:f1.txt")
    return commits


def _drop_object(repo: Path, oid: str) -> None:
    (repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink()


def _workspaces(tmp_path: Path, depth: int = 1, rules: GitMirrors | None = None) -> Workspaces:
    return Workspaces(tmp_path / "mirrors", tmp_path / "runs", rules, fetch_depth=depth)


def test_the_commit_alone_is_fetched_and_checked_out(tmp_path: Path) -> None:
    commits = _history(tmp_path)
    workspaces = _workspaces(tmp_path)
    source = str(tmp_path / "source")
    mirror = workspaces.mirror(source, commits["c1"])
    assert mirror.is_shallow
    assert commits["c2"] not in mirror and commits["side-blob"] not in mirror  # nothing else
    assert workspaces.read_text(source, commits["c1"], "f1.txt") == "version 1\n"
    run_dir, repo = workspaces.checkout(source, commits["c1"])
    try:
        assert (run_dir / "f1.txt").read_text() == "version 1\n"
        assert not (run_dir / "f2.txt").exists()
        assert str(repo.head.target) == commits["c1"]
        # the run's .git is whole as git sees it: no "repository corruption" later on
        subprocess.run(["git", "-C", str(run_dir), "fsck", "--no-dangling"], check=True)
    finally:
        remove_tree(run_dir)


def test_depth_zero_fetches_the_commits_whole_ancestry(tmp_path: Path) -> None:
    commits = _history(tmp_path)
    mirror = _workspaces(tmp_path, depth=0).mirror(str(tmp_path / "source"), commits["c1"])
    assert commits["c0"] in mirror and commits["c2"] not in mirror and not mirror.is_shallow


def test_a_mirror_missing_an_unrelated_object_still_serves(tmp_path: Path) -> None:
    commits = _history(tmp_path)
    _drop_object(tmp_path / "source", commits["side-blob"])  # fetching every branch fails now
    workspaces = _workspaces(tmp_path)
    workspaces.mirror(str(tmp_path / "source"), commits["c1"])
    assert workspaces.read_text(str(tmp_path / "source"), commits["c1"], "f0.txt") == "version 0\n"


def test_a_mirror_missing_an_object_under_the_commit_is_the_mirrors_fault(tmp_path: Path) -> None:
    commits = _history(tmp_path)
    _drop_object(tmp_path / "source", commits["c1-blob"])
    with pytest.raises(MirrorIncomplete) as caught:
        _workspaces(tmp_path).mirror(str(tmp_path / "source"), commits["c1"])
    assert caught.value.reason == "mirror incomplete"


def test_a_shallow_mirror_that_holds_the_commit_serves_every_stage(tmp_path: Path) -> None:
    commits = _history(tmp_path)
    shallow = tmp_path / "shallow.git"
    _git(tmp_path, "init", "-q", "--bare", str(shallow))
    _git(shallow, "fetch", "-q", "--depth=1", str(tmp_path / "source"), f"{commits['c1']}:refs/x")
    rules = GitMirrors.of({"octo/calc": str(shallow)})
    workspaces = _workspaces(tmp_path, depth=0, rules=rules)  # asks for more than it holds
    run_dir, _ = workspaces.checkout("octo/calc", commits["c1"])
    try:
        assert (run_dir / "f1.txt").read_text() == "version 1\n"
        subprocess.run(["git", "-C", str(run_dir), "fsck", "--no-dangling"], check=True)
    finally:
        remove_tree(run_dir)


def test_a_bundle_serves_the_commit(tmp_path: Path) -> None:
    commits = _history(tmp_path)
    bundle = tmp_path / "source.bundle"
    _git(tmp_path / "source", "bundle", "create", "-q", str(bundle), "--all")
    workspaces = _workspaces(tmp_path, rules=GitMirrors.of({"octo/calc": str(bundle)}))
    assert workspaces.read_text("octo/calc", commits["c2"], "f2.txt") == "version 2\n"


def test_each_failure_says_whose_fault_it_is(tmp_path: Path) -> None:
    _history(tmp_path)
    workspaces = _workspaces(tmp_path)
    with pytest.raises(CommitMissing) as missing:
        workspaces.mirror(str(tmp_path / "source"), "ab" * 20)
    assert missing.value.reason == "commit not in repo"
    with pytest.raises(RepoNotFound) as absent:
        workspaces.mirror(str(tmp_path / "nowhere"), "ab" * 20)
    assert absent.value.reason == "repo not found"
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(HostUnreachable) as unreachable:
        workspaces.mirror(f"http://127.0.0.1:{port}/octo/calc.git", "ab" * 20)
    assert unreachable.value.reason == "repo host unreachable"


def test_a_mirror_made_by_an_earlier_version_is_used_as_it_is(tmp_path: Path) -> None:
    """Mirrors fetched whole before fetching by commit existed keep working."""
    commits = _history(tmp_path)
    workspaces = _workspaces(tmp_path)
    path = workspaces.mirror_path(str(tmp_path / "source"))
    path.parent.mkdir(parents=True)
    _git(tmp_path, "clone", "-q", "--mirror", str(tmp_path / "source"), str(path))
    remove_tree(tmp_path / "source")  # no fetch is needed, so none is tried
    mirror = workspaces.mirror(str(tmp_path / "source"), commits["c2"])
    assert isinstance(mirror, pygit2.Repository) and not mirror.is_shallow


def test_a_host_that_never_answers_is_given_up_on_in_time(tmp_path: Path) -> None:
    with socket.socket() as silent:  # takes connections (its backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        workspaces = _workspaces(tmp_path).with_fetch_timeout(3)
        started = time.monotonic()
        with pytest.raises(HostUnreachable, match="no answer within 3 s") as caught:
            workspaces.mirror(f"http://127.0.0.1:{port}/octo/calc.git", "ab" * 20)
        assert time.monotonic() - started < 20
    assert caught.value.reason == "repo host unreachable"
