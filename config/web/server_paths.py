"""Pages never show where the server keeps its files.

Job parameters, results and errors, and a model's training data, may hold absolute paths (the
media folder, the project checkout, the Python installation). `hide_server_paths` replaces each
known root with a short name, longest root first, so "/srv/app/media/exports/gold.csv" reads
"MEDIA_ROOT/exports/gold.csv". Pure: the roots come from the caller.
"""

from collections.abc import Iterable


def hide_server_paths(text: str, roots: Iterable[tuple[str, str]]) -> str:
    """`roots`: (absolute path, its public name) pairs."""
    for path, name in sorted(roots, key=lambda pair: len(pair[0]), reverse=True):
        if path and path != "/":
            text = text.replace(path.rstrip("/"), name)
    return text
