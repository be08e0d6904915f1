"""A strict reader of the LaTeX the study report writes: every character LaTeX gives a meaning
(\\ $ ^ ~ { } & % # _) must be an escape, part of a command the report uses, or (for & and \\\\)
a tabular's column and row separators in the right number. Returns the problems found."""

import re

COMMANDS = {
    "documentclass", "usepackage", "title", "date", "begin", "end", "maketitle", "centering", "small",
    "hline", "caption", "label", "section", "cite", "bibitem", "kappa", "alpha",
}  # fmt: skip
TEXT_COMMANDS = {"textbackslash", "textasciitilde", "textasciicircum"}  # each followed by {}
ESCAPED = set("&%$#_{}")
MATH = re.compile(r"\$(\\kappa|\\alpha|N)\$")


def latex_problems(tex: str) -> list[str]:
    problems = _tabular_problems(tex)
    text = MATH.sub("", tex)
    depth, i = 0, 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            i, problem = _command(text, i)
            if problem:
                problems.append(problem)
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                problems.append(f"unbalanced }} at {i}: {text[max(0, i - 30) : i + 10]!r}")
                depth = 0
        elif char in "$^~#_%":
            problems.append(f"unescaped {char} at {i}: {text[max(0, i - 30) : i + 10]!r}")
        i += 1
    if depth:
        problems.append(f"{depth} braces left open")
    return problems


def _command(text: str, i: int) -> tuple[int, str]:
    following = text[i + 1 : i + 2]
    if following in ESCAPED or following == "\\":
        return i + 2, ""
    name = re.match(r"[a-zA-Z]+", text[i + 1 :])
    if not name:
        return i + 2, f"a backslash before {following!r} at {i}"
    word = name.group(0)
    end = i + 1 + len(word)
    if word in TEXT_COMMANDS:
        if text[end : end + 2] != "{}":
            return end, f"\\{word} not followed by {{}} at {i}"
        return end + 2, ""
    return end, "" if word in COMMANDS else f"unknown command \\{word} at {i}: {text[i : i + 40]!r}"


def _tabular_problems(tex: str) -> list[str]:
    """Each row of a tabular has one & fewer than its columns; & appears nowhere else unescaped."""
    problems = []
    outside = tex
    for spec, body in re.findall(r"\\begin\{tabular\}\{([a-z]+)\}(.*?)\\end\{tabular\}", tex, flags=re.DOTALL):
        outside = outside.replace(body, "")
        for row in re.split(r"(?<!\\)\\\\", body.replace("\\hline", "")):
            if not row.strip():
                continue
            separators = len(re.findall(r"(?<!\\)&", row))
            if separators != len(spec) - 1:
                problems.append(f"a row with {separators} & in a {len(spec)}-column tabular: {row.strip()[:80]!r}")
    if re.search(r"(?<!\\)&", outside):
        problems.append("an unescaped & outside a tabular")
    return problems
