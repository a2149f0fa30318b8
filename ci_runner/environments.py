"""Environment images: a task's dependencies installed once, with network, so CI runs stay offline.

From the language's toolchain image, a build container checks out the repo at the base commit
and runs the pipeline's `setup` steps as root with the build network (and, for the build only,
the CA bundle and proxy variables). Per language it then keeps what offline runs need (a
virtualenv and a wheelhouse, a module cache, fetched crates) and warms the build caches by
running the CI steps once at the base commit (Python's with network, so that what tox or
nox fetch is kept too). The container is committed as an image tagged by a hash of everything
that decides it. The caches are the only part of it the sandbox user may write: a CI run
gets a writable root layer, so it changes them copy-on-write, file by file, instead of copying
a whole cargo target dir into a volume before its first step (as a VOLUME would).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import posixpath
import shlex
import statistics
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pydantic import BaseModel, ConfigDict, field_validator

from ci_runner.env_layout import (
    CACHE_DIR,
    ENV_ROOT,
    GOMODCACHE,
    SYSTEM_PATH,
    WARM_UP_VARIABLE,
    WHEELHOUSE,
)
from ci_runner.errors import EnvironmentBuildError, ImageError, ServiceError
from ci_runner.github_files import keep_for_runs
from ci_runner.image_layout import ENV_CACHE_LAYERS_LABEL, ENV_IMAGE_LABEL, SANDBOX_HOME, WORKSPACE
from ci_runner.image_names import env_image_name
from ci_runner.images import ImageBuilder
from ci_runner.job_folder import JOB_FOLDER, step_command
from ci_runner.languages import find_profile, profile_of
from ci_runner.locks import file_lock
from ci_runner.package_dates import (
    BYPASSES,
    INDEX_SCRIPT,
    index_command,
    normalize_cutoff,
    resolution_env,
    stop_index_command,
)
from ci_runner.pipeline import Pipeline, Step
from ci_runner.runner_setup import (
    SHIM_DIR,
    install_libraries,
    install_missing,
    mentioned_tools,
    shim_files,
)
from ci_runner.runner_setup import build_env as runner_build_env
from ci_runner.sandbox.base import Sandbox, SandboxDied, SandboxFileError
from ci_runner.sandbox.image_store import StoredImage
from ci_runner.sandbox.provider import BesideServices
from ci_runner.stops import StopCause
from ci_runner.toolchains import ToolchainChoice, request_files, toolchain_choice
from ci_runner.types import Limits
from ci_runner.warmup import setup_failure
from ci_runner.workspace import Workspaces, remove_tree, source_key

Progress = Callable[[str], None]

BUILD_MOUNT = "/mnt"  # an empty directory of every Debian image; a tmpfs during builds
BUILD_CA = f"{BUILD_MOUNT}/ca.crt"
INDEX_PORT_FILE = f"{BUILD_MOUNT}/index.port"
LOG_TAIL_LINES = 40
BUILD_LABEL = "arena.env.build"
_COLLECT_TIMEOUT_S = 1800
_SCRIPT_BYTES = 256 * 1024  # of a repository script a step runs, read for the tools it calls
_RECIPE_VERSION = "8"  # bump when what a build does changes, so every image rebuilds

_CA_VARIABLES = (
    "SSL_CERT_FILE",
    "PIP_CERT",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "GIT_SSL_CAINFO",
    "CARGO_HTTP_CAINFO",
    "NODE_EXTRA_CA_CERTS",
)

# CI runs from an environment image mount at CACHE_DIR an overlay over the image's own layer,
# bounded by a tmpfs (ci_runner.providers.docker.cache_layer), and keep a read-only root; the image
# leaves the sandbox user nothing else to write all the same (runs mount tmpfs on /tmp, the
# workspace and HOME). CACHE_DIR must be in the committed layer itself: `_clean` chowns it
_ONLY_CACHE_WRITABLE = """find / -xdev -perm -0002 -not -type l -not -path /tmp \\
    -exec chmod o-w {} + 2>/dev/null || true"""


def _owned_and_readable(uid: int) -> str:
    """The caches the sandbox user's, everything of the environment readable: changing
    only the files that are not yet, since a file changed at all (even to the owner it
    has) is copied whole into the image's own layer, and one built on a repository layer
    would hold every file of the layer's caches again."""
    return (
        f"find {CACHE_DIR} \\( ! -user {uid} -o ! -group {uid} \\) "
        f"-exec chown -h {uid}:{uid} {{}} +\n"
        f"find {ENV_ROOT} ! -type l \\( ! -perm -0444 -o \\( -type d ! -perm -0111 \\) "
        f"-o \\( -perm /0111 ! -perm -0111 \\) \\) -exec chmod a+rX {{}} +"
    )


def runtime_env(language: str) -> dict[str, str]:
    """The variables every CI run of a language's environment image starts with."""
    profile = find_profile(language)
    if profile is None:
        raise ImageError(f"unknown language {language!r} for an environment image")
    return dict(profile.runtime_env)


_NPM_NOTHING_BEFORE = "with a date before"  # npm's ETARGET under `npm_config_before`


