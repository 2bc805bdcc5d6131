"""The tree panel's "Compare" at its branch points: on exactly the rows that are one (in every filter,
in runs opened later, after the file grew), naming the branches the navigator would compare."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import pytest

ODD = "a&b #c?d/e%f g"  # an entry id with every character a URL treats specially


class TreeItems(HTMLParser):
    """Each treeitem's entry (its button's ``data-entry``) → its Compare link's ``href`` (or None), and
    the description each branch point points to."""

    def __init__(self) -> None:
        super().__init__()
        self.compare: dict[str, str | None] = {}
        self.described: dict[str, str | None] = {}
        self.hint_ids: set[str] = set()
        self._item: dict[str, str | None] | None = None
        self._entry = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.hint_ids.add(str(found["id"]))
        if found.get("role") == "treeitem":
            self._item = found
        elif self._item is not None and tag == "button" and found.get("data-entry") is not None:
            entry = str(found["data-entry"])
            self.compare[entry] = None
            self.described[entry] = self._item.get("aria-describedby")
            self._entry = entry
        elif self._item is not None and tag == "a" and "tree__compare" in (found.get("class") or ""):
            assert found.get("tabindex") == "-1"  # the row holds focus; arrow keys keep working
            self.compare[self._entry] = found["href"]

    def handle_endtag(self, tag: str) -> None:
        if tag == "li":
            self._item = None


def _panel(client, sid: str, **query: str) -> TreeItems:
    response = client.get(f"/s/{sid}/tree/", query)
    assert response.status_code == 200
    parser = TreeItems()
    parser.feed(response.content.decode())
    return parser


def _named(href: str | None, sid: str) -> list[str]:
    assert href is not None
    url = urlsplit(href)
    assert url.path == f"/s/{sid}/compare/"
    return parse_qs(url.query)["e"]


def _links(items: TreeItems) -> dict[str, str]:
    return {entry: href for entry, href in items.compare.items() if href is not None}


@pytest.fixture
def tree(write_session, make):
    """u1 → {a1 → {ODD, u2b, u2c}, a1b}: two branch points, one of them with a branch under an odd id."""
    m = make
    return write_session(
        [
            m.user("u1", None, "Write a haiku", 1),
            m.assistant("a1", "u1", "Old pond", 2),
            m.user(ODD, "a1", "About rain", 3),
            m.assistant("a2a", ODD, "Rain on the roof", 4),
            m.user("u2b", "a1", "About snow", 5),
            m.assistant("a2b", "u2b", "Snow on the pines", 6),
            m.user("u2c", "a1", "About sun", 7),
            m.assistant("a1b", "u1", "An old silent pond", 8),
        ]
    )


def test_exactly_the_branch_points_link_to_the_comparison_of_their_branches(client, tree) -> None:
    sid, _ = tree
    items = _panel(client, sid, filter="all", at="a2b")
    links = _links(items)
    assert set(links) == {"u1", "a1"}
    assert _named(links["a1"], sid) == [ODD, "u2b", "u2c"]
    assert _named(links["u1"], sid) == ["a1", "a1b"]
    assert {items.described[entry] for entry in links} == {"tree-compare-hint"} <= items.hint_ids
    assert all(items.described[entry] is None for entry in items.compare if entry not in links)
    page = client.get(links["a1"])
    assert page.status_code == 200
    assert [column.head_id for column in page.context["comparison"].columns] == [ODD, "u2b", "u2c"]


def test_under_a_filter_the_link_names_the_branches_drawn_under_the_row(client, tree) -> None:
    sid, _ = tree
    links = _links(_panel(client, sid, filter="user", at="a2b"))
    assert set(links) == {"u1"}  # the answers it parts at are hidden: u1's branches are the prompts
    assert _named(links["u1"], sid) == [ODD, "u2b", "u2c"]
    assert _links(_panel(client, sid, filter="labeled")) == {}
    assert client.get(links["u1"]).status_code == 200


def test_more_than_four_branches_are_chosen_as_the_navigator_chooses(client, write_session, make) -> None:
    m = make
    sid, _ = write_session(
        [m.user("u", None, "q", 1)] + [m.assistant(f"a{i}", "u", f"answer {i}", 2 + i) for i in range(6)]
    )
    for at in ("a5", "a1", "u"):
        link = _links(_panel(client, sid, filter="all", at=at))["u"]
        navigator = client.get(f"/s/{sid}/compare/", {"branches": "a0", "at": at})
        assert _named(link, sid) == parse_qs(urlsplit(navigator["Location"]).query)["e"]
    assert _named(_links(_panel(client, sid, filter="all", at="a5"))["u"], sid) == ["a0", "a1", "a2", "a5"]


def test_a_run_opened_later_links_its_branch_point_too(client, write_session, make) -> None:
    m = make
    chain = [m.user("q0", None, "q 0", 1)] + [m.user(f"q{n}", f"q{n - 1}", f"q {n}", 1 + n) for n in range(1, 8)]
    sid, _ = write_session([*chain, m.user("x", "q7", "left", 20), m.user("y", "q7", "right", 21)])
    response = client.get(f"/s/{sid}/tree/run/", {"first": "q1", "last": "q7", "filter": "user", "at": "x"})
    parser = TreeItems()
    parser.feed(response.content.decode())
    links = _links(parser)
    assert set(links) == {"q7"}
    assert _named(links["q7"], sid) == ["x", "y"]


def test_the_panel_fetched_again_after_the_file_grew_links_the_new_branch_point(client, tree, make) -> None:
    sid, path = tree
    before = _links(_panel(client, sid, filter="all", at="a2b"))
    assert "a2b" not in before
    with path.open("ab") as file:
        for entry in (
            make.user("p", "a2b", "Again", 9),
            make.user("q", "a2b", "Or else", 10),
            make.user("r", "a1", "Fog", 11),
        ):
            file.write(json.dumps(entry).encode() + b"\n")
    after = _links(_panel(client, sid, filter="all", at="a2b"))
    assert set(after) == {"u1", "a1", "a2b"}
    assert _named(after["a2b"], sid) == ["p", "q"]
    assert _named(after["a1"], sid) == [ODD, "u2b", "u2c", "r"]
