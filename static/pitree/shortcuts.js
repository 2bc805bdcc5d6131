// Keyboard: j/k move along the path, [ / ] (or h/l) switch sibling branch. (A message box's keys:
// enter.js; the tree panel's: tree-panel.js; Escape closes what it is in: shell.js, entry-panels.js.)
(function () {
  "use strict";

  const pitree = window.pitree;

  function isTyping(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  function entryList() {
    return Array.from(document.querySelectorAll("#transcript article.entry[data-entry]"));
  }

  function focused() {
    const active = document.activeElement;
    return (active && active.closest && active.closest("#transcript article.entry[data-entry]")) || null;
  }

  function focusEntry(el) {
    if (!el) return;
    el.focus();
    el.scrollIntoView({ block: "nearest" });
  }

  function switchSibling(direction) {
    const list = entryList();
    const current = focused() || list[list.length - 1];
    if (!current) return;
    // The focused entry's own navigator, else the nearest one above it on the path.
    let holder = current;
    while (holder && !holder.querySelector(":scope > .entry__head .navigator")) {
      holder = holder.previousElementSibling;
    }
    const button = holder && holder.querySelector(`:scope > .entry__head .nav-${direction}`);
    if (!button || button.disabled) return;
    button.click();
    // A key moves the focus among entries: it stays on the entry shown (not on its ‹ ›, as a click's).
    pitree.focusAfterSwap(button.value);
  }

  document.addEventListener("keydown", (ev) => {
    const target = ev.target;
    // Single keys act only where no control has the focus (an entry, or the page): a key pressed on a
    // link or button is that control's (WCAG 2.1.4).
    if (isTyping(target) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (target.closest && target.closest("a[href], button, summary, [role=treeitem], [contenteditable]")) return;
    const list = entryList();
    const index = list.indexOf(focused());
    switch (ev.key) {
      case "k":
        focusEntry(list[index < 0 ? list.length - 1 : Math.max(index - 1, 0)]);
        break;
      case "j":
        focusEntry(list[index < 0 ? list.length - 1 : Math.min(index + 1, list.length - 1)]);
        break;
      case "[":
      case "h":
        switchSibling("prev");
        break;
      case "]":
      case "l":
        switchSibling("next");
        break;
      default:
        return;
    }
    ev.preventDefault();
  });
})();