def fetches_dependencies(language: str, read_file: Callable[[str], str | None]) -> bool:
    """A Go module that requires modules, or a crate (or workspace) with dependencies:
    the profile's dependency manifest, read by `read_file`, declares some."""
    profile = find_profile(language)
    if profile is None or profile.dependency_manifest is None:
        return False
    text = read_file(profile.dependency_manifest)
    return text is not None and profile.declares_dependencies(text)


class EnvironmentSpec(BaseModel):
    """What decides an environment image, apart from the toolchain image it starts from."""

    model_config = ConfigDict(frozen=True)

    repo: str
    commit: str
    language: str
    pipeline: Pipeline
    # the version the job itself asks for (its matrix python-version, go-version, ...);
    # when None, the repo's own files decide (go.mod, rust-toolchain, .python-version, ...)
    toolchain_request: str | None = None
    # the task's date (its `created_at`): packages are resolved as they were then (PyPI
    # through the date-cut index, uv, npm); None resolves today's, as does
    # ARENA_PACKAGE_DATE_CUT=false. Kept as an RFC 3339 UTC time (a bare date: its end)
    as_of: str | None = None
    # Python requirements the task's gold patch adds (a new test dependency): fetched into
    # the wheelhouse, so that an offline run of the fixed tree finds them
    extra_requirements: tuple[str, ...] = ()

    @field_validator("as_of")
    @classmethod
    def _rfc3339(cls, value: str | None) -> str | None:
        return None if value is None or not value.strip() else normalize_cutoff(value)

    def key(self, toolchain_id: str) -> str:
        decisive = {
            "recipe": _RECIPE_VERSION,
            "repo": source_key(self.repo),
            "commit": self.commit,
            "language": self.language,
            "setup": [s.model_dump(mode="json") for s in self.pipeline.setup],
            "steps": [s.model_dump(mode="json") for s in self.pipeline.steps],  # the warm-up
            "env": self.pipeline.env,
            "services": {k: v.model_dump(mode="json") for k, v in self.pipeline.services.items()},
            "toolchain": toolchain_id,
            "as_of": self.as_of,
            "extra_requirements": list(self.extra_requirements),
        }
        return _digest(decisive)

    def family(self, toolchain_id: str) -> str:
        """What tasks share a repository layer: one repository, language and toolchain
        image (their commits, dates and steps may differ: each task's build runs its own)."""
        decisive = {
            "recipe": _RECIPE_VERSION,
            "repo": source_key(self.repo),
            "language": self.language,
            "toolchain": toolchain_id,
        }
        return _digest(decisive)

    def budget_s(self) -> float:
        """The longest a build can take: every setup and warm-up step at its timeout."""
        steps = self.pipeline.setup + self.pipeline.steps
        return sum(step.timeout_s for step in steps) + 2 * _COLLECT_TIMEOUT_S

    def tag(self, toolchain_id: str) -> str:
        return env_image_name(self.language, self.key(toolchain_id))


class EnvironmentRecord(BaseModel):
    """The outcome of the last build of one key: its image, or why it failed."""

    model_config = ConfigDict(frozen=True)

    key: str
    tag: str
    error: str | None = None
    # the cutoff packages were resolved at (RFC 3339, UTC), None when resolved as of the build
    packages_as_of: str | None = None
    # the repository layer it was built on (an earlier task's image), None when built whole
    built_on: str | None = None


class RepositoryLayer(BaseModel):
    """The image later tasks of one family (`EnvironmentSpec.family`) are built on: the
    first one built whole. Always that one, so no image is more than one layer over it."""

    model_config = ConfigDict(frozen=True)

    family: str
    tag: str


@dataclass(frozen=True)
class EnvironmentState:
    """What `arena tasks list` shows: built (the tag), failed (why) or not built yet."""

    tag: str | None  # None while even the toolchain image is not built
    built: bool
    error: str | None


def _digest(decisive: Mapping[str, object]) -> str:
    """A short, stable name for what decides an image (its key, its family)."""
    return hashlib.sha256(json.dumps(decisive, sort_keys=True).encode()).hexdigest()[:16]


