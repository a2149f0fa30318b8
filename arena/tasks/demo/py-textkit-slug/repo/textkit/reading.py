"""Reading-time estimates."""

import math

WORDS_PER_MINUTE = 230


def reading_time(text: str, wpm: int = WORDS_PER_MINUTE) -> int:
    """Whole minutes needed to read `text`, at least one for any non-empty text."""
    words = len(text.split())
    if words == 0:
        return 0
    return max(1, math.ceil(words / wpm))
