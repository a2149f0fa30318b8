"""Repository sources: a cached bare mirror per source, a fresh checkout per run."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pygit2

from ci_runner.config import CISettings
from ci_runner.errors import (
    CommitMissing,
    HostUnreachable,
    MirrorIncomplete,
    RepoNotFound,
    WorkspaceError,
)
from ci_runner.git_mirrors import GitMirrors
from ci_runner.locks import file_lock
from ci_runner.owners import pid_alive


def source_key(source: str) -> str:
    """One mirror per source: local paths are made absolute so spellings agree."""
    path = Path(source).expanduser()
    if path.exists():
        return str(path.resolve())
    return source


class Workspaces:
    """Keeps bare mirrors under `mirrors_dir` and makes run directories under `runs_dir`.

    A cached mirror is keyed by the source as tasks name it, and fetched from where
    `git_mirrors` points that source at fetch time: a repo imported once through a local
    mirror is found again by every later build and run, with or without the rule.

    A task's commit is fetched by its id, with `fetch_depth` commits of history (1: the commit
    alone), never the repo's other branches and tags: a large repo costs one tree, not its
    whole history, and a mirror missing objects nothing under the commit needs still serves.
    Where the source cannot be asked for a commit by id (a bundle, an old server), its
    branches and tags are fetched instead.
    """

    def __init__(
        self,
        mirrors_dir: Path,
        runs_dir: Path,
        git_mirrors: GitMirrors | None = None,
        fetch_depth: int = 1,
        fetch_timeout: float | None = None,
    ) -> None:
        self._mirrors_dir = mirrors_dir
        self._runs_dir = runs_dir
        self._git_mirrors = git_mirrors or GitMirrors()
        self._fetch_depth = fetch_depth
        self._fetch_timeout = fetch_timeout

    @classmethod
    def from_settings(cls, settings: CISettings, extra: GitMirrors | None = None) -> Workspaces:
        rules = settings.mirror_rules() + (extra or GitMirrors())
        return cls(
            settings.mirrors_dir,
            settings.runs_dir,
            rules,
            settings.fetch_depth,
            settings.fetch_timeout_s,
        )

    def with_fetch_timeout(self, seconds: float) -> Workspaces:
        """The same workspaces, whose fetches give up after `seconds`."""
        return Workspaces(
            self._mirrors_dir, self._runs_dir, self._git_mirrors, self._fetch_depth, seconds
        )

    def fetch_location(self, source: str) -> str:
        """Where `source` is fetched from, after the mirror rules."""
        return source_key(self._git_mirrors.resolve(source))

    def mirror_path(self, source: str) -> Path:
        key = source_key(source)
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        return self._mirrors_dir / f"{digest}.git"

    def mirror(self, source: str, commit: str) -> pygit2.Repository:
        """The bare mirror of `source`, holding `commit` (fetched by id if it lacks it).

        Raises a `WorkspaceError` whose class says why not: the host did not answer, the repo
        is not there, the commit is not in it, or a mirror lacks objects under the commit."""
        path = self.mirror_path(source)
        with file_lock(path.with_suffix(".lock")):
            if not path.exists():
                self._create_mirror(path)
            repo = pygit2.Repository(str(path))
            if _find_commit(repo, commit) is not None:
                return repo
            self._fetch_commit(path, source, commit)
            repo = pygit2.Repository(str(path))
            if _complete_commit(repo, commit) is None:
                raise MirrorIncomplete(
                    f"{self._shown(source)}: commit {commit} arrived without every object "
                    "of its tree"
                )
            return repo

    def _create_mirror(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=path.parent, prefix=".new-"))
        try:
            pygit2.init_repository(str(staging), bare=True)
            staging.rename(path)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise

    def _shown(self, source: str) -> str:
        location = self.fetch_location(source)
        return source if location == source_key(source) else f"{source} (mirror: {location})"

    def _fetch_commit(self, path: Path, source: str, commit: str) -> None:
        """`commit` by id, else every branch and tag; the failure classified."""
        location = self.fetch_location(source)
        depth = [f"--depth={self._fetch_depth}"] if self._fetch_depth else []
        keep = f"+{commit}:refs/arena/commits/{commit}"  # a ref, so no gc drops it
        try:
            # a shallow source hands its boundary on (else git keeps the commit without
            # its parents and calls the mirror corrupt later)
            _git(
                path,
                "fetch",
                "--quiet",
                "--no-tags",
                "--update-shallow",
                *depth,
                location,
                keep,
                timeout=self._fetch_timeout,
            )
            return
        except WorkspaceError as exc:
            by_id = _fetch_failure(exc, self._shown(source), commit)
        if not isinstance(by_id, CommitMissing):
            raise by_id
        try:  # the source may hold the commit yet refuse it by id (a bundle, an old server)
            _git(
                path,
                "fetch",
                "--quiet",
                "--update-shallow",
                location,
                "+refs/heads/*:refs/heads/*",
                "+refs/tags/*:refs/tags/*",
                timeout=self._fetch_timeout,
            )
        except WorkspaceError as exc:
            raise _fetch_failure(exc, self._shown(source), commit) from None
        if _find_commit(pygit2.Repository(str(path)), commit) is None:
            raise by_id

    def _object_at(self, source: str, commit: str, path: str) -> pygit2.Object | None:
        repo = self.mirror(source, commit)
        found = _find_commit(repo, commit)
        assert found is not None  # mirror() guarantees it
        obj: pygit2.Object = found.tree
        for part in [p for p in path.split("/") if p]:
            if not isinstance(obj, pygit2.Tree) or part not in obj:
                return None
            obj = repo[obj[part].id]
        return obj

    def read_text(self, source: str, commit: str, path: str) -> str | None:
        """A file's text at `commit`, read from the mirror; None if absent or binary."""
        blob = self._object_at(source, commit, path)
        if not isinstance(blob, pygit2.Blob) or blob.is_binary:
            return None
        return blob.data.decode("utf-8", errors="replace")

    def list_files(self, source: str, commit: str) -> list[str]:
        """Every file path of the tree at `commit`."""
        tree = self._object_at(source, commit, "")
        assert isinstance(tree, pygit2.Tree)
        paths: list[str] = []

        def walk(node: pygit2.Tree, prefix: str) -> None:
            for entry in node:
                name = f"{prefix}{entry.name}"
                if entry.filemode == pygit2.enums.FileMode.TREE:
                    child = node[str(entry.name)]
                    assert isinstance(child, pygit2.Tree)
                    walk(child, f"{name}/")
                elif entry.filemode in _FILE_MODES:
                    paths.append(name)

        walk(tree, "")
        return paths

    def read_files(self, source: str, commit: str, directory: str) -> dict[str, str]:
        """The text files directly under `directory` at `commit`, read from the mirror."""
        tree = self._object_at(source, commit, directory)
        if not isinstance(tree, pygit2.Tree):
            return {}
        files: dict[str, str] = {}
        for entry in tree:
            text = self.read_text(source, commit, f"{directory}/{entry.name}")
            if text is not None:
                files[f"{directory}/{entry.name}"] = text
        return files

    def checkout(self, source: str, commit: str) -> tuple[Path, pygit2.Repository]:
        """A fresh directory holding `commit` of `source`, with a .git of its own.

        The .git holds that commit and its history only, fetched as a pack (so no file is
        shared with the mirror): no branch, tag or object from later commits, which would
        let the code under test read the upstream fix.
        """
        mirror = self.mirror(source, commit)
        found = _find_commit(mirror, commit)
        assert found is not None  # mirror() guarantees it
        self._runs_dir.mkdir(parents=True, exist_ok=True)
        run_dir = Path(tempfile.mkdtemp(dir=self._runs_dir, prefix=f"run-{os.getpid()}-"))
        try:
            repo = pygit2.init_repository(str(run_dir))
            _git(
                run_dir,
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                "--update-shallow",  # a mirror fetched by depth hands its boundary on
                str(mirror.path),
                str(found.id),
            )
            repo.checkout_tree(  # type: ignore[no-untyped-call]
                repo[found.id], strategy=pygit2.enums.CheckoutStrategy.FORCE
            )
            repo.set_head(found.id)
            stamp_times(run_dir, found.commit_time)
        except (pygit2.GitError, KeyError, ValueError) as exc:
            remove_tree(run_dir)
            raise WorkspaceError(f"cannot check out {commit} of {source}: {exc}") from exc
        except BaseException:
            remove_tree(run_dir)
            raise
        return run_dir, repo


