// The comparison page: the branch columns scroll in step, at most four branches can be picked, a label
// saved from a column's head reloads the page (which then shows it), and the columns are fetched again
// when a compared file grows. No inline script: the CSP allows only the app's own files.
(function () {
  "use strict";

  // ---- synced scroll ---------------------------------------------------------------------------
  // The pane being scrolled leads; every other pane shows the same turn at its top, as far through
  // that turn as the leader is through its own, so turns start together however long each is.
  function syncPanes() {
    const panes = Array.from(document.querySelectorAll(".compare__pane"));
    if (panes.length < 2) return;
    let leader = null;
    let queued = false;

    function follow() {
      queued = false;
      const rows = leader.querySelectorAll(":scope > .compare__row");
      const top = leader.scrollTop;
      let current = rows[0];
      for (const row of rows) {
        if (row.offsetTop <= top + 1) current = row;
        else break;
      }
      if (!current) return;
      const through = Math.min(1, Math.max(0, (top - current.offsetTop) / Math.max(1, current.offsetHeight)));
      for (const pane of panes) {
        if (pane === leader) continue;
        const twin = pane.querySelector(`:scope > .compare__row[data-row="${current.dataset.row}"]`);
        if (twin) pane.scrollTop = twin.offsetTop + through * twin.offsetHeight;
      }
    }

    for (const pane of panes) {
      const lead = () => (leader = pane);
      for (const name of ["pointerenter", "pointerdown", "wheel", "touchstart", "focusin", "keydown"]) {
        pane.addEventListener(name, lead, { passive: true });
      }
      pane.addEventListener(
        "scroll",
        () => {
          if (leader === null) leader = pane;
          if (pane !== leader || queued) return;
          queued = true;
          requestAnimationFrame(follow);
        },
        { passive: true },
      );
    }
  }

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
  // follow.js says when a compared session's file grew: the page is fetched again and its columns
  // (and the branch choice) replaced, each pane kept where it was scrolled to.
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
    const scrolled = Array.from(document.querySelectorAll(".compare__pane"), (pane) => pane.scrollTop);
    replace(".compare", page);
    replace(".compare-pick", page);
    document.querySelectorAll(".compare__pane").forEach((pane, i) => {
      if (scrolled[i] !== undefined) pane.scrollTop = scrolled[i];
    });
    start();
    refreshes += 1;
    document.querySelector(".compare").dataset.refreshed = String(refreshes);
  }

  document.addEventListener("pitree:grew", refresh);

  function start() {
    syncPanes();
    document.querySelectorAll("form[data-pick-limit]").forEach(limitPicks);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
