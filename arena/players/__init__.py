"""Players: one interface for every competitor, LLM endpoint or baseline agent."""

from arena.players.base import Answer, ModelError, Player, Role, TaskContext

__all__ = ["Answer", "ModelError", "Player", "Role", "TaskContext"]
