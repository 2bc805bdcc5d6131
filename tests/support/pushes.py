"""What a websocket message of a page says, read as the browser's htmx would apply it: the comment it
begins with (the tab's move it was made for, what the page fetches again) and its elements, each with
where it goes (``hx-swap-oob``). Tests assert on what the tab would show, not on how the HTML is spelled."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from django.test.html import Element, parse_html

HEAD = re.compile(r"^<!--pitree(?: v=(\d+))?(?: do=([\w:,-]+))?-->")


@dataclass
class Swap:
    """One top-level element of a message: its swap (``outerHTML`` by its own id, ``beforeend`` into a
    selector, ``delete``, …), the element itself."""

    style: str
    target: str  # a CSS selector
    element: Element

    @property
    def html(self) -> str:
        return str(self.element)

    def attr(self, name: str) -> str | None:
        return dict(self.element.attributes).get(name)

    def has(self, name: str) -> bool:
        """Whether the element has the attribute (``hidden`` has no value)."""
        return name in dict(self.element.attributes)

    @property
    def text(self) -> str:
        return _text(self.element)


@dataclass
class Push:
    raw: str
    view: int | None = None
    todo: list[str] = field(default_factory=list)

    @cached_property
    def swaps(self) -> list[Swap]:
        body = HEAD.sub("", self.raw, count=1)
        found = []
        for child in parse_html(f"<pushed>{body}</pushed>").children:  # (one element alone comes back bare)
            if not isinstance(child, Element):
                continue
            attributes = dict(child.attributes)
            oob = attributes.get("hx-swap-oob") or "true"
            style, _, selector = oob.partition(":") if ":" in oob else (oob, "", "")
            if style == "true":
                style = "outerHTML"
            found.append(Swap(style, selector or f"#{attributes.get('id')}", child))
        return found

    def by_id(self, element_id: str) -> Swap | None:
        """The element swapped by its id (outerHTML, innerHTML, delete)."""
        return next((s for s in self.swaps if s.target == f"#{element_id}"), None)

    @property
    def appended(self) -> list[Element]:
        """What is appended to ``#entries``, in order (entries and reply placeholders)."""
        return [
            child
            for s in self.swaps
            if s.style == "beforeend" and s.target == "#entries"
            for child in _elements(s.element)
        ]

    @property
    def entries(self) -> list[str]:
        """The ids of the entries appended to the transcript."""
        return [_id(el).removeprefix("entry-") for el in self.appended if _id(el).startswith("entry-")]

    @property
    def placeholders(self) -> list[str]:
        """The replies being written whose placeholders are appended."""
        return [_id(el).removeprefix("reply-") for el in self.appended if _id(el).startswith("reply-")]

    @property
    def state(self) -> dict[str, str]:
        """``#tab-state``'s data: where the tab stands now (``position``, ``cursor``, ``cursor-id``)."""
        found = self.by_id("tab-state")
        if found is None:
            return {}
        return {k.removeprefix("data-"): v or "" for k, v in found.element.attributes if k.startswith("data-")}

    @property
    def resync(self) -> Swap | None:
        return self.by_id("resync")

    @property
    def live(self) -> bool:
        return "live" in self.todo

    def text_of(self, element_id: str) -> str:
        found = self.by_id(element_id)
        return found.text if found is not None else ""

    def html_of(self, element_id: str) -> str:
        found = self.by_id(element_id)
        return found.html if found is not None else ""


def parse(message: str) -> Push:
    head = HEAD.match(message)
    assert head is not None, message[:200]
    return Push(
        message,
        view=int(head.group(1)) if head.group(1) else None,
        todo=head.group(2).split(",") if head.group(2) else [],
    )


def _elements(element: Element) -> list[Element]:
    return [child for child in element.children if isinstance(child, Element)]


def _id(element: Element) -> str:
    return dict(element.attributes).get("id") or ""


def _text(element: Any) -> str:
    if isinstance(element, str):
        return element
    return " ".join(_text(child) for child in element.children)