def _write_whole(path: Path, model: BaseModel) -> None:
    """Write `model` so that a reader beside sees the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(model.model_dump_json())
    tmp.replace(path)


def _quiet(_: str) -> None:
    return None


def _tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


class EnvironmentBuilder:
    """Finds, builds and remembers environment images in the provider's image store."""

    def __init__(self, images: ImageBuilder) -> None:
        self._images = images
        self._settings = images.settings
        self._provider = images.provider
        self._workspaces = Workspaces.from_settings(self._settings)
        self._lacking: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}
        self._lacking_lock = threading.Lock()

    @property
    def images(self) -> ImageBuilder:
        return self._images

    def needs_build(self, spec: EnvironmentSpec) -> bool:
        """Whether runs of `spec` need an environment image: setup steps to run, or modules
        and crates to fetch (a job's `go test` fetches them itself, which an offline run
        cannot: the build's `go mod download`/`cargo fetch` does it once)."""
        if spec.pipeline.setup:
            return True
        read = partial(self._workspaces.read_text, spec.repo, spec.commit)
        return fetches_dependencies(spec.language, read) or bool(self.lacking_tools(spec))

    def lacking_tools(self, spec: EnvironmentSpec) -> tuple[str, ...]:
        """The runner tools `spec`'s CI steps call that the language's image lacks (node,
        jq...): a job with no setup step still runs them on GitHub's runner, so its runs need
        an environment image that installs them (`_tools_for`). The image is asked, once per
        process for each image and set of tools."""
        pipeline = spec.pipeline
        named = (mentioned_tools(s.run, {**pipeline.env, **s.env}) for s in pipeline.steps)
        wanted = tuple(sorted({tool for tools in named for tool in tools}))
        if not wanted:
            return ()
        image = self._images.ensure(spec.language)
        key = (image, wanted)
        with self._lacking_lock:
            if key not in self._lacking:
                self._lacking[key] = self._missing_in(image, spec.language, wanted)
            return self._lacking[key]

    def _missing_in(self, image: str, language: str, tools: tuple[str, ...]) -> tuple[str, ...]:
        checks = " ".join(
            f"command -v {shlex.quote(t)} >/dev/null || echo {shlex.quote(t)};" for t in tools
        )
        box = self._provider.start(image, Limits(run_timeout_s=60))
        try:
            done = box.exec(
                checks,
                env={"PATH": runtime_env(language).get("PATH", SYSTEM_PATH)},
                workdir=WORKSPACE,
                timeout_s=30,
                max_output_bytes=64 * 1024,
            )
        finally:
            box.close()
        if done.exit_code != 0:
            raise EnvironmentBuildError(
                f"cannot tell which runner tools {image} has:\n{_tail(done.output)}"
            )
        return tuple(line for line in done.output.split() if line in tools)

    def image_for(self, spec: EnvironmentSpec, progress: Progress = _quiet) -> str:
        """The image a CI run of `spec` uses: its environment image when it needs one."""
        if not self.needs_build(spec):
            return self._images.ensure(spec.language, progress)
        return self.ensure(spec, progress)

    def toolchain_for(self, spec: EnvironmentSpec) -> ToolchainChoice:
        """The suite whose toolchain the repo asks for (or the closest), with notes on any
        deviation or relaxed constraint, read from the repo's files at the base commit."""
        files = request_files(partial(self._workspaces.read_text, spec.repo, spec.commit))
        return toolchain_choice(
            spec.language, spec.toolchain_request, files, self._settings.toolchain_registry
        )

    def effective(self, spec: EnvironmentSpec) -> EnvironmentSpec:
        """`spec` as this builder builds it: without its date when the date cut is off."""
        if self._settings.package_date_cut or spec.as_of is None:
            return spec
        return spec.model_copy(update={"as_of": None})

    def state(self, spec: EnvironmentSpec) -> EnvironmentState | None:
        """The environment's state, building nothing; None when it needs no build."""
        if not self.needs_build(spec):
            return None
        spec = self.effective(spec)
        toolchain = self._images.find_toolchain(spec.language, self.toolchain_for(spec))
        toolchain_id = self._images.find_id(toolchain) if toolchain else None
        if toolchain_id is None:
            return EnvironmentState(tag=None, built=False, error=None)
        tag = spec.tag(toolchain_id)
        if self._images.find_id(tag):
            return EnvironmentState(tag=tag, built=True, error=None)
        record = self._record(spec.key(toolchain_id))
        return EnvironmentState(tag=tag, built=False, error=record.error if record else None)

    def record(self, spec: EnvironmentSpec) -> EnvironmentRecord | None:
        """The record of the last build of `spec` (its tag, error and the date its packages
        were resolved at), building nothing; None before its first build."""
        spec = self.effective(spec)
        toolchain = self._images.find_toolchain(spec.language, self.toolchain_for(spec))
        toolchain_id = self._images.find_id(toolchain) if toolchain else None
        return None if toolchain_id is None else self._record(spec.key(toolchain_id))

    def ensure(
        self, spec: EnvironmentSpec, progress: Progress = _quiet, retry: bool = False
    ) -> str:
        """The tag of the environment image, built now if missing.

        A build that failed before fails again with its recorded error, unless `retry`:
        a broken setup step is a property of the task, not worth a rebuild on every run.
        """
        spec = self.effective(spec)
        choice = self.toolchain_for(spec)
        toolchain = self._images.ensure_toolchain(spec.language, choice, progress)
        toolchain_id = self._images.image_id(toolchain)
        key = spec.key(toolchain_id)
        tag = spec.tag(toolchain_id)
        if self._images.find_id(tag):
            return tag
        with file_lock(self._settings.environments_dir / f"{key}.lock"):
            if self._images.find_id(tag):
                return tag
            record = self._record(key)
            if record is not None and record.error is not None and not retry:
                raise EnvironmentBuildError(record.error)
            layered = (
                self._settings.env_layers and profile_of(spec.language).shares_repository_layer
            )
            family = spec.family(toolchain_id)
            base = self._repository_layer(family) if layered else None
            outcome = EnvironmentRecord(key=key, tag=tag, packages_as_of=spec.as_of, built_on=base)
            if base is not None:
                progress(f"building on {base}, an earlier task's environment of {spec.repo}")
            try:
                self._build(spec, toolchain, tag, progress, base)
            except EnvironmentBuildError as exc:
                self._write_record(outcome.model_copy(update={"error": str(exc)}))
                raise
            self._write_record(outcome)
            if layered and base is None:
                self._write_layer(RepositoryLayer(family=family, tag=tag))
        return tag

    def _repository_layer(self, family: str) -> str | None:
        """The image of `family`'s repository layer, if it is still there."""
        path = self._layer_path(family)
        with contextlib.suppress(ValueError, OSError):
            tag = RepositoryLayer.model_validate_json(path.read_text()).tag
            if self._images.find_id(tag):
                return tag
        return None

    def missing_images(self, spec: EnvironmentSpec) -> tuple[MissingImage, ...]:
        """The images a build of `spec` would have to make first (its suite's base, its
        language image, a Go release's layer, a toolchain's extra packages), asking the
        engine only what is there."""
        spec = self.effective(spec)
        choice = self.toolchain_for(spec)
        if self._images.find_toolchain(spec.language, choice) is not None:
            return ()
        suite = choice.suite
        missing: list[MissingImage] = []
        if choice.image is not None:
            return (MissingImage("official", choice.image),)
        if self._images.find_id(self._images.base_name(suite)) is None:
            missing.append(MissingImage("base", self._images.base_name(suite)))
        if self._images.find(spec.language, suite) is None:
            missing.append(MissingImage("language", f"{spec.language} image ({suite})"))
        if choice.packages or choice.shims or choice.env:
            extra = " ".join(choice.packages) or "shims"
            missing.append(MissingImage("extra", f"{spec.language} {suite} + {extra}"))
        if choice.go_release:
            missing.append(MissingImage("go", f"Go {choice.go_release}"))
        return tuple(missing)

    def disk(self) -> EngineDisk:
        """The environment images of the provider's store with their sizes (as it counts
        them: Docker's as `docker system df -v`), and the free space of its data root when
        that is on this machine."""
        usage = self._provider.images.usage()
        return EngineDisk(environment_images(usage.images), usage.free_bytes, usage.data_root)

    def recorded_tags(self) -> set[str]:
        """The tags this cache's build records name (built or failed here)."""
        tags: set[str] = set()
        directory = self._settings.environments_dir
        for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
            with contextlib.suppress(ValueError, OSError):
                tags.add(EnvironmentRecord.model_validate_json(path.read_text()).tag)
        return tags

    def remove_images(self, tags: Iterable[str]) -> list[str]:
        """Remove exactly these environment images (never another one: the engine is
        shared, and what appears while gc runs is someone's new build); an image a container
        still uses is kept. Returns the tags removed."""
        removed: list[str] = []
        for tag in tags:
            if not tag.startswith("arena/env-"):
                raise ImageError(f"{tag} is not an environment image")
            if self._provider.images.remove(tag):
                removed.append(tag)  # else in use by a container: next time
        return removed

    def forget(self, keep_tags: set[str]) -> list[str]:
        """Delete the build records of this cache whose tag is not in `keep_tags` and whose
        image is gone (failed builds, removed images). Returns the tags they named."""
        forgotten: list[str] = []
        directory = self._settings.environments_dir
        for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
            with contextlib.suppress(ValueError, OSError):
                tag = EnvironmentRecord.model_validate_json(path.read_text()).tag
                if tag not in keep_tags and self._images.find_id(tag) is None:
                    path.unlink()
                    forgotten.append(tag)
        return forgotten

    def _record_path(self, key: str) -> Path:
        return self._settings.environments_dir / f"{key}.json"

    def _layer_path(self, family: str) -> Path:
        return self._settings.environments_dir / "layers" / f"{family}.json"

    def _write_layer(self, layer: RepositoryLayer) -> None:
        _write_whole(self._layer_path(layer.family), layer)

    def _record(self, key: str) -> EnvironmentRecord | None:
        path = self._record_path(key)
        if not path.is_file():
            return None
        return EnvironmentRecord.model_validate_json(path.read_text())

    def _write_record(self, record: EnvironmentRecord) -> None:
        _write_whole(self._record_path(record.key), record)

    def _build(
        self,
        spec: EnvironmentSpec,
        toolchain: str,
        tag: str,
        progress: Progress,
        base: str | None = None,
    ) -> None:
        """Build `tag` on the toolchain's image, or on `base`, a repository layer, whose
        offline switches the build's processes do not see."""
        ca = self._settings.build_ca_bundle
        if ca is not None and not ca.is_file():
            raise ImageError(f"ARENA_BUILD_CA_BUNDLE={ca} is not a file")
        progress(f"checking out {spec.repo} at {spec.commit[:12]}")
        run_dir, _ = self._workspaces.checkout(spec.repo, spec.commit)
        try:
            unset = profile_of(spec.language).offline_only if base is not None else ()
            start = base or toolchain
            with contextlib.closing(self._start(start, tag, spec.budget_s(), unset)) as box:
                try:
                    box.write_tree(run_dir, WORKSPACE)  # tar keeps the commit's mtimes
                except SandboxFileError as exc:
                    raise EnvironmentBuildError(
                        f"environment of {spec.repo} at {spec.commit[:12]}: {exc} of "
                        f"{self._settings.limits.disk_mb} MiB"
                    ) from exc
                remove_tree(run_dir)  # the build container has its own copy now
                for path, (data, mode) in shim_files().items():
                    box.write_file(path, data, mode=mode)
                box.write_file(f"{BUILD_MOUNT}/{INDEX_SCRIPT.name}", INDEX_SCRIPT.read_bytes())
                if ca is not None:
                    box.write_file(BUILD_CA, ca.read_bytes())
                with self._services(box, spec, progress):
                    self._run_in(box, spec, tag, progress)
                self._clean(box, spec, tag)
                progress(f"committing {tag}")
                self._commit(box, spec, tag, layered=base is not None)
        finally:
            remove_tree(run_dir)

    def _services(self, box: Sandbox, spec: EnvironmentSpec, progress: Progress) -> BesideServices:
        """The job's services beside the build container, for its setup and warm-up steps."""
        try:
            return self._provider.start_services(spec.pipeline.services, box, progress)
        except ServiceError as exc:
            raise EnvironmentBuildError(
                f"environment of {spec.repo} at {spec.commit[:12]}: {exc}"
            ) from exc

    def _start(self, image: str, tag: str, budget_s: float, unset: Sequence[str]) -> Sandbox:
        """A root build box with the build network and no host path mounted.

        The workspace and the build files (CA bundle, shims, the date-cut index) sit in
        scratch directories, which a commit leaves out: none of them reaches the image.
        """
        return self._provider.start_build(
            image,
            self._settings.limits,
            network=self._settings.build_network,
            memory_mb=self._settings.build_memory_mb,
            disk_mb=self._settings.build_disk_mb,
            lifetime_s=budget_s + 600,  # an orphan (its owner killed with SIGKILL) stops by itself
            scratch={WORKSPACE: self._settings.limits.disk_mb, BUILD_MOUNT: 64},
            labels={BUILD_LABEL: tag},  # which image it builds
            unset_env=unset,
        )

    def _build_env(self, language: str) -> dict[str, str]:
        """Runtime variables minus the offline switches, plus the build's trust and proxies,
        and the runner-like shims first on PATH."""
        offline_only = profile_of(language).offline_only
        env = {k: v for k, v in runtime_env(language).items() if k not in offline_only}
        env["PATH"] = f"{SHIM_DIR}:{env['PATH']}"
        env |= {"HOME": "/root", "LANG": "C.UTF-8", "CI": "true"}
        env |= runner_build_env()
        env |= self._settings.build_env
        if self._settings.build_ca_bundle is not None:
            env |= {name: BUILD_CA for name in _CA_VARIABLES}
        return env

    def _exec(
        self,
        box: Sandbox,
        what: str,
        command: str,
        env: dict[str, str],
        workdir: str = ".",
        timeout_s: float = _COLLECT_TIMEOUT_S,
    ) -> tuple[bool, str]:
        ok, log, _ = self._exec_code(box, what, command, env, workdir, timeout_s)
        return ok, log

    def _exec_code(
        self,
        box: Sandbox,
        what: str,
        command: str,
        env: dict[str, str],
        workdir: str = ".",
        timeout_s: float = _COLLECT_TIMEOUT_S,
    ) -> tuple[bool, str, int | None]:
        try:
            done = box.exec(
                command,
                env=env,
                workdir=posixpath.normpath(f"{WORKSPACE}/{workdir}"),
                timeout_s=timeout_s,
                max_output_bytes=self._settings.limits.max_output_bytes,
            )
        except SandboxDied as exc:  # brought down by its own processes: the task's setup
            raise EnvironmentBuildError(f"{what}: {exc}") from exc
        if done.timed_out:
            raise EnvironmentBuildError(
                f"{what} timed out after {timeout_s:.0f}s:\n{_tail(done.output)}"
            )
        output = done.output
        if done.stopped_by is StopCause.MEMORY:  # say why it ended: its own log cannot
            output += (
                f"\n(killed: the build's memory limit of {self._settings.build_memory_mb} MiB "
                "and its scratch folders, ARENA_BUILD_MEMORY_MB)"
            )
        if done.stopped_by is StopCause.DISK:
            output += (
                f"\n(killed: the build's disk limit of {self._settings.build_disk_mb} MiB "
                "outside its scratch folders, ARENA_BUILD_DISK_MB)"
            )
        return done.exit_code == 0, output, done.exit_code

    def _date_cut(
        self, box: Sandbox, spec: EnvironmentSpec, env: dict[str, str]
    ) -> dict[str, str] | None:
        """The variables that resolve packages as of the task's date, the date-cut PyPI
        index started first if the container has a python3 to run it (a setup step may
        install one: asked again before each step until it runs); None without a date."""
        if spec.as_of is None:
            return None
        upstream = self._settings.build_env.get("PIP_INDEX_URL", self._settings.package_index_url)
        command = index_command(
            spec.as_of,
            upstream,
            f"{BUILD_MOUNT}/{INDEX_SCRIPT.name}",
            INDEX_PORT_FILE,
            self._settings.crates_index_url,
        )
        ok, log = self._exec(box, "starting the date-cut package index", command, env)
        if not ok:
            raise EnvironmentBuildError(
                f"environment of {spec.repo} at {spec.commit[:12]}: the date-cut package "
                f"index did not start:\n{_tail(log)}"
            )
        port = log.strip().splitlines()[-1] if log.strip() else ""
        return resolution_env(spec.as_of, int(port) if port.isdigit() else None)

    def _with_date(
        self,
        box: Sandbox,
        spec: EnvironmentSpec,
        env: dict[str, str],
        cut: dict[str, str] | None,
    ) -> tuple[dict[str, str], dict[str, str] | None]:
        """`env` resolving as of the task's date; the index started once python3 is there."""
        if spec.as_of is not None and (cut is None or "PIP_INDEX_URL" not in cut):
            cut = self._date_cut(box, spec, env)
        if cut is None:
            return env, cut
        dated = {k: v for k, v in env.items() if k not in BYPASSES}
        return dated | cut, cut

    def _tools_for(
        self,
        box: Sandbox,
        step: Step,
        job_env: dict[str, str],
        env: dict[str, str],
        progress: Progress,
    ) -> None:
        """Install the runner tools the step calls and the image lacks (curl, make, jq...),
        itself or through the repository's scripts it runs (`source ci/install.sh` calling
        `pip`, which GitHub's runner has), or names as its compiler (`CXX=clang++`, in its
        text or in the job's or step's env)."""
        from ci_runner.workflows.commands import called_scripts

        def read(path: str) -> str | None:
            try:
                data = box.read_file(posixpath.join(WORKSPACE, path), _SCRIPT_BYTES)
            except SandboxFileError:
                return None
            return data.decode("utf-8", "replace")

        scripts = called_scripts(step.run, step.workdir, read)
        tools = mentioned_tools("\n".join([step.run, *scripts]), {**job_env, **step.env})
        if not tools:
            return
        ok, log = self._exec(box, "installing runner tools", install_missing(tools), env)
        if "arena: installing" in log:
            progress(log.split("arena: installing", 1)[1].splitlines()[0].strip())
        if not ok:  # the step itself says what it missed, if it needed it
            progress(f"could not install the runner tools {step.name!r} calls:\n{_tail(log, 5)}")

    def _run_in(self, box: Sandbox, spec: EnvironmentSpec, tag: str, progress: Progress) -> None:
        language = spec.language
        profile = profile_of(language)
        env = self._build_env(language)
        pipeline = spec.pipeline
        prepare = f"mkdir -p {CACHE_DIR} {WHEELHOUSE} {GOMODCACHE}\n" + profile.prepare
        ok, log = self._exec(box, "preparing the environment", prepare, env)
        if not ok:
            raise EnvironmentBuildError(f"{tag}: preparing the environment failed:\n{_tail(log)}")
        if (libraries := install_libraries(language)) is not None:
            progress("installing the runner's build libraries")
            ok, log = self._exec(box, "installing the runner's libraries", libraries, env)
            if not ok:  # a step that needs them says so; most do not
                progress(f"could not install the runner's libraries:\n{_tail(log, 5)}")
        cut: dict[str, str] | None = None
        if spec.as_of is not None:
            progress(f"resolving packages as of {spec.as_of}")
            if profile.lock_as_of is not None:
                dated, cut = self._with_date(box, spec, env, cut)
                ok, log = self._exec(box, "locking as of the date", profile.lock_as_of, dated)
                said = [line for line in log.splitlines() if line.startswith("arena: ")]
                if said:
                    progress(said[-1].removeprefix("arena: "))
                elif not ok:  # the setup steps and the fetch resolve, and fail if they must
                    progress(f"could not lock as of {spec.as_of}:\n{_tail(log, 5)}")
        for step in pipeline.setup:
            progress(f"setup step {step.name!r}")
            self._tools_for(box, step, pipeline.env, env, progress)
            dated, cut = self._with_date(box, spec, env, cut)

            def run_setup(base: dict[str, str], step: Step = step) -> tuple[bool, str]:
                command, workdir = step_command(pipeline, step)
                return self._exec(
                    box,
                    f"setup step {step.name!r}",
                    command,
                    {**base, **pipeline.env, **step.env},
                    workdir,
                    step.timeout_s,
                )

            ok, log = run_setup(dated)
            if not ok and _NPM_NOTHING_BEFORE in log:
                # a registry (or mirror) whose publication times are later than the real
                # ones has no version before the task's date: npm resolves without the cut
                progress(
                    f"setup step {step.name!r}: npm found no version before the task's "
                    "date on this registry; resolved again without the date cut"
                )
                ok, log = run_setup({k: v for k, v in dated.items() if k != "npm_config_before"})
            if not ok and not step.continue_on_error:
                raise EnvironmentBuildError(
                    f"environment of {spec.repo} at {spec.commit[:12]}: setup step "
                    f"{step.name!r} failed:\n{_tail(log)}"
                )
            if not ok:  # tried only (continue-on-error, an install from elsewhere): said
                progress(f"setup step {step.name!r} failed, which it may:\n{_tail(log, 8)}")
        if pipeline.setup:
            # the job's folder is laid out anew by every run's steps, as on a fresh runner
            forget_job_folder = f"\nrm -rf {JOB_FOLDER}\n" if pipeline.checkout_path else ""
            ok, log = self._exec(
                box,
                "keeping the setup's environment files",
                keep_for_runs() + forget_job_folder,
                {**env, **pipeline.env},
            )
            if not ok:
                raise EnvironmentBuildError(
                    f"{tag}: keeping the setup steps' environment files failed:\n{_tail(log)}"
                )
        for step in pipeline.steps:  # CI runs are offline: what their steps call is kept
            self._tools_for(box, step, pipeline.env, env, progress)
        if profile.warm_online:
            dated, cut = self._with_date(box, spec, env, cut)
            self._warm(box, spec, dated, progress, online=True)
        if profile.collect is not None:
            progress("keeping what offline runs need")
            dated, cut = self._with_date(box, spec, env, cut)
            ok, log = self._exec(box, "collecting dependencies", profile.collect, dated)
            if not ok:
                raise EnvironmentBuildError(
                    f"environment of {spec.repo} at {spec.commit[:12]}: collecting the "
                    f"dependencies for offline runs failed:\n{_tail(log)}"
                )
            if profile.fetch_requirements is not None and spec.extra_requirements:
                wanted = " ".join(shlex.quote(r) for r in spec.extra_requirements)
                progress(f"fetching what the fix adds: {wanted}")
                fetch = profile.fetch_requirements(wanted)
                ok, log = self._exec(box, "fetching the fix's requirements", fetch, dated)
                if not ok:  # the fixed tree's runs then fail on the import, and say so
                    progress(f"could not fetch {wanted}:\n{_tail(log, 5)}")
        if profile.warm_build_cache:
            self._warm(box, spec, env, progress)

    def _clean(self, box: Sandbox, spec: EnvironmentSpec, tag: str) -> None:
        """Leave nothing of the build running, no package lists, only the caches writable."""
        uid = self._provider.sandbox_uid
        cleanup = (
            f"{stop_index_command(INDEX_PORT_FILE)}\n"
            "rm -rf /root/.cache /tmp/* /tmp/.[!.]* /var/lib/apt/lists/* "
            "/var/cache/apt/*.bin /var/cache/apt/archives/*.deb\n"
            f"{_owned_and_readable(uid)}\n{_ONLY_CACHE_WRITABLE}\n"
            # the caches are in this image's own layer even where its build wrote none
            # (one on a repository layer): a run's cache layer lies over that directory
            f"date > {CACHE_DIR}/.built && chown {uid}:{uid} {CACHE_DIR}/.built"
        )
        if self._settings.env_layers:
            cleanup += f"\n{profile_of(spec.language).seal_layer}"

        ok, log = self._exec(box, "cleaning up", cleanup, self._build_env(spec.language))
        if not ok:
            raise EnvironmentBuildError(f"{tag}: cleaning up failed:\n{_tail(log)}")

    def _warm(
        self,
        box: Sandbox,
        spec: EnvironmentSpec,
        build_env: dict[str, str],
        progress: Progress,
        online: bool = False,
    ) -> None:
        """Run the CI steps once at the base commit, for their caches.

        Their test verdict does not matter (tests may well fail before the fix); what stays
        is the build cache, so a CI run recompiles only what its diffs touch. Offline, the
        image's cargo builds the tests without running them (`WARM_UP_VARIABLE`). But a
        step that could not set itself up (an install, a resolution, a dependency's build
        failed) would fail so in every CI run: the build fails with its reason and log.
        Offline settings are on unless `online`: then the steps may fetch what their runners
        install (tox's deps), as of the task's date, and run.
        """
        language = spec.language
        pipeline_env = spec.pipeline.env
        if online:
            env = {**build_env, **pipeline_env}
        else:
            env = {**build_env, **runtime_env(language), **pipeline_env}
            env["HOME"] = "/root"
            env[WARM_UP_VARIABLE] = "1"
        for step in spec.pipeline.steps:
            progress(f"warming build caches: {step.name!r}")
            command, workdir = step_command(spec.pipeline, step)
            ok, log, code = self._exec_code(
                box,
                f"warm-up step {step.name!r}",
                command,
                {**env, **step.env},
                workdir,
                step.timeout_s,
            )
            if ok:
                continue
            reason = setup_failure(log, code)
            if reason is not None:
                raise EnvironmentBuildError(
                    f"environment of {spec.repo} at {spec.commit[:12]}: the warm-up run of "
                    f"step {step.name!r} could not set itself up ({reason}):\n{_tail(log)}"
                )
            if not step.continue_on_error:
                break

    def _commit(self, box: Sandbox, spec: EnvironmentSpec, tag: str, *, layered: bool) -> None:
        changes = [f"ENV {k}={json.dumps(v)}" for k, v in runtime_env(spec.language).items()]
        changes += [
            f"ENV HOME={SANDBOX_HOME}",
            f"WORKDIR {WORKSPACE}",
            'CMD ["sleep", "infinity"]',
        ]
        labels = {
            ENV_IMAGE_LABEL: spec.language,
            ENV_CACHE_LAYERS_LABEL: "2" if layered else "1",
        }
        if spec.as_of is not None:
            labels[f"{ENV_IMAGE_LABEL}.packages-as-of"] = spec.as_of
        self._provider.commit(box, tag, changes=changes, labels=labels)


