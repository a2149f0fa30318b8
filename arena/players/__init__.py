"""Players: one interface for every competitor, LLM endpoint or baseline agent."""

from arena.players.base import Answer, EndpointFault, ModelError, Player, Role, TaskContext

__all__ = ["Answer", "EndpointFault", "ModelError", "Player", "Role", "TaskContext"]