# what git prints when a fetch fails, by whose fault it is (checked in this order)
_UNREACHABLE = re.compile(
    r"Could not resolve host|Temporary failure in name resolution|Connection refused"
    r"|Connection timed out|Network is unreachable|No route to host|timed out"
    r"|Failed to connect|SSL|TLS|gnutls|Proxy CONNECT aborted",
    re.IGNORECASE,
)
_NO_COMMIT = re.compile(
    r"not our ref|couldn't find remote ref|no such remote ref|unadvertised object"
    r"|Server does not allow request for unadvertised|is not a valid|bad revision"
    r"|fatal: remote error: upload-pack",
    re.IGNORECASE,
)
_INCOMPLETE = re.compile(
    r"unable to read|missing (?:blob|tree|commit|object)|bad object|did not send all necessary"
    r"|pack-objects died|invalid object|object .* is corrupt|possible repository corruption",
    re.IGNORECASE,
)
_NO_REPO = re.compile(
    r"does not appear to be a git repository|Repository not found|returned error: 40[0-9]"
    r"|could not read Username|Authentication failed|No such file or directory",
    re.IGNORECASE,
)


def _fetch_failure(exc: WorkspaceError, shown: str, commit: str) -> WorkspaceError:
    """A failed fetch's error, classified by what git printed (one `_git` classified itself,
    a fetch stopped at its timeout, is kept)."""
    if type(exc) is not WorkspaceError:
        return type(exc)(f"{shown}: {exc}")
    detail = str(exc).removeprefix("git fetch failed: ")
    if _INCOMPLETE.search(detail):
        return MirrorIncomplete(f"{shown} lacks objects under commit {commit}: {detail}")
    if _NO_COMMIT.search(detail):
        return CommitMissing(f"commit {commit} is not in {shown}")
    if _NO_REPO.search(detail):
        return RepoNotFound(f"no repository at {shown}: {detail}")
    if _UNREACHABLE.search(detail):
        return HostUnreachable(f"cannot reach {shown}: {detail}")
    return WorkspaceError(f"cannot fetch {shown}: {detail}")


