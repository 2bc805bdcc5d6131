"""The message box's keys, as chat apps have them: Enter sends, Shift+Enter adds a line, an input
method's Enter picks a word and never sends; on a phone Enter adds a line and Send sends."""

from __future__ import annotations

from playwright.sync_api import expect

BOX = "#composer textarea[name=text]"


def _user_texts(seeded) -> list[str]:
    texts = []
    for entry in seeded.entries():
        message = entry.get("message") or {}
        if entry["type"] == "message" and message.get("role") == "user":
            content = message["content"]
            texts.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
    return texts


def test_enter_sends_and_shift_enter_adds_a_line(page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    expect(page.locator(BOX)).to_have_attribute("placeholder", "Message…")
    expect(page.locator("#composer-keys")).to_be_visible()
    before = ui.position(page)
    box = page.locator(BOX)
    box.click()
    page.keyboard.type("first line")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("second line")
    expect(box).to_have_value("first line\nsecond line")  # nothing sent yet
    page.keyboard.press("Enter")
    ui.wait_position_change(page, before)
    assert _user_texts(seeded)[-1] == "first line\nsecond line"
    expect(box).to_have_value("")
    # Ctrl+Enter sends too, as it always did.
    before = ui.position(page)
    box.fill("with control")
    box.press("Control+Enter")
    ui.wait_position_change(page, before)
    assert _user_texts(seeded)[-1] == "with control"
    assert not record.errors


def test_enter_that_ends_an_input_method_composition_never_sends(page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    count = len(_user_texts(seeded))
    page.locator(BOX).click()
    cdp = page.context.new_cdp_session(page)
    # A Japanese input method composing "にほん": its Enter picks the word (isComposing is true)…
    cdp.send("Input.imeSetComposition", {"text": "にほん", "selectionStart": 3, "selectionEnd": 3})
    cdp.send(
        "Input.dispatchKeyEvent", {"type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}
    )
    cdp.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13})
    cdp.send("Input.insertText", {"text": "日本"})
    # …and the Enter some browsers send once the word is in (keyCode 229, the input method's) neither.
    cdp.send(
        "Input.dispatchKeyEvent", {"type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 229}
    )
    page.wait_for_timeout(500)
    expect(page.locator(BOX)).to_have_value("日本")
    assert not [url for url in record.requests if "/send/" in url]
    assert len(_user_texts(seeded)) == count
    # The next Enter, the input method done, sends the word.
    before = ui.position(page)
    page.keyboard.press("Enter")
    ui.wait_position_change(page, before)
    assert _user_texts(seeded)[-1] == "日本"


def test_on_a_phone_enter_adds_a_line_and_send_sends(phone, ui, sessions) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(phone, seeded.url)
    count = len(_user_texts(seeded))
    box = phone.locator(BOX)
    expect(box).to_have_attribute("placeholder", "Message…")
    expect(phone.locator("#composer-keys")).to_be_hidden()  # no keys to explain on a touch screen
    box.tap()
    phone.keyboard.type("on a phone")
    phone.keyboard.press("Enter")
    phone.keyboard.type("two lines")
    phone.wait_for_timeout(300)
    expect(box).to_have_value("on a phone\ntwo lines")
    assert len(_user_texts(seeded)) == count  # nothing sent
    before = ui.position(phone)
    phone.locator("#composer .send").tap()
    ui.wait_position_change(phone, before)
    assert _user_texts(seeded)[-1] == "on a phone\ntwo lines"
