"""textkit: slugs, wrapping and reading time for plain text."""

from textkit.reading import reading_time
from textkit.slug import slugify
from textkit.wrap import wrap

__all__ = ["reading_time", "slugify", "wrap"]
