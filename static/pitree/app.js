// pitree's little JavaScript: what htmx cannot do on its own.
// - keyboard: j/k move along the path, [ / ] (or h/l) switch to the previous/next sibling branch;
// - a reply in progress: a placeholder the websocket streams text into until the POST returns;
// - Stop: a button that names the reply this tab is waiting for;
(function () {
  "use strict";

  const pitree = (window.pitree = {
    /** The entry the tab stands on (its leaf); "" before the first entry. */
    position() {
      const transcript = document.getElementById("transcript");
      return transcript ? transcript.dataset.position || "" : "";
    },
  });

  // Forms outside the transcript (rename) were rendered for the position the page opened at, and an
  // entry's menu is fetched long after: every request naming a position names the one the tab stands
  // on now. (htmx's parameters are a FormData proxy: `in` does not see its keys.)
  document.addEventListener("htmx:configRequest", (ev) => {
    if (ev.detail.parameters.at !== undefined && document.getElementById("transcript")) {
      ev.detail.parameters.at = pitree.position();
    }
  });

  // After a move, the tree panel is fetched again for the new position, with the filter it shows.
  document.body.addEventListener("pitree:moved", () => {
    const panel = document.getElementById("tree-panel");
    if (panel && panel.dataset.refresh && window.htmx) {
      const url = new URL(panel.dataset.refresh, window.location.href);
      url.searchParams.set("at", pitree.position());
      htmx.ajax("GET", url.pathname + url.search, { target: "#tree-panel", swap: "outerHTML" });
    }
  });

  document.addEventListener("click", (ev) => {
    const dismiss = ev.target.closest && ev.target.closest("[data-dismiss]");
    if (dismiss) dismiss.parentElement.remove();
  });

  // ---- a reply in progress -------------------------------------------------------------------
  function newToken() {
    const bytes = new Uint8Array(9);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function article(kind, title) {
    const el = document.createElement("article");
    el.className = `entry entry--${kind} is-pending`;
    const head = document.createElement("header");
    head.className = "entry__head";
    const role = document.createElement("span");
    role.className = "entry__role";
    role.textContent = title;
    head.append(role);
    el.append(head);
    return el;
  }

  function showPending(form, token) {
    const entries = document.getElementById("entries");
    if (!entries) return;
    // Entries an edit or a regeneration replaces are only hidden until the answer comes: a refused
    // request brings them back (and the form that sent it must stay in the page for htmx).
    const from = form.dataset.replaceFrom;
    let cut = from ? document.getElementById(`entry-${from}`) : null;
    while (cut) {
      if (!cut.hidden) {
        cut.hidden = true;
        cut.dataset.hiddenFor = token;
      }
      cut = cut.nextElementSibling;
    }
    const text = form.querySelector("textarea[name=text]");
    if (text) {
      const user = article("user", "You");
      user.dataset.pendingFor = token;
      const body = document.createElement("div");
      body.className = "plain";
      body.textContent = text.value;
      user.append(body);
      entries.append(user);
    }
    const reply = article("assistant", "Assistant · writing…");
    reply.dataset.pendingFor = token;
    const stream = document.createElement("div");
    stream.className = "plain stream";
    stream.id = `stream-${token}`;
    reply.append(stream);
    entries.append(reply);
    reply.scrollIntoView({ block: "end" });
  }

  function undoPending(form, token) {
    document.querySelectorAll(`[data-pending-for="${token}"]`).forEach((el) => el.remove());
    document.querySelectorAll(`[data-hidden-for="${token}"]`).forEach((el) => {
      el.hidden = false;
      delete el.dataset.hiddenFor;
    });
    form.querySelectorAll("button, textarea").forEach((el) => (el.disabled = false));
  }

  document.addEventListener("htmx:configRequest", (ev) => {
    const form = ev.detail.elt.closest && ev.detail.elt.closest("form[data-stream]");
    if (!form || ev.detail.verb !== "post") return;
    const token = newToken();
    ev.detail.parameters.stream = token;
    form.dataset.pending = token;
  });

  document.addEventListener("htmx:beforeRequest", (ev) => {
    const form = ev.detail.elt.closest && ev.detail.elt.closest("form[data-stream]");
    if (form && form.dataset.pending) {
      showPending(form, form.dataset.pending);
      form.querySelectorAll("button, textarea").forEach((el) => (el.disabled = true));
    }
  });

  document.addEventListener("htmx:afterRequest", (ev) => {
    const form = ev.detail.elt.closest && ev.detail.elt.closest("form[data-stream]");
    if (!form || !form.dataset.pending) return;
    const token = form.dataset.pending;
    delete form.dataset.pending;
    // 409/422 answers are swapped (they carry the reason), so htmx calls them successful: check the status.
    const refused = !ev.detail.successful || (ev.detail.xhr && ev.detail.xhr.status >= 400);
    if (refused) undoPending(form, token);
  });

  // ---- Stop (the assistant work's section) -------------------------------------------------------
  // While a form of this tab streams a reply, #stop-reply names that reply (the form's stream token is
  // its id) and shows. Stopping stores the text so far; it arrives with the answer to the pending POST,
  // which also re-renders the composer with the Stop form hidden again.
  document.addEventListener("htmx:beforeRequest", (ev) => {
    const form = ev.detail.elt.closest && ev.detail.elt.closest("form[data-stream]");
    const stop = document.getElementById("stop-reply");
    if (!form || !form.dataset.pending || !stop) return;
    stop.elements.reply.value = form.dataset.pending;
    stop.hidden = false;
  });

  document.addEventListener("htmx:afterRequest", (ev) => {
    const form = ev.detail.elt.closest && ev.detail.elt.closest("form[data-stream]");
    const stop = document.getElementById("stop-reply");
    if (form && stop) stop.hidden = true;
  });

  // ---- after the transcript changed: keep focus where the reader was --------------------------
  let focusAfterSwap = null;

  document.addEventListener("htmx:afterSwap", (ev) => {
    if (!(ev.detail.target && ev.detail.target.id === "transcript") && !document.getElementById("transcript").contains(ev.detail.elt)) return;
    const wanted = focusAfterSwap && document.getElementById(`entry-${focusAfterSwap}`);
    focusAfterSwap = null;
    if (wanted) {
      wanted.focus();
      wanted.scrollIntoView({ block: "nearest" });
    } else if (ev.detail.requestConfig && ev.detail.requestConfig.verb === "post") {
      const composer = document.getElementById("composer");
      if (composer) composer.scrollIntoView({ block: "end" });
    }
  });

  // ---- keyboard ---------------------------------------------------------------------------------
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
    focusAfterSwap = button.value;
    button.click();
  }

  document.addEventListener("keydown", (ev) => {
    const target = ev.target;
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && target.matches && target.matches("form textarea")) {
      ev.preventDefault();
      target.form.requestSubmit();
      return;
    }
    if (isTyping(target) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
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
