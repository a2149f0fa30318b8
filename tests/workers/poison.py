"""`arena` with one more baseline, `poison`, whose patch step kills the worker running it."""

from __future__ import annotations

import os
import signal
import sys

from arena.players.base import Answer, TaskContext
from arena.players.baselines import BASELINES, NullPlayer


class PoisonPlayer(NullPlayer):
    name = "poison"

    def propose_patch(self, ctx: TaskContext) -> Answer:
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")


BASELINES["poison"] = PoisonPlayer

if __name__ == "__main__":
    from cli import main

    sys.argv = ["arena", *sys.argv[1:]]
    main()
