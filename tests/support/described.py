"""What a page's form controls tell assistive technology about themselves: the elements their
``aria-describedby`` names (which must be on the page) and whether they say they are invalid."""

from __future__ import annotations

from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Controls(HTMLParser):
    """The named inputs, selects and textareas of a page with their attributes, and the text of every
    element that has an id."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.controls: dict[str, dict[str, str | None]] = {}
        self.texts: dict[str, str] = {}
        self._open: list[tuple[str, str | None]] = []  # the elements the parser is inside, with their ids
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        name, id_ = found.get("name"), found.get("id")
        if tag in ("input", "select", "textarea") and name and found.get("type") != "hidden":
            self.controls[name] = found
        if id_:
            self.texts.setdefault(id_, "")
        if tag not in VOID:
            self._open.append((tag, id_))

    def handle_endtag(self, tag: str) -> None:
        while self._open and self._open.pop()[0] != tag:
            pass  # an element left open (a <p> or <li> closed by the next one) ends with its parent

    def handle_data(self, data: str) -> None:
        for _, id_ in self._open:
            if id_:
                self.texts[id_] += data

    def missing(self) -> dict[str, list[str]]:
        """Per control, the ids its aria-describedby names that no element of the page has."""
        gone = {name: [i for i in self.described_by(name) if i not in self.texts] for name in self.controls}
        return {name: ids for name, ids in gone.items() if ids}

    def described_by(self, name: str) -> list[str]:
        return (self.controls[name].get("aria-describedby") or "").split()

    def description(self, name: str) -> str:
        """What a screen reader says after the control's name: the text of what describes it."""
        return " ".join(self.texts.get(i, "").strip() for i in self.described_by(name))

    def invalid(self) -> set[str]:
        return {name for name, attrs in self.controls.items() if attrs.get("aria-invalid") == "true"}
