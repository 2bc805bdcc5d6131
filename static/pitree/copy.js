// Copy: a message as written, a field (a share link), a code block. The button says for a moment
// whether it was copied.
(function () {
  "use strict";

  /** Copy ``text``, a string or a promise of one (fetched after the click); whether it was copied. */
  async function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      try {
        await toClipboard(text);
        return true;
      } catch (error) {
        // Refused (no permission, the document not focused): the older way below.
      }
    }
    let value;
    try {
      value = await text;
    } catch (error) {
      return false; // the text could not be fetched
    }
    const area = document.createElement("textarea");
    area.value = value;
    area.setAttribute("readonly", "");
    area.className = "visually-hidden";
    document.body.append(area);
    // Selected in a task of its own: a text known at once (a kept one), selected in the click's own
    // task right after the box was added, left Chromium's copy command with nothing to copy.
    await new Promise((resolve) => setTimeout(resolve));
    area.select();
    let copied = false;
    try {
      copied = document.execCommand("copy");
    } catch (error) {
      copied = false;
    }
    area.remove();
    return copied;
  }

  /** A text still being fetched goes to the clipboard as a promise (a ClipboardItem's): the permission
   *  the click gave holds while it arrives, where a write after awaiting it may be refused. */
  function toClipboard(text) {
    if (typeof text === "string") return navigator.clipboard.writeText(text);
    if (typeof ClipboardItem === "undefined") return text.then((value) => navigator.clipboard.writeText(value));
    const blob = text.then((value) => new Blob([value], { type: "text/plain" }));
    return navigator.clipboard.write([new ClipboardItem({ "text/plain": blob })]);
  }

  // An entry never changes: a message fetched to be copied is kept for the next Copy of it, which then
  // copies at once, within the click (the older way below needs the click's activation, which a long
  // fetch on a busy machine outlives).
  const SOURCES_KEPT = 4;
  const sources = new Map(); // text URL -> the text (a promise)

  function fetchedSource(url) {
    if (!sources.has(url)) {
      const text = fetchSource(url);
      text.catch(() => sources.delete(url));
      sources.set(url, text);
      if (sources.size > SOURCES_KEPT) sources.delete(sources.keys().next().value);
    }
    return sources.get(url);
  }

  /** The text of a message too large for the page to carry (its Copy names where the server sends it). */
  async function fetchSource(url) {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return response.text();
  }

  // The button says what happened for a moment (an icon button shows its label meanwhile).
  async function copyFrom(button, text) {
    const label = button.querySelector(".tool__label") || button;
    if (!button.dataset.label) button.dataset.label = label.textContent;
    const copied = await copyText(text);
    label.textContent = copied ? "Copied" : "Copy failed";
    button.classList.add(copied ? "is-done" : "is-failed");
    setTimeout(() => {
      label.textContent = button.dataset.label;
      button.classList.remove("is-done", "is-failed");
    }, 1500);
  }

  document.addEventListener("click", (ev) => {
    const target = ev.target.closest && ev.target;
    if (!target) return;
    const copy = target.closest("[data-copy]");
    if (copy) {
      const source = copy.closest("article.entry").querySelector(":scope > template.entry__source");
      if (source) copyFrom(copy, source.content.textContent);
      else if (copy.dataset.copyUrl) copyFrom(copy, fetchedSource(copy.dataset.copyUrl));
      return;
    }
    const copyField = target.closest("[data-copy-field]");
    if (copyField) {
      const field = document.getElementById(copyField.dataset.copyField);
      if (field) copyFrom(copyField, field.value);
      return;
    }
    const copyCode = target.closest("[data-copy-code]");
    if (copyCode) {
      const code = copyCode.closest(".code").querySelector("pre");
      if (code) copyFrom(copyCode, code.textContent);
    }
  });
})();
