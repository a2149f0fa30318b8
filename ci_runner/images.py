"""Per-language CI images, built from a base image and tagged by a hash of their recipe.

A changed recipe (or base) gives a new tag and so a rebuild; an unchanged one is reused.
Where no registry is reachable the base is bootstrapped offline with debootstrap. A toolchain
choice (ci_runner.toolchains) may add to a language's image: Debian packages (clang), shims
and variables, a Go release fetched from the module proxy, or an official image as the base.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ci_runner.config import CISettings
from ci_runner.errors import CIError, ImageError
from ci_runner.go_toolchain import fetch_script
from ci_runner.image_layout import SANDBOX_HOME, SANDBOX_UID, WORKSPACE
from ci_runner.image_names import base_image_name, ci_image_name
from ci_runner.languages import LANGUAGES, find_profile
from ci_runner.languages.toolchain import ToolchainChoice
from ci_runner.locks import file_lock
from ci_runner.sandbox.image_store import build_context

if TYPE_CHECKING:
    from ci_runner.sandbox.provider import SandboxProvider

COMMON_PACKAGES = ("bash", "ca-certificates", "coreutils", "git", "procps")
_FETCH_CA = "/tmp/arena-ca.crt"  # deleted before the commit
# GitHub's Ubuntu runners have /etc/lsb-release, and jobs print it (`cat /etc/lsb-release` in a
# "machine info" step); Debian has only /etc/os-release: the same facts, in lsb-release's form
_LSB_RELEASE = """RUN [ -e /etc/lsb-release ] || (. /etc/os-release \\
 && printf 'DISTRIB_ID=%s\\nDISTRIB_RELEASE=%s\\n' "${NAME%% *}" "$VERSION_ID" \\
 && printf 'DISTRIB_CODENAME=%s\\n' "$VERSION_CODENAME" \\
 && printf 'DISTRIB_DESCRIPTION="%s"\\n' "$PRETTY_NAME") > /etc/lsb-release
