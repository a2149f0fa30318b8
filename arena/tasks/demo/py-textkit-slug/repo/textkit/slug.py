"""URL slugs."""

import re
import unicodedata

_UNSAFE = re.compile(r"[^a-z0-9]")


def _ascii(text: str) -> str:
    normalized = unicodedata.normalize("NFKD", text)
    return normalized.encode("ascii", "ignore").decode("ascii")


def slugify(text: str, separator: str = "-") -> str:
    """Turn a title into a lowercase URL slug."""
    lowered = _ascii(text).lower()
    slug = _UNSAFE.sub(separator, lowered)
    return slug.strip(separator)
