// Each message's panel: the form one of its tools (Edit, Label, Fork…) loads below it, one at a time;
// what was typed in a panel closed is there again when it opens.
(function () {
  "use strict";

  function panelOf(el) {
    const entry = el.closest("article.entry");
    return entry && entry.querySelector(":scope > .entry__panel");
  }

  // What the reader typed in a panel they closed (Escape, Cancel, its button again), by entry and
  // action: the panel is fetched afresh when opened again, and shows it instead of the stored text.
  // Only a send that goes through leaves it behind (its panel is gone with the transcript it swaps).
  const panelTyping = new Map();

  function typingKey(panel) {
    const entry = panel.closest("article.entry");
    return entry ? `${entry.dataset.entry}\n${panel.dataset.action}` : "";
  }

  function keepPanelTyping(panel) {
    const changed = Array.from(panel.querySelectorAll("textarea[name], input[type=text][name]")).filter(
      (field) => field.value !== field.defaultValue,
    );
    if (changed.length) panelTyping.set(typingKey(panel), changed.map((field) => [field.name, field.value]));
  }

  /** Put back what was typed in this panel before it was closed; whether there was any. */
  function restorePanelTyping(panel) {
    const kept = panelTyping.get(typingKey(panel));
    panelTyping.delete(typingKey(panel));
    (kept || []).forEach(([name, value]) => {
      const field = panel.querySelector(`[name="${CSS.escape(name)}"]`);
      if (field) field.value = value;
    });
    return Boolean(kept);
  }

  function closePanel(panel, focusTool) {
    const entry = panel.closest("article.entry");
    const tool = entry && entry.querySelector(`:scope > .entry__tools [data-panel="${panel.dataset.action}"]`);
    keepPanelTyping(panel);
    panel.hidden = true;
    panel.replaceChildren();
    delete panel.dataset.action;
    if (entry) entry.querySelectorAll(":scope > .entry__tools [data-panel]").forEach((t) => t.setAttribute("aria-expanded", "false"));
    if (focusTool && tool) tool.focus();
  }

  // Capture phase, before htmx fetches a panel: the last of an entry's tools pressed wins. A form still
  // on its way for another tool is dropped (it arrived later and replaced the one asked for last), and a
  // second press on the button of the open panel closes it, unless it only called off such a form.
  document.addEventListener(
    "click",
    (ev) => {
      const tool = ev.target.closest && ev.target.closest(".entry__tools [data-panel]");
      const panel = tool && panelOf(tool);
      if (!panel) return;
      const pending = panel.dataset.asked;
      if (pending) tool.parentElement.querySelectorAll("[data-panel]").forEach((t) => htmx.trigger(t, "htmx:abort"));
      if (!panel.hidden && panel.dataset.action === tool.dataset.panel) {
        ev.preventDefault();
        ev.stopImmediatePropagation();
        if (!pending) closePanel(panel, true);
        return;
      }
      panel.dataset.asked = tool.dataset.panel;
    },
    true,
  );

  document.addEventListener("htmx:afterRequest", (ev) => {
    const panel = ev.detail.elt && ev.detail.elt.dataset && ev.detail.elt.dataset.panel && panelOf(ev.detail.elt);
    if (panel && panel.dataset.asked === ev.detail.elt.dataset.panel) delete panel.dataset.asked;
  });

  document.addEventListener("click", (ev) => {
    const close = ev.target.closest && ev.target.closest("[data-close-panel]");
    const panel = close && close.closest(".entry__panel");
    if (panel) closePanel(panel, true);
  });

  document.addEventListener("keydown", (ev) => {
    const panel = ev.key === "Escape" && ev.target.closest && ev.target.closest(".entry__panel");
    if (panel && panel.querySelector("[data-close-panel]")) closePanel(panel, true); // focus goes back to the tool that opened it
  });

  // Another of the entry's tools asked for its panel in place of the open one: what was typed there is
  // kept as if it had been closed.
  document.addEventListener("htmx:beforeSwap", (ev) => {
    const panel = ev.detail.target;
    if (panel && panel.classList && panel.classList.contains("entry__panel") && !panel.hidden) keepPanelTyping(panel);
  });

  // A panel's form arrived: show it next to the button that asked, and put the cursor in it.
  document.addEventListener("htmx:afterSwap", (ev) => {
    const panel = ev.detail.target;
    if (!panel || !panel.classList || !panel.classList.contains("entry__panel")) return;
    const tool = ev.detail.requestConfig && ev.detail.requestConfig.elt;
    panel.hidden = false;
    panel.dataset.action = tool ? tool.dataset.panel : "";
    const entry = panel.closest("article.entry");
    entry.querySelectorAll(":scope > .entry__tools [data-panel]").forEach((t) => t.setAttribute("aria-expanded", String(t === tool)));
    const typed = restorePanelTyping(panel);
    const field = panel.querySelector("textarea, input[type=text], button[type=submit]");
    if (field) {
      field.focus();
      // A message to edit is edited, the caret at its end (selected, the first key pressed replaced it
      // whole); a label or a name is selected, to be typed over; what the reader typed before goes on
      // at its end.
      if (field.tagName === "TEXTAREA" || (typed && field.tagName !== "BUTTON")) field.setSelectionRange(field.value.length, field.value.length);
      else if (field.select && field.tagName !== "BUTTON") field.select();
    }
  });
})();
