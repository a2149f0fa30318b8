"""api/openapi.json: the committed schema the website's client is generated from.

`python -m api.schema_file` rewrites it; a test fails when it differs from what the app serves.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from api.core.config import ApiSettings

SCHEMA_FILE = Path(__file__).parent / "openapi.json"


def served_schema() -> dict[str, Any]:
    from api.main import create_app

    return create_app(ApiSettings(demo=True, web_dir=Path("/nonexistent"))).openapi()


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    SCHEMA_FILE.write_text(render(served_schema()))
    print(f"wrote {SCHEMA_FILE}")