"""
_FETCH_TIMEOUT_S = 900

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


@dataclass(frozen=True)
class ImageRecipe:
    language: str
    dockerfile: str

    def tag(self, base_id: str) -> str:
        digest = hashlib.sha256(f"{base_id}\n{self.dockerfile}".encode()).hexdigest()[:12]
        return ci_image_name(self.language, digest)


def recipe_for(
    language: str, base_image: str, choice: ToolchainChoice | None = None
) -> ImageRecipe:
    """The Dockerfile of a language's CI image: Debian toolchains, git, an unprivileged user,
    and what a toolchain choice adds (packages, shims, variables; an official image's own)."""
    profile = find_profile(language)
    if profile is None:
        raise ImageError(f"unknown language {language!r}; known: {', '.join(LANGUAGES)}")
    official = choice is not None and choice.image is not None
    own = profile.official_packages if official else profile.packages
    extra = choice.packages if choice else ()
    packages = " ".join(sorted(set(COMMON_PACKAGES + own + extra)))
    dockerfile = f"""FROM {base_image}
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
RUN apt-get update \\
 && apt-get install -y --no-install-recommends {packages} \\
 && rm -rf /var/lib/apt/lists/*
RUN useradd --uid {SANDBOX_UID} --user-group --home-dir {SANDBOX_HOME} --shell /bin/bash arena \\
 && mkdir -p {WORKSPACE} {SANDBOX_HOME} && chown arena:arena {WORKSPACE} {SANDBOX_HOME}
{_LSB_RELEASE}WORKDIR {WORKSPACE}
"""
    dockerfile += profile.official_setup if official else profile.suite_setup
    if choice is not None:
        for name, target in choice.shims:
            dockerfile += f"RUN ln -sf {target} /usr/local/bin/{name}\n"
        if choice.env:
            pairs = " ".join(f"{k}={json.dumps(v)}" for k, v in choice.env)
            dockerfile += f"ENV {pairs}\n"
    return ImageRecipe(language=language, dockerfile=dockerfile)


class ImageBuilder:
    """Finds or builds the base and per-language images in a sandbox provider's image store."""

    def __init__(self, provider: SandboxProvider, settings: CISettings) -> None:
        self._provider = provider
        self._settings = settings

    @property
    def provider(self) -> SandboxProvider:
        return self._provider

    @property
    def settings(self) -> CISettings:
        return self._settings

    def find_id(self, name: str) -> str | None:
        """The id of image `name` in the engine, or None if it is not there."""
        return self._image_id(name)

    def _image_id(self, name: str) -> str | None:
        return self._provider.images.image_id(name)

    def image_id(self, name: str) -> str:
        """The id an image name points to now, so results can be keyed by what really ran."""
        found = self._image_id(name)
        if found is None:
            raise ImageError(f"image {name} does not exist in the Docker engine")
        return found

    def base_name(self, suite: str | None = None) -> str:
        """The base image of a Debian suite: the configured one for the default suite."""
        if suite is None or suite == self._settings.debian_suite:
            return self._settings.base_image
        return base_image_name(suite)

    def ensure_base(self, progress: Progress = _quiet, suite: str | None = None) -> str:
        """The base image's id; another suite than the default is bootstrapped on first use."""
        name = self.base_name(suite)
        suite = suite or self._settings.debian_suite
        found = self._image_id(name)
        if found:
            return found
        lock = "base-image.lock" if name == self._settings.base_image else f"base-{suite}.lock"
        with file_lock(self._settings.cache_dir / "locks" / lock):
            found = self._image_id(name)
            if found:
                return found
            if name.startswith("arena/"):
                self._bootstrap_base(name, suite, progress)
            else:
                progress(f"pulling {name}")
                try:
                    self._provider.images.pull(name)
                except ImageError as exc:
                    raise ImageError(
                        f"{exc}; with no registry, leave ARENA_BASE_IMAGE at its default to "
                        "bootstrap one with debootstrap"
                    ) from exc
            built = self._image_id(name)
            if not built:
                raise ImageError(f"base image {name} is still missing after building it")
            return built

    def _bootstrap_base(self, name: str, suite: str, progress: Progress) -> None:
        if shutil.which("debootstrap") is None:
            raise ImageError(
                f"base image {name} is missing and debootstrap is not installed "
                "(apt-get install debootstrap)"
            )
        if os.geteuid() != 0:
            raise ImageError(f"bootstrapping base image {name} with debootstrap needs root")
        work = self._settings.cache_dir / "bootstrap"
        work.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=work) as tmp:
            root = Path(tmp) / "root"
            tarball = Path(tmp) / "root.tar"
            progress(f"debootstrap {suite} (minbase) for {name}")
            _run(
                [
                    "debootstrap",
                    "--variant=minbase",
                    suite,
                    str(root),
                    self._settings.debian_mirror,
                ]
            )
            progress(f"importing {name}")
            _run(["tar", "-C", str(root), "-cf", str(tarball), "."])
            self._provider.images.import_rootfs(tarball, name)

    def find(self, language: str, suite: str | None = None) -> str | None:
        """The tag of the language's image if it is built; never builds anything."""
        base = self.base_name(suite)
        base_id = self._image_id(base)
        if base_id is None:
            return None
        tag = recipe_for(language, base).tag(base_id)
        return tag if self._image_id(tag) else None

    def ensure(self, language: str, progress: Progress = _quiet, suite: str | None = None) -> str:
        """The tag of the language's image (of `suite`, default the configured one), built now
        only if its recipe changed."""
        base_id = self.ensure_base(progress, suite)
        base = self.base_name(suite)
        recipe = recipe_for(language, base)
        tag = recipe.tag(base_id)
        if self._image_id(tag):
            return tag
        lock = (
            f"image-{language}.lock"
            if base == self._settings.base_image
            else (f"image-{language}-{suite}.lock")
        )
        with file_lock(self._settings.cache_dir / "locks" / lock):
            if self._image_id(tag):
                return tag
            progress(f"building {tag}")
            self._build(recipe, tag, progress)
        return tag

    def find_toolchain(self, language: str, choice: ToolchainChoice) -> str | None:
        """The tag of the image `choice` builds for `language`, if built; builds nothing."""
        if not choice.adds_to_suite:
            return self.find(language, choice.suite)
        base = choice.image or self.base_name(choice.suite)
        base_id = self._image_id(base)
        if base_id is None:
            return None
        tag = recipe_for(language, base, choice).tag(base_id)
        if choice.go_release and self._image_id(tag):
            tag = self._go_tag(language, tag, choice.go_release)
        return tag if self._image_id(tag) else None

    def ensure_toolchain(
        self, language: str, choice: ToolchainChoice, progress: Progress = _quiet
    ) -> str:
        """The tag of the image `choice` builds for `language`: the suite's language image,
        plus its packages, shims and variables, on an official image if it names one, with
        its Go release fetched from the module proxy (once, with the build network)."""
        if not choice.adds_to_suite:
            return self.ensure(language, progress, suite=choice.suite)
        if choice.image is not None:
            base = choice.image
            base_id = self._pull(base, progress)
        else:
            base = self.base_name(choice.suite)
            base_id = self.ensure_base(progress, choice.suite)
        recipe = recipe_for(language, base, choice)
        tag = recipe.tag(base_id)
        if not self._image_id(tag):
            with file_lock(
                self._settings.cache_dir
                / "locks"
                / f"image-{tag.replace(':', '-').replace('/', '-')}.lock"
            ):
                if not self._image_id(tag):
                    progress(f"building {tag}")
                    self._build(recipe, tag, progress)
        if choice.go_release:
            return self._with_go(language, tag, choice.go_release, progress)
        return tag

    def _pull(self, name: str, progress: Progress) -> str:
        found = self._image_id(name)
        if found:
            return found
        progress(f"pulling {name}")
        try:
            self._provider.images.pull(name)
        except ImageError as exc:
            raise ImageError(
                f"{exc}; unset ARENA_TOOLCHAIN_REGISTRY to use Debian's toolchains"
            ) from exc
        return self.image_id(name)

    def _go_tag(self, language: str, source: str, release: str) -> str:
        source_id = self.image_id(source)
        digest = hashlib.sha256(
            f"{source_id}\n{fetch_script(release, _FETCH_CA)}".encode()
        ).hexdigest()[:12]
        return ci_image_name(language, f"{digest}-go{release}")

    def _with_go(self, language: str, source: str, release: str, progress: Progress) -> str:
        """`source` with Go `release` fetched from the module proxy, committed as an image.

        A provider build box (not a Dockerfile) does the fetch, so that the build's CA bundle
        goes in beside it and is gone before the commit, as in an environment build.
        """
        tag = self._go_tag(language, source, release)
        if self._image_id(tag):
            return tag
        with file_lock(self._settings.cache_dir / "locks" / f"go-{release}.lock"):
            if self._image_id(tag):
                return tag
            progress(f"fetching Go {release} from the module proxy into {tag}")
            self._fetch_go(language, source, release, tag)
        return tag

    def _fetch_go(self, language: str, source: str, release: str, tag: str) -> None:
        """In a build box of `source`: the CA bundle written beside the script, which
        removes it (and its download cache) before the commit."""
        ca = self._settings.build_ca_bundle
        env = dict(self._settings.build_env)
        if ca is not None:
            if not ca.is_file():
                raise ImageError(f"ARENA_BUILD_CA_BUNDLE={ca} is not a file")
            env["SSL_CERT_FILE"] = _FETCH_CA
        limits = self._settings.limits
        with self._provider.start_build(
            source,
            limits,
            network=self._settings.build_network,
            memory_mb=self._settings.build_memory_mb,
            disk_mb=self._settings.build_disk_mb,
            lifetime_s=_FETCH_TIMEOUT_S + 60,  # an orphan stops by itself
            scratch={},
            labels={"arena.image.build": tag},
        ) as box:
            try:
                if ca is not None:
                    box.write_file(_FETCH_CA, ca.read_bytes())
                done = box.exec(
                    fetch_script(release, _FETCH_CA),
                    env=env,
                    workdir="/",
                    timeout_s=_FETCH_TIMEOUT_S,
                    max_output_bytes=limits.max_output_bytes,
                )
            except CIError as exc:
                raise ImageError(f"fetching Go {release} into {tag} failed: {exc}") from exc
            if done.exit_code != 0:
                raise ImageError(
                    f"fetching Go {release} from the module proxy failed:\n{done.output[-2000:]}"
                )
            self._provider.commit(
                box, tag, changes=['CMD ["bash"]'], labels={"arena.image": language}
            )

    def _build(self, recipe: ImageRecipe, tag: str, progress: Progress) -> None:
        context = build_context(recipe.dockerfile)
        for line in self._provider.images.build(tag, context, {"arena.image": recipe.language}):
            progress(line)


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-2000:]
        raise ImageError(f"{command[0]} failed with exit code {done.returncode}:\n{tail}")
