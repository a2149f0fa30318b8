"""Text that sandboxed code or a model wrote, made safe to store and show.

Control characters (terminal escapes, C1 codes, NUL) are removed, newlines and tabs kept, so
nothing printed later can move the cursor, rewrite a line or change the terminal's state.
"""

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]+")


def clean_text(text: str) -> str:
    return _CONTROL.sub("", text)


def clean_bytes(data: bytes) -> str:
    return clean_text(data.decode("utf-8", errors="replace"))
