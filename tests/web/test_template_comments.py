"""Django's ``{# … #}`` comment ends on its own line: one that goes on to the next line is not a comment
but text, printed on the page for every reader (a sidebar once showed its own note)."""

from __future__ import annotations

from pathlib import Path

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def test_every_short_comment_ends_on_the_line_it_starts() -> None:
    open_ended = [
        f"{path.relative_to(TEMPLATES)}:{number}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if line.count("{#") > line.count("#}")
    ]
    assert open_ended == []