# Disk: what environment images take, and an estimate of what a batch of builds will take.

MB = 1_000_000  # as Docker counts
# typical own size of an image a build makes first, measured on this project's machine
# (docker system df -v, Debian bookworm): a suite's base, a Go release's layer over the Go
# image, a toolchain's extra packages (clang); a language image over the base, and an
# environment image's own layer, are the language profile's `typical_image_mb` and
# `typical_env_layer_mb`
TYPICAL_IMAGE_MB = {"base": 200, "go-release": 230, "extra": 300}
TYPICAL_ENV_LAYER_MB = 500  # of a language without a profile


@dataclass(frozen=True)
class MissingImage:
    """An image a build would make first: `kind` is base, language, go, extra or official."""

    kind: str
    name: str


@dataclass(frozen=True)
class EnvironmentImage:
    """One tag of an environment image in the engine."""

    tag: str
    language: str
    size_bytes: int  # with its toolchain's layers
    own_bytes: int  # the layers no other image shares: what removing it frees
    containers: int  # containers using it (a CI run in progress)


@dataclass(frozen=True)
class EngineDisk:
    images: tuple[EnvironmentImage, ...]
    free_bytes: int | None  # None when the engine's data root is not on this machine
    data_root: str


def environment_images(images: Iterable[StoredImage]) -> tuple[EnvironmentImage, ...]:
    """The environment images among the store's images, each tag with what removing it frees."""
    found: list[EnvironmentImage] = []
    for image in images:
        language = image.labels.get(ENV_IMAGE_LABEL)
        if language is None:
            continue
        shared = image.shared_bytes
        own = image.size_bytes - shared if shared is not None else image.size_bytes
        tags = sorted(t for t in image.tags if t.startswith("arena/env-"))
        for n, tag in enumerate(tags):  # freed once, by its last tag
            found.append(
                EnvironmentImage(
                    tag=tag,
                    language=language,
                    size_bytes=image.size_bytes,
                    own_bytes=own if n == len(tags) - 1 else 0,
                    containers=image.containers,
                )
            )
    return tuple(found)


