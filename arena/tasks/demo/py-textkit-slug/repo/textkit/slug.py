"""URL slugs."""

import re
import unicodedata

_UNSAFE = re.compile(r"[^a-z0-9]")
DEFAULT_MAX_LENGTH = 60


def _ascii(text: str) -> str:
    """Fold accents away (é -> e) and drop what has no ASCII form."""
    normalized = unicodedata.normalize("NFKD", text)
    return normalized.encode("ascii", "ignore").decode("ascii")


def _truncate(slug: str, max_length: int) -> str:
    """Cut at max_length, preferring to cut at a word boundary."""
    if len(slug) <= max_length:
        return slug
    return slug[:max_length]


def slugify(text: str, separator: str = "-", max_length: int = DEFAULT_MAX_LENGTH) -> str:
    """Turn a title into a lowercase URL slug of at most `max_length` characters."""
    if max_length < 1:
        raise ValueError("max_length must be positive")
    lowered = _ascii(text).lower()
    slug = _UNSAFE.sub(separator, lowered).strip(separator)
    return _truncate(slug, max_length)
