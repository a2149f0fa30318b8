"""Repository sources: a cached bare mirror per source, a fresh checkout per run."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pygit2

from ci_runner.errors import ReportError, WorkspaceError
from ci_runner.locks import file_lock


def source_key(source: str) -> str:
    """One mirror per source: local paths are made absolute so spellings agree."""
    path = Path(source).expanduser()
    if path.exists():
        return str(path.resolve())
    return source


class Workspaces:
    """Keeps bare mirrors under `mirrors_dir` and makes run directories under `runs_dir`."""

    def __init__(self, mirrors_dir: Path, runs_dir: Path) -> None:
        self._mirrors_dir = mirrors_dir
        self._runs_dir = runs_dir

    def mirror_path(self, source: str) -> Path:
        key = source_key(source)
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        return self._mirrors_dir / f"{digest}.git"

    def mirror(self, source: str, commit: str) -> pygit2.Repository:
        """The bare mirror of `source`, fetched again only if it lacks `commit`."""
        path = self.mirror_path(source)
        with file_lock(path.with_suffix(".lock")):
            if path.exists():
                repo = pygit2.Repository(str(path))
            else:
                repo = self._create_mirror(source, path)
            if _find_commit(repo, commit) is None:
                self._fetch(repo, source)
            if _find_commit(repo, commit) is None:
                raise WorkspaceError(f"commit {commit} is not in {source}")
            return repo

    def _create_mirror(self, source: str, path: Path) -> pygit2.Repository:
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=path.parent, prefix=".new-"))
        try:
            repo = pygit2.init_repository(str(staging), bare=True)
            repo.remotes.create("origin", source_key(source), "+refs/*:refs/*")
            self._fetch(repo, source)
            staging.rename(path)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return pygit2.Repository(str(path))

    def _fetch(self, repo: pygit2.Repository, source: str) -> None:
        try:
            repo.remotes["origin"].fetch(["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"])
        except (pygit2.GitError, KeyError, ValueError) as exc:
            raise WorkspaceError(f"cannot fetch {source}: {exc}") from exc

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
        """A fresh directory holding `commit` of `source`, with a .git of its own."""
        mirror = self.mirror(source, commit)
        found = _find_commit(mirror, commit)
        assert found is not None  # mirror() guarantees it
        self._runs_dir.mkdir(parents=True, exist_ok=True)
        run_dir = Path(tempfile.mkdtemp(dir=self._runs_dir, prefix="run-"))
        try:
            repo = pygit2.clone_repository(str(mirror.path), str(run_dir / ".git"), bare=True)
            repo.config["core.bare"] = False
            repo = pygit2.Repository(str(run_dir))
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


_FILE_MODES = (pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE)


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


def hand_to_uid(root: Path, uid: int) -> None:
    """Let the sandbox user write its checkout (no-op unless we are root)."""
    if os.geteuid() != 0:
        return
    os.lchown(root, uid, uid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, uid)


def remove_tree(root: Path) -> None:
    """Delete a run directory even where sandboxed code left it unreadable."""

    def make_writable(func: object, path: str, _: object) -> None:
        parent = os.path.dirname(path)
        os.chmod(parent, stat.S_IRWXU)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, stat.S_IRWXU)
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)

    if root.exists():
        shutil.rmtree(root, onerror=make_writable)


def read_inside(root: Path, relative: str, max_bytes: int) -> bytes:
    """Read a regular file under `root` without following any symlink sandboxed code planted."""
    parts = [p for p in Path(relative).parts if p not in ("", ".")]
    if not parts or ".." in parts:
        raise ReportError(f"report path {relative!r} is not inside the workspace")
    nofollow = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            try:
                next_fd = os.open(part, nofollow | os.O_DIRECTORY, dir_fd=fd)
            except FileNotFoundError as exc:
                raise ReportError(f"no test report at {relative}") from exc
            except OSError as exc:
                raise ReportError(
                    f"report path {relative}: {part} is not a plain directory"
                ) from exc
            os.close(fd)
            fd = next_fd
        try:
            file_fd = os.open(parts[-1], nofollow | os.O_NONBLOCK, dir_fd=fd)
        except FileNotFoundError as exc:
            raise ReportError(f"no test report at {relative}") from exc
        except OSError as exc:
            raise ReportError(f"report {relative} is not a regular file ({exc.strerror})") from exc
        with os.fdopen(file_fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ReportError(f"report {relative} is not a regular file")
            if info.st_size > max_bytes:
                raise ReportError(f"report {relative} is {info.st_size} bytes, over {max_bytes}")
            return handle.read(max_bytes + 1)[:max_bytes]
    finally:
        os.close(fd)