@dataclass(frozen=True)
class PlannedBuild:
    """A build about to run: its language and the images it must make first."""

    language: str
    missing: tuple[MissingImage, ...] = ()


@dataclass(frozen=True)
class DiskEstimate:
    """What a batch of builds is expected to add to the engine's disk, and how it was reckoned."""

    toolchain_bytes: int
    toolchains: tuple[str, ...]  # the images to make first, each once
    environment_bytes: int
    builds: dict[str, int]  # language -> builds
    layer_basis: dict[str, str]  # language -> where its per-build figure comes from
    free_bytes: int | None

    @property
    def total_bytes(self) -> int:
        return self.toolchain_bytes + self.environment_bytes

    def lines(self) -> list[str]:
        """The estimate as a user reads it, each figure with how it was computed."""
        if not self.builds:
            return ["disk estimate: nothing to build"]
        out = [
            f"disk estimate (rough) for {sum(self.builds.values())} build(s): "
            f"{_mb(self.total_bytes)}"
        ]
        if self.toolchains:
            out.append(
                f"  toolchain images to make first: {_mb(self.toolchain_bytes)} "
                f"({', '.join(self.toolchains)}; typical sizes measured on Debian bookworm)"
            )
        for language, count in sorted(self.builds.items()):
            out.append(f"  {language}: {count} x {self.layer_basis[language]}")
        if self.free_bytes is None:
            out.append("  free on the engine's disk: unknown (the engine is not on this machine)")
        else:
            out.append(f"  free on the engine's disk: {_mb(self.free_bytes)} (its data root)")
        return out


