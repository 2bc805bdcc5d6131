// After the transcript changed (a send answered, a branch switched, older entries loaded above): the
// focus, the folds the reader opened and what was typed stay; the pickers keep the focus after a pick.
(function () {
  "use strict";

  const pitree = window.pitree;

  let focusAfterSwap = null;
  let focusNavigator = ""; // "prev" or "next": a ‹ › button was pressed, focus goes to the one shown
  let keptFolds = [];
  let keptDraft = "";

  let focusBack = null; // where focus goes back to once the transcript it was in is swapped
  let settingsFocus = null; // the name of the picker whose select is to have the focus when they load

  // ‹ › pressed: focus goes to the navigator of the sibling shown (the pressed button is swapped away).
  document.addEventListener("click", (ev) => {
    const sibling = ev.target.closest && ev.target.closest(".navigator button[name=to]");
    if (sibling && sibling.value) {
      focusAfterSwap = sibling.value;
      focusNavigator = sibling.classList.contains("nav-next") ? "next" : "prev";
    }
  });

  /** The focus goes to the entry ``id`` once the transcript showing it is swapped in (a key switched
   *  the branch: shortcuts.js). */
  pitree.focusAfterSwap = (id) => {
    focusAfterSwap = id;
    focusNavigator = "";
  };

  document.addEventListener("htmx:beforeSwap", (ev) => {
    if (!(ev.detail.target && ev.detail.target.id === "transcript")) return;
    keptFolds = Array.from(document.querySelectorAll("#transcript details[data-fold][open]"), (d) => d.dataset.fold);
    // What is in the box is kept: the composer emptied it when it sent, so it is what was typed since.
    const draft = document.querySelector("#composer textarea[name=text]");
    keptDraft = draft ? draft.value : "";
    // Focus inside the transcript would fall to the page's body: it goes back to the composer after a
    // send from it (the next message can be typed at once), else to the entry that was acted on. (A page
    // fetched again is morphed in: the focus stays where it is, live.js.)
    const elt = ev.detail.requestConfig && ev.detail.requestConfig.elt;
    const active = document.activeElement;
    const morphed = elt && elt.getAttribute && elt.getAttribute("hx-swap") === "morph";
    const inside = !morphed && (active === document.body || (active && active.closest && active.closest("#transcript")));
    const entry = elt && elt.closest && elt.closest("#transcript article.entry[data-entry]");
    focusBack = inside ? (entry ? entry.dataset.entry : "composer") : null;
    // A pick answers with the transcript, pickers and all: the focus goes back to the picker once they
    // have loaded again (a keyboard user goes on choosing there).
    // The picker is the request's element, or the one holding the focus: a refetch of the pickers that
    // lands before this answer has already replaced the request's element, out of the page.
    const picker = elt && elt.closest && elt.closest("#composer-settings form");
    const held = active && active.closest && active.closest("#composer-settings") ? active : null;
    const select = (picker && picker.querySelector("select")) || (held && held.name ? held : null);
    if ((inside || held) && select) {
      settingsFocus = select.name;
      focusBack = null;
    }
  });

  // The pickers are fetched again after a pick, and when another tab or pi changes what they show.
  document.addEventListener("htmx:beforeSwap", (ev) => {
    if (!ev.detail.target || ev.detail.target.id !== "composer-settings") return;
    const active = document.activeElement;
    if (active && active.name && ev.detail.target.contains(active)) settingsFocus = active.name;
  });

  document.addEventListener("htmx:afterSwap", (ev) => {
    if (!ev.detail.target || ev.detail.target.id !== "composer-settings" || !settingsFocus) return;
    const select = ev.detail.target.querySelector(`select[name="${CSS.escape(settingsFocus)}"]`);
    settingsFocus = null;
    if (select) select.focus();
  });

  // Once htmx has set up the new transcript (it does when it settles), the folds open again: their
  // "toggle" loads the folded entries afresh.
  document.addEventListener("htmx:afterSettle", () => {
    keptFolds.forEach((id) => {
      const fold = document.querySelector(`#transcript details[data-fold="${CSS.escape(id)}"]`);
      if (fold) fold.open = true;
    });
    keptFolds = [];
  });

  document.addEventListener("htmx:afterSwap", (ev) => {
    if (!ev.detail.target || ev.detail.target.id !== "transcript") return;
    const draft = document.querySelector("#composer textarea[name=text]");
    if (draft && keptDraft && !draft.value) draft.value = keptDraft;
    keptDraft = "";
    const wanted = focusAfterSwap && document.getElementById(`entry-${focusAfterSwap}`);
    const direction = focusNavigator;
    focusAfterSwap = null;
    focusNavigator = "";
    const back = focusBack;
    focusBack = null;
    if (wanted) {
      // After ‹ ›, the focus stays on the navigator (the same button, or the other at the last
      // branch), so that pressing again goes on; which branch is shown is said either way.
      const nav = (name) => wanted.querySelector(`:scope > .entry__head .nav-${name}:not(:disabled)`);
      const button = direction && (nav(direction) || nav(direction === "next" ? "prev" : "next"));
      (button || wanted).focus();
      wanted.scrollIntoView({ block: "nearest" });
      const count = wanted.querySelector(":scope > .entry__head .navigator__count");
      const [at, of] = count ? count.textContent.split("/") : [];
      if (at && of) pitree.announce(`Branch ${at} of ${of}`);
      return;
    }
    if (ev.detail.requestConfig && ev.detail.requestConfig.verb === "post") pitree.toBottom();
    if (!back) return;
    const entry = back !== "composer" && document.getElementById(`entry-${back}`);
    const text = document.querySelector("#composer textarea[name=text]");
    if (entry) {
      entry.focus({ preventScroll: true });
    } else if (text) {
      // (also when the entry acted on is on another branch now: an edit, a regeneration)
      text.focus({ preventScroll: true });
      text.setSelectionRange(text.value.length, text.value.length);
    }
  });

  // ---- a reply waiting for its model server (the server says so, and pushes the time again every few
  // seconds): the seconds count on in between ----
  setInterval(() => {
    document.querySelectorAll("#entries [data-waited]").forEach((el) => {
      if (!el.dataset.since) el.dataset.since = String(Date.now() - Number(el.dataset.waited) * 1000);
      el.textContent = String(Math.floor((Date.now() - Number(el.dataset.since)) / 1000));
    });
  }, 1000);

  // ---- "Compact history…" opens below the entries, where the composer (sticky at the window's foot)
  // covers it: the opened form is brought up into view and its first field takes the focus, so the
  // click visibly does something. ("toggle" does not bubble: heard while it goes down.)
  document.addEventListener(
    "toggle",
    (ev) => {
      const fold = ev.target;
      if (!(fold instanceof HTMLDetailsElement) || !fold.open || !fold.matches(".compact-all")) return;
      fold.querySelector("form").scrollIntoView({ block: "center" });
      fold.querySelector("select, input:not([type=hidden])").focus({ preventScroll: true });
    },
    true,
  );

  // ---- older entries load above what the reader sees: the entry at the top of the view stays put ----
  // Scrolled to the very top, the browser's own scroll anchoring does nothing, so the page that came
  // would push the view to its own top and reveal the next "older" row at once: page after page would
  // load until the first message. The entry in view keeps its place on screen instead.
  let olderAnchor = null;

  document.addEventListener("htmx:beforeSwap", (ev) => {
    const target = ev.detail.target;
    if (!target || !target.classList || !target.classList.contains("older")) return;
    const shown = document.querySelectorAll("#transcript article.entry[data-entry]");
    const anchor = Array.from(shown).find((el) => el.getBoundingClientRect().bottom > 0) || target.nextElementSibling;
    olderAnchor = anchor && { xhr: ev.detail.xhr, el: anchor, top: anchor.getBoundingClientRect().top };
  });

  document.addEventListener("htmx:afterSwap", (ev) => {
    if (!olderAnchor || olderAnchor.xhr !== ev.detail.xhr) return;
    const { el, top } = olderAnchor;
    olderAnchor = null;
    if (el.isConnected) window.scrollBy(0, el.getBoundingClientRect().top - top);
  });
})();
