"""A researcher's Markdown (instructions, information sheet) as HTML that is safe to show: raw
HTML in the text is escaped, not passed through, and links with a script scheme (javascript:,
vbscript:, data: other than images) are left as text, by markdown-it's CommonMark preset with
`html` off (https://markdown-it-py.readthedocs.io/en/latest/security.html). Pure: no Django."""

from functools import lru_cache

from markdown_it import MarkdownIt


@lru_cache(maxsize=1)
def _renderer() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False})


def to_html(text: str) -> str:
    """The text's HTML; every character of raw HTML in it escaped."""
    return _renderer().render(text or "")