# the host's proxy and trust settings reach git; nothing else of its environment does
_GIT_PASSTHROUGH = (
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "GIT_SSL_CAINFO", "SSL_CERT_FILE", "SSL_CERT_DIR",
)  # fmt: skip
# a transfer slower than this many bytes a second for this long is a host that stopped answering
_STALL = ("-c", "http.lowSpeedLimit=1", "-c", "http.lowSpeedTime=120")
# The services share mirror folders and the cache's mirrors across users (the API and LLM
# workers run as uid 10001, the CI worker as root): git and libgit2 refuse a repository another
# user owns, so one folder could not serve import, validation and play. The repos are the
# operator's mirrors and Arena's own fetches, read with no user or system git config.
# (git reads `safe.directory` only from protected config: git runs with a global config of
# that one line, never the user's)
_GLOBAL_CONFIG = "[safe]\n\tdirectory = *\n"
pygit2.option(pygit2.enums.Option.SET_OWNER_VALIDATION, False)


def _global_config() -> str:
    """The path of git's global config for Arena's git runs, written once per machine."""
    path = Path(tempfile.gettempdir()) / f"arena-gitconfig-{os.geteuid()}"
    if not path.is_file() or path.read_text() != _GLOBAL_CONFIG:
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False) as out:
            out.write(_GLOBAL_CONFIG)
        os.replace(out.name, path)
    return str(path)


