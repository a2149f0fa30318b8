"""Greedy word wrapping."""


def wrap(text: str, width: int = 72) -> list[str]:
    """Split text into lines of at most `width` characters, breaking at spaces."""
    if width < 1:
        raise ValueError("width must be positive")
    lines: list[str] = []
    current = ""
    for word in text.split():
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current = f"{current} {word}"
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines
