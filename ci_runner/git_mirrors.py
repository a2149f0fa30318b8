"""Where a repo is really fetched from: a mapping of repo names and URL prefixes to mirrors.

Dataset lines name repositories as GitHub's `owner/name`; an air-gapped machine, a local
mirror or a corporate Git server needs them fetched elsewhere without editing the lines.
A rule maps either one repo (`owner/name`) or a URL prefix (`https://github.com/`) to a
local path or another Git URL. Targets may use `{owner}`, `{name}` and `{repo}`
(`owner/name`) placeholders; a prefix rule without placeholders appends the rest of the URL
to its target. The most specific rule wins: a repo rule before any prefix, longer prefixes
before shorter ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

_GITHUB = re.compile(
    r"^(?:https?://|git@|ssh://git@)github\.com[/:](?P<slug>[\w.-]+/[\w.-]+?)(?:\.git)?/?$"
)
_SLUG = re.compile(r"^[\w.-]+/[\w.-]+$")


class MirrorRuleError(ValueError):
    """A mirror rule cannot be read; the message names the rule."""


def github_slug(source: str) -> str | None:
    """`owner/name` of a GitHub URL or of a bare `owner/name`, else None."""
    if _SLUG.match(source):
        return source
    found = _GITHUB.match(source)
    return found["slug"] if found else None


def _is_prefix(key: str) -> bool:
    return "://" in key or key.startswith(("git@", "/", "file:")) or key.endswith("/")


@dataclass(frozen=True)
class GitMirrors:
    """The rules, as given; `resolve` is pure."""

    rules: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, rules: Mapping[str, str] | Iterable[tuple[str, str]]) -> GitMirrors:
        pairs = list(rules.items()) if isinstance(rules, Mapping) else list(rules)
        for key, target in pairs:
            if not key.strip() or not target.strip():
                raise MirrorRuleError(f"mirror rule {key!r} -> {target!r}: both sides are needed")
            if not _is_prefix(key) and not _SLUG.match(key):
                raise MirrorRuleError(
                    f"mirror rule {key!r}: give a repo as owner/name or a URL prefix "
                    "(https://host/..., ending in /)"
                )
        return cls(tuple((k.strip(), t.strip()) for k, t in pairs))

    @classmethod
    def parse(cls, specs: Iterable[str]) -> GitMirrors:
        """Rules written `FROM=TO` (the command line's `--mirror`)."""
        pairs = []
        for spec in specs:
            key, sep, target = spec.partition("=")
            if not sep:
                raise MirrorRuleError(f"--mirror {spec!r}: write FROM=TO (owner/name=/path)")
            pairs.append((key, target))
        return cls.of(pairs)

    def __add__(self, other: GitMirrors) -> GitMirrors:
        """`other`'s rules win over ours for the same key."""
        keys = {k for k, _ in other.rules}
        return GitMirrors(tuple(r for r in self.rules if r[0] not in keys) + other.rules)

    def resolve(self, source: str) -> str:
        """The location to fetch `source` from (the source itself when no rule matches)."""
        slug = github_slug(source)
        for key, target in self.rules:
            if slug is not None and not _is_prefix(key) and key.lower() == slug.lower():
                return _fill(target, slug, rest=None)
        prefixes = sorted(
            ((k, t) for k, t in self.rules if _is_prefix(k) and source.startswith(k)),
            key=lambda rule: -len(rule[0]),
        )
        for key, target in prefixes:
            rest = source[len(key) :]
            return _fill(target, slug or rest.removesuffix(".git").strip("/"), rest=rest)
        return source


def _fill(target: str, slug: str, rest: str | None) -> str:
    owner, _, name = slug.partition("/")
    if any(p in target for p in ("{owner}", "{name}", "{repo}")):
        return target.replace("{owner}", owner).replace("{name}", name).replace("{repo}", slug)
    return target if rest is None else target + rest
