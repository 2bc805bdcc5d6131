// The comparison page: long messages fold to a few lines ("Show all"), at most four branches can be
// picked, a label saved from a column's head reloads the page (which then shows it), and the grid is
// fetched again when a compared file grows. The columns need no script to stay in step: they are one
// grid, which scrolls as one. No inline script: the CSP allows only the app's own files.
(function () {
  "use strict";

  // ---- long messages ---------------------------------------------------------------------------
  // The server marks them (a capped height that scrolls, which is how they read without a script);
  // here they are cut off instead, with a button to show them whole.
  function setFold(button, open) {
    button.previousElementSibling.dataset.fold = open ? "open" : "closed";
    button.setAttribute("aria-expanded", String(open));
    button.textContent = open ? "Fold" : "Show all";
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
  // stays and reloads instead. A refusal shows its reason where the user acted.
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
    if (button) button.disabled = true;
    try {
      const response = await fetch(form.action, { method: "POST", body: new FormData(form), credentials: "same-origin" });
      if (response.ok) {
        window.location.reload();
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

  document.addEventListener("submit", (ev) => {
    const form = ev.target.closest && ev.target.closest("form[data-reload]");
    if (!form) return;
    ev.preventDefault();
    postLabel(form);
  });

  // ---- live -------------------------------------------------------------------------------------
  // follow.js says when a compared session's file grew: the page is fetched again and its grid (and
  // the branch choice) replaced, scrolled where it was, with the messages opened still open.
  let refreshes = 0;

  function replace(selector, page) {
    const current = document.querySelector(selector);
    const fresh = page.querySelector(selector);
    if (!current || !fresh) return;
    if (current.tagName === "DETAILS") fresh.open = current.open;
    current.replaceWith(fresh);
  }

  async function refresh() {
    const typing = document.activeElement;
    if (typing && typing.matches("input[type=text]") && typing.value && typing.closest(".compare")) {
      typing.addEventListener("blur", refresh, { once: true }); // never throw away a label being written
      return;
    }
    const response = await fetch(window.location.href, { credentials: "same-origin" });
    if (!response.ok) return;
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const scroller = document.querySelector(".compare__scroll");
    const [top, left] = scroller ? [scroller.scrollTop, scroller.scrollLeft] : [0, 0];
    const open = openEntries();
    replace(".compare", page);
    replace(".compare-pick", page);
    const fresh = document.querySelector(".compare__scroll");
    if (fresh) {
      fresh.scrollTop = top;
      fresh.scrollLeft = left;
    }
    foldLong(document.querySelector(".compare"), open);
    document.querySelectorAll("form[data-pick-limit]").forEach(limitPicks);
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
