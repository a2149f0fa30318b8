"""Where the team's shared test data lies (`shared/data` beside the repository).

CI checks the repository out beside `shared/`; a clone elsewhere (a scratch directory)
names the folder with `ARENA_SHARED_DATA`, else the team's usual place is tried.
"""

from __future__ import annotations

import os
from pathlib import Path

_REPO = Path(__file__).resolve().parents[1]


def shared_data() -> Path:
    if given := os.environ.get("ARENA_SHARED_DATA"):
        return Path(given)
    for candidate in (_REPO.parent / "shared" / "data", Path("/work/shared/data")):
        if candidate.is_dir():
            return candidate
    return _REPO.parent / "shared" / "data"
