// The comparison page: long messages fold to a few lines ("Show all"), at most four branches can be
// picked, a label saved from a column's head is posted from the page (which then fetches its grid to
// show it, the focus kept where it was), and the grid is fetched again when a compared file grows.
// The columns need no script to stay in step: they are one grid, which scrolls as one. No inline
// script: the CSP allows only the app's own files.
(function () {
  "use strict";

  // ---- long messages ---------------------------------------------------------------------------
  // The server marks them (a capped height that scrolls, which is how they read without a script);
  // here they are cut off instead, with a button to show them whole.
  function setFold(button, open) {
    window.pitree.showWhole(button.previousElementSibling, button, open);
  }

  function foldLong(root, open) {
    for (const button of root.querySelectorAll("[data-show-all]")) {
      const clip = button.previousElementSibling;
      const entry = button.closest("[data-entry]");
      clip.removeAttribute("tabindex"); // no longer a scrolling region of its own
      clip.removeAttribute("role");
      clip.removeAttribute("aria-label");
      setFold(button, Boolean(entry && open.has(entry.dataset.entry)));
      button.hidden = false;
    }
  }

  function openEntries() {
    return new Set(
      Array.from(document.querySelectorAll("[data-show-all][aria-expanded=true]"), (b) => b.closest("[data-entry]")?.dataset.entry),
    );
  }

  document.addEventListener("click", (ev) => {
    const button = ev.target.closest && ev.target.closest("[data-show-all]");
    if (button) setFold(button, button.getAttribute("aria-expanded") !== "true");
  });

  // ---- picking branches --------------------------------------------------------------------------
  function limitPicks(form) {
    const limit = Number(form.dataset.pickLimit) || 4;
    const boxes = Array.from(form.querySelectorAll("input[type=checkbox]"));
    const submit = form.querySelector("button[type=submit]");
    function update() {
      const picked = boxes.filter((box) => box.checked).length;
      for (const box of boxes) box.disabled = !box.checked && picked >= limit;
      if (submit) submit.disabled = picked < 2;
    }
    form.addEventListener("change", update);
    update();
  }

  // ---- labels ---------------------------------------------------------------------------------
  // The label view answers a plain post with a redirect to the session: posted from here, the page
  // stays and fetches its grid again (refresh), and the focus stays in the label's field, so that a
  // keyboard or screen-reader user keeps their place; the live region says it was saved. A refusal
  // shows its reason where the user acted, the text still in the field.
  function flash(messages) {
    const box = document.getElementById("flash");
    if (!box) return;
    const wrap = document.createElement("div");
    wrap.className = "flash flash--error";
    wrap.setAttribute("role", "alert");
    for (const text of messages) {
      const p = document.createElement("p");
      p.textContent = text;
      wrap.append(p);
    }
    box.replaceChildren(wrap);
  }


  async function postLabel(form) {
    const button = form.querySelector("button");
    const field = form.querySelector("input[name=label]");
    const column = form.closest(".compare__head").dataset.column;
    field.focus(); // not on the button, which is disabled meanwhile (a disabled button drops the focus)
    if (button) button.disabled = true;
    try {
      const response = await fetch(form.action, { method: "POST", body: new FormData(form), credentials: "same-origin" });
      // Saved, the label view redirects to the session; a redirect that ends elsewhere (the sign-in
      // page: the reader was signed out meanwhile) saved nothing.
      const session = new URL(form.action, location.href).pathname.replace(/label\/$/, "");
      const landed = new URL(response.url).pathname.startsWith(session);
      if (response.status === 200 && !landed) {
        flash(["The label was not saved: you are signed out. Sign in again (in another tab), then save it."]);
        return;
      }
      if (response.status === 200) {
        const text = field.value.trim();
        field.value = ""; // saved: the head shows it once the grid is fetched again
        document.getElementById("flash")?.replaceChildren();
        window.pitree.announce(text ? `Branch ${column} is labelled “${text}”.` : `The label of branch ${column} is cleared.`);
        refresh(); // saved whether or not this fetch succeeds: it is no refusal to report
        return;
      }
      const page = new DOMParser().parseFromString(await response.text(), "text/html");
      const reasons = Array.from(page.querySelectorAll(".error-text"), (el) => el.textContent);
      flash(reasons.length ? reasons : [`The label was not saved (${response.status}).`]);
    } catch (error) {
      flash([`The label was not saved: ${error}`]);
    } finally {
      if (button) button.disabled = false;
    }
  }

  // The word diff compares two different branches: the same one picked twice is said here, where it
  // was picked, rather than on a page that can only refuse it.
  document.addEventListener("submit", (ev) => {
    const form = ev.target.closest && ev.target.closest(".compare-modes__diff");
    if (!form) return;
    const [left, right] = form.querySelectorAll("select[name=diff]");
    if (!left || !right || left.value !== right.value) return;
    ev.preventDefault();
    flash([`Pick two different branches for the word diff (branch ${left.value} is picked twice).`]);
    right.focus();
  });

  document.addEventListener("submit", (ev) => {
    const form = ev.target.closest && ev.target.closest("form[data-label]");
    if (!form) return;
    ev.preventDefault();
    postLabel(form);
  });

  // ---- live -------------------------------------------------------------------------------------
  // The follow socket says when a compared session's file grew ("pitree:grew", live.js): the page is
  // fetched again and its grid (and the branch choice) replaced, scrolled where it was, with the
  // messages and folds opened still open, and the focus back on the same element of the new grid (see
  // focusKey). The trunk stays (pages of it may have been loaded), but its entries shown again may
  // carry a new label: a column that adds nothing to the trunk labels its end, which the trunk's
  // entries show.
  let refreshes = 0;
  const FOCUSABLE = "a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]:not([tabindex='-1'])";
  // Parts of the replaced page that stay when it is fetched again, each found by a selector: an entry
  // (it never changes), a column's head, title or cell, the branch picker, the grid's region.
  const PARTS = "[data-entry], .compare__head, .compare__col-title, .compare__cell, .compare-pick, .compare__scroll";

  /** The selector that finds ``part`` (one of PARTS) again in the fresh page. */
  function partSelector(part) {
    if (part.matches("[data-entry]")) {
      const cell = part.closest(".compare__cell");
      const around = cell ? `.compare__cell[data-column="${cell.dataset.column}"]` : ".compare-trunk";
      return `${around} [data-entry="${CSS.escape(part.dataset.entry)}"]`;
    }
    if (part.matches(".compare__cell")) {
      const kind = Array.from(part.classList).find((name) => name.startsWith("compare__cell--") && name !== "compare__cell--folded");
      const row = part.dataset.row === undefined ? "" : `[data-row="${part.dataset.row}"]`;
      return `.${kind}[data-column="${part.dataset.column}"]${row}`;
    }
    const column = part.dataset.column === undefined ? "" : `[data-column="${part.dataset.column}"]`;
    return `.${part.classList[0]}${column}`;
  }

  // A control of a head or of the picker is found again by what it is (its field's name and value, its
  // form, its link), not by its place: a head may hold one more or one fewer control before it (a
  // "+N more" of labels), the picker one more branch. What is inside an entry, a title or a cell never
  // moves there: it is found by its place among their focusable elements.
  function controlKey(el) {
    if (el.matches("input[type=checkbox], input[type=radio]")) return `input[name="${CSS.escape(el.name)}"][value="${CSS.escape(el.value)}"]`;
    if (el.matches("input, select, textarea")) return `${el.localName}[name="${CSS.escape(el.name)}"]`;
    const form = el.closest("form");
    if (form) return `form[action="${CSS.escape(form.getAttribute("action") || "")}"] ${el.localName}`;
    if (el.matches("a[href]")) return `a[href="${CSS.escape(el.getAttribute("href"))}"]`;
    return el.localName;
  }

  // The elements of ``part`` that match ``selector``, in order. A large block's fold is filled when
  // opened, and comes again empty: what it was filled with is not counted.
  function placed(part, selector) {
    return Array.from(part.querySelectorAll(selector)).filter((el) => !el.closest(".fold__body"));
  }

  /** Where ``el`` is, as {part, control, nth}: found again by ``findKey`` (null: not in a replaced part). */
  function keyOf(el, selector) {
    const part = el && el.closest && el.closest(PARTS);
    if (!part || !part.closest(".compare, .compare-pick, .compare-trunk")) return null;
    const key = { part: partSelector(part), control: null, nth: 0 };
    if (el === part) return key;
    if (part.matches(".compare__head, .compare-pick")) key.control = controlKey(el);
    else {
      key.control = selector;
      key.nth = placed(part, selector).indexOf(el);
    }
    return key;
  }

  function findKey(key) {
    const part = key && document.querySelector(key.part);
    if (!part || !key.control) return part;
    return placed(part, key.control)[key.nth] || null;
  }

  /** Where the focus is in the parts replaced (null: elsewhere), and what its field holds. The focus in
   * what a large block's fold was filled with comes back to the fold's summary. */
  function focusKey() {
    const active = document.activeElement;
    const body = active && active.closest && active.closest(".fold__body");
    const focused = body ? body.parentElement.querySelector(":scope > summary") : active;
    const key = keyOf(focused, FOCUSABLE);
    if (!key) return null;
    key.typed = focused.matches("input[type=text]") ? [focused.value, focused.selectionStart, focused.selectionEnd] : null;
    return key;
  }

  function restoreFocus(saved) {
    const control = findKey(saved);
    if (!control) return;
    control.focus({ preventScroll: true });
    if (saved.typed && control.matches("input[type=text]")) {
      const [value, start, end] = saved.typed; // typed while the page was fetched
      control.value = value;
      control.setSelectionRange(start, end);
    }
  }

  /** The folds opened in the grid (a tool call, thinking, "+N more"): an element inside one is only
   * focusable while it is open. */
  function openFolds() {
    const open = document.querySelectorAll(".compare details[open], .compare-trunk [data-entry] details[open]");
    return Array.from(open, (fold) => keyOf(fold, "details"));
  }

  /** The long code blocks shown whole ("Show all N lines"): they come again folded. */
  function wholeCode() {
    return Array.from(document.querySelectorAll(".compare .code.is-open, .compare-trunk .code.is-open"), (code) => keyOf(code, ".code"));
  }

  function reopen(folds, codes) {
    for (const fold of folds.map(findKey)) if (fold) fold.open = true;
    for (const code of codes.map(findKey)) if (code) window.pitree.showWhole(code, code.querySelector("[data-expand-code]"), true);
  }

  // What is put in the page's place is handed to htmx: its large blocks load when opened.
  function swapIn(current, fresh) {
    current.replaceWith(fresh);
    htmx.process(fresh);
  }

  function replace(selector, page) {
    const current = document.querySelector(selector);
    const fresh = page.querySelector(selector);
    if (!current || !fresh) return;
    if (current.tagName === "DETAILS") fresh.open = current.open;
    swapIn(current, fresh);
  }

  function replaceTrunkEntries(page) {
    for (const fresh of page.querySelectorAll(".compare-trunk [data-entry]")) {
      const current = document.querySelector(`.compare-trunk [data-entry="${CSS.escape(fresh.dataset.entry)}"]`);
      if (current) swapIn(current, fresh);
    }
  }

  async function refresh() {
    const typing = document.activeElement;
    if (typing && typing.matches("input[type=text]") && typing.value && typing.closest(".compare")) {
      typing.addEventListener("blur", refresh, { once: true }); // never throw away a label being written
      return;
    }
    let response;
    try {
      response = await fetch(window.location.href, { credentials: "same-origin" });
    } catch (error) {
      return; // the server could not be reached: the next change fetches the grid again
    }
    if (!response.ok) return;
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const scroller = document.querySelector(".compare__scroll");
    const [top, left] = scroller ? [scroller.scrollTop, scroller.scrollLeft] : [0, 0];
    const open = openEntries();
    const folds = openFolds();
    const codes = wholeCode();
    const focus = focusKey();
    replace(".compare", page);
    replace(".compare-pick", page);
    replaceTrunkEntries(page);
    const fresh = document.querySelector(".compare__scroll");
    if (fresh) {
      fresh.scrollTop = top;
      fresh.scrollLeft = left;
    }
    foldLong(document, open); // before the focus: folding changes what can have it
    reopen(folds, codes);
    document.querySelectorAll("form[data-pick-limit]").forEach(limitPicks);
    restoreFocus(focus);
    refreshes += 1;
    document.querySelector(".compare").dataset.refreshed = String(refreshes);
  }

  document.addEventListener("pitree:grew", refresh);

  // The trunk's earlier pages arrive through htmx: their long messages fold too.
  document.addEventListener("htmx:afterSettle", () => foldLong(document, openEntries()));

  function start() {
    foldLong(document, new Set());
    document.querySelectorAll("form[data-pick-limit]").forEach(limitPicks);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