def _git(cwd: Path, *args: str, timeout: float | None = None) -> None:
    """Run git with no user or system config (its global config is Arena's `safe.directory`
    line), so nothing on the host changes its behaviour;
    past `timeout` seconds its whole process group is stopped and the host called
    unreachable."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": _global_config(),
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
        **{name: os.environ[name] for name in _GIT_PASSTHROUGH if os.environ.get(name)},
    }
    try:
        child = subprocess.Popen(
            ["git", *_STALL, *args],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # git's transport helpers are stopped with it
        )
    except OSError as exc:
        raise WorkspaceError(f"cannot run git ({exc}); install git") from exc
    try:
        _, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        raise HostUnreachable(f"git {args[0]} gave no answer within {timeout:.0f} s") from None
    if child.returncode != 0:
        raise WorkspaceError(f"git {args[0]} failed: {err.strip()[-2000:]}")


_FILE_MODES = (pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE)


def _complete_commit(repo: pygit2.Repository, commit: str) -> pygit2.Commit | None:
    """`commit`, if the repo holds it and every tree and file under it (a mirror fetched
    whole may name a commit whose objects it lacks); else None."""
    found = _find_commit(repo, commit)
    if found is None:
        return None
    trees = [found.tree_id]
    seen: set[pygit2.Oid] = set()
    try:
        while trees:
            tree = repo[trees.pop()]
            assert isinstance(tree, pygit2.Tree)
            for entry in tree:
                if entry.id in seen or entry.filemode == pygit2.enums.FileMode.COMMIT:
                    continue  # a submodule's commit lives in another repo
                seen.add(entry.id)
                if entry.filemode == pygit2.enums.FileMode.TREE:
                    trees.append(entry.id)
                elif entry.id not in repo:
                    return None
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return found


def _find_commit(repo: pygit2.Repository, commit: str) -> pygit2.Commit | None:
    try:
        obj = repo.revparse_single(commit)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    peeled = obj.peel(pygit2.Commit)
    return peeled if isinstance(peeled, pygit2.Commit) else None


def stamp_times(root: Path, when: int) -> None:
    """Give every checked-out file its commit's time, outside .git.

    Build caches made at the base commit (cargo's target dir, make's objects) judge freshness
    by mtime: with checkout time every file would look edited and everything would rebuild;
    with the commit's time only the files a diff rewrites look newer than the cache.
    """
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath == str(root):
            dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in dirnames + filenames:
            os.utime(os.path.join(dirpath, name), (when, when), follow_symlinks=False)


def remove_tree(root: Path) -> None:
    """Delete a directory tree of any depth and any permissions, without following symlinks.

    Iterative and relative to one open directory at a time, so neither a 1,500-level tree
    (recursion, PATH_MAX) nor a directory left unreadable stops it.
    """
    try:
        info = os.lstat(root)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(root)
        return
    os.chmod(root, stat.S_IRWXU)
    names: list[str] = []  # the path from root down to the directory `fd` is open on
    fd = os.open(root, _DIRECTORY_FLAGS)
    try:
        while True:
            child = _empty_but_subdirectory(fd)
            if child is not None:
                os.chmod(child, stat.S_IRWXU, dir_fd=fd)
                below = os.open(child, _DIRECTORY_FLAGS, dir_fd=fd)
                os.close(fd)
                fd, names = below, [*names, child]
                continue
            if not names:
                break
            above = os.open("..", _DIRECTORY_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = above
            os.rmdir(names.pop(), dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(root)


_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _empty_but_subdirectory(fd: int) -> str | None:
    """Unlink every non-directory in the directory open on `fd`; return one subdirectory."""
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                return entry.name
            os.unlink(entry.name, dir_fd=fd)
    return None


def sweep_run_dirs(runs_dir: Path, *, max_age_s: float | None = None) -> list[Path]:
    """Remove run directories whose owning process is gone (or older than `max_age_s`)."""
    removed: list[Path] = []
    if not runs_dir.is_dir():
        return removed
    for path in sorted(runs_dir.glob("run-*")):
        owner = path.name.split("-")[1]
        orphan = not (owner.isdigit() and pid_alive(int(owner)))
        try:
            stale = max_age_s is not None and time.time() - path.lstat().st_mtime > max_age_s
        except FileNotFoundError:
            continue
        if orphan or stale:
            remove_tree(path)
            removed.append(path)
    return removed
