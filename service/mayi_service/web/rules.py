"""The rules page of the web table: ``static/rules.html``, docs/rules.md rendered to HTML.

The page is a file served as it is (like the rest of ``static/``): it is made from
docs/rules.md, the one text of the rules, with ``python -m mayi_service.web.rules`` (run it
after changing docs/rules.md; a test checks the file is what it makes). Headings get the
ids GitHub gives them, so the rules' links to their own sections work on the page too. The
Markdown's raw HTML, if any, is shown as text; the page has no script and no inline style.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from mayi_service.web import STATIC

#: The page as served, and the text it is made from (in a source checkout).
RULES_HTML = STATIC / "rules.html"
RULES_MD = Path(__file__).resolve().parents[3] / "docs" / "rules.md"

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Rules of May I and Shanghai · May I: the web table</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/web/css/table.css">
</head>
<body>
<header class="top">
  <a class="brand" href="/#/">May I</a>
  <nav aria-label="Site">
    <a href="/#/">Lobby</a>
    <a href="/#/ladder">Ladder</a>
    <a href="/rules" aria-current="page">Rules</a>
    <a href="/docs/">API reference</a>
  </nav>
</header>
<main id="rules" class="rules">
<!-- Made from docs/rules.md by python -m mayi_service.web.rules: do not edit. -->
{body}</main>
</body>
</html>
"""


def slug(text: str) -> str:
    """A heading's id as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def render(markdown: str) -> str:
    """The rules page for ``markdown``."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(markdown)
    seen: dict[str, int] = {}
    for at, token in enumerate(tokens):
        if token.type == "heading_open":
            text = "".join(child.content for child in tokens[at + 1].children or [] if child.type != "softbreak")
            base = slug(text)
            count = seen.get(base, 0)
            seen[base] = count + 1
            token.attrSet("id", base if count == 0 else f"{base}-{count}")
    # A wide example or table scrolls in its own box, which the keyboard must reach too.
    body = md.renderer.render(tokens, md.options, {}).replace("<pre>", '<pre tabindex="0">')
    body = body.replace("<table>", '<table tabindex="0">')
    return PAGE.replace("{body}", body)


def main() -> int:
    """Write :data:`RULES_HTML` from :data:`RULES_MD`."""
    if not RULES_MD.is_file():
        print(f"no {RULES_MD}: run this in a source checkout", file=sys.stderr)
        return 1
    RULES_HTML.write_text(render(RULES_MD.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {RULES_HTML}")
    return 0


__all__ = ["RULES_HTML", "RULES_MD", "main", "render", "slug"]

if __name__ == "__main__":
    raise SystemExit(main())
