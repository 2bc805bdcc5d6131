"""Right-to-left text: each paragraph of a message takes its direction from its own letters, so a Hebrew
or Arabic sentence reads from the right with its punctuation where it belongs, and an English paragraph
beside it still reads from the left."""

from __future__ import annotations

from playwright.sync_api import expect
from support.lines import message

HEBREW = "שלום! מה שלומך? אני רוצה לשאול על Python."
ARABIC = "مرحبا! هذا جواب بالعربية."
ENGLISH = "And an English paragraph after it."

# Where the first and the last character of an element's first text node are drawn (left edges).
EDGES = """(el) => {
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT, { acceptNode: (n) => n.data.trim() ? 1 : 3 });
  const node = walker.nextNode();
  const text = node.data.trimEnd();
  const at = (i) => { const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1); return r.getBoundingClientRect().left; };
  return { first: at(text.search(/\\S/)), last: at(text.length - 1) };
}"""


def test_right_to_left_messages_read_from_the_right(page, ui, sessions) -> None:
    seeded = sessions.write_lines(
        [
            message("aaaa0001", None, "user", HEBREW, 0),
            message("aaaa0002", "aaaa0001", "assistant", f"{ARABIC}\n\n{ENGLISH}", 0, model="p/m"),
        ]
    )
    ui.open(page, seeded.url)
    user = page.locator("#entry-aaaa0001 .plain")
    expect(user).to_have_text(HEBREW)
    hebrew = user.evaluate(EDGES)
    assert hebrew["last"] < hebrew["first"], hebrew  # the closing "." left of the opening "ש"
    paragraphs = page.locator("#entry-aaaa0002 .md p")
    arabic, english = paragraphs.nth(0).evaluate(EDGES), paragraphs.nth(1).evaluate(EDGES)
    assert arabic["last"] < arabic["first"], arabic
    assert english["first"] < english["last"], english
