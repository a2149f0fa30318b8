"""Prompt templates (files in arena/prompts/) filled in for one task and role."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

from arena.players.base import Role, TaskContext

PROMPTS_DIR = Path(__file__).parent.parent / "prompts"


@cache
def template(role: Role) -> Template:
    return Template((PROMPTS_DIR / f"{role.value}.md").read_text())


def render_prompt(role: Role, ctx: TaskContext, patch: str | None = None) -> str:
    task = ctx.task
    return template(role).safe_substitute(
        repo=task.repo,
        language=task.language.value,
        issue=task.problem_statement.strip() or "(no description)",
        context=ctx.context or "(no context retrieved)",
        patch=patch or "(the submitter produced no patch)",
    )