def _mb(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / MB:.0f} MB"


def disk_estimate(
    planned: Sequence[PlannedBuild], built: Sequence[EnvironmentImage], free_bytes: int | None
) -> DiskEstimate:
    """Each missing image once, at its typical size; each build at the median own size of
    the environment images of its language already in the engine, else a typical figure."""
    toolchains: dict[str, int] = {}
    for build in planned:
        profile = find_profile(build.language)
        for image in build.missing:
            if image.kind == "base":
                size = TYPICAL_IMAGE_MB["base"]
            elif image.kind == "language":
                size = profile.typical_image_mb if profile else TYPICAL_IMAGE_MB["extra"]
            elif image.kind == "go":
                size = TYPICAL_IMAGE_MB["go-release"]
            elif image.kind == "official":  # pulled: its size is the registry's; the language's
                size = (profile.typical_image_mb if profile else 0) + TYPICAL_IMAGE_MB["base"]
            else:
                size = TYPICAL_IMAGE_MB["extra"]
            toolchains.setdefault(image.name, size * MB)
    builds: dict[str, int] = {}
    for build in planned:
        builds[build.language] = builds.get(build.language, 0) + 1
    basis: dict[str, str] = {}
    environment = 0
    for language, count in builds.items():
        sizes = [i.own_bytes for i in built if i.language == language and i.own_bytes > 0]
        if sizes:
            each = int(statistics.median(sizes))
            basis[language] = f"{_mb(each)} (median own layer of {len(sizes)} built here)"
        else:
            profile = find_profile(language)
            each = (profile.typical_env_layer_mb if profile else TYPICAL_ENV_LAYER_MB) * MB
            basis[language] = f"{_mb(each)} (a typical {language} environment layer)"
        environment += count * each
    return DiskEstimate(
        toolchain_bytes=sum(toolchains.values()),
        toolchains=tuple(toolchains),
        environment_bytes=environment,
        builds=builds,
        layer_basis=basis,
        free_bytes=free_bytes,
    )
