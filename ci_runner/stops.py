"""Who stopped a sandbox, or a process the runner started in it, and whose fault that is.

A sandbox provider answers from its engine's facts (swing-protocol.md, "Faults"): the sandbox's
own processes include everything the patch or the tests started, so a kill, an exit or a
process that cannot start because of them is the code's fault; a kill sent from outside, or a
stop the engine cannot explain, is infrastructure.
"""

from enum import StrEnum


class StopCause(StrEnum):
    OWN_PROCESSES = "own_processes"  # a kill or an exit from inside the sandbox
    MEMORY = "memory"  # its memory limit
    PIDS = "pids"  # its process limit: no process could start
    DISK = "disk"  # its disk limit outside the workspace: a write past it failed
    RUNNER = "runner"  # the runner killed it, after a timeout
    OUTSIDE = "outside"  # a kill through the engine by someone else, or its removal
    UNKNOWN = "unknown"  # the engine's facts do not say who

    @property
    def is_infrastructure(self) -> bool:
        """Never scored, never cached: the run is retried."""
        return self in (StopCause.OUTSIDE, StopCause.UNKNOWN)
