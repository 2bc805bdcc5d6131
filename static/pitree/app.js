// pitree's shared JavaScript, loaded first on every page: the `pitree` namespace the other scripts use
// (where the tab stands, saying something to the reader, the browser's storage, a folded part shown
// whole), and what every page's requests share: a form names the position the server keeps for the
// tab, a refusal is said next to the form that was sent, an answer that never came is said, and htmx's
// history cache stays within budget. Each other script has one job (docs/architecture.md lists them).
(function () {
  "use strict";

  const REFUSED = new Set([400, 403, 409, 413, 422, 429]); // answers that say why (the page's htmx config swaps them)

  const pitree = (window.pitree = {
    /** The entry the tab stands on, as the server keeps it for the tab; "" before the first entry. */
    position() {
      const state = document.getElementById("tab-state");
      return state ? state.dataset.position || "" : "";
    },
    composerBox: () => document.getElementById("composer-text"),
    toBottom: () => window.scrollTo({ top: document.documentElement.scrollHeight }),
    flash,
    unflash,
    announce,
    replyEnded,
    showWhole,
    store,
    stored,
    // Added by the script that owns each: reconnectDelay (live.js); saveDraft, draftSent (drafts.js);
    // askedReply, heard, saidTaken (sending.js); focusAfterSwap (transcript.js); refreshTree
    // (tree-panel.js); refreshSidebar (sidebar.js).
  });

  const endedReplies = new Set(); // replies whose end was announced, by id

  /** Tell a screen reader, once, that the reply ``id`` (one this tab showed, or asked for) ended. */
  function replyEnded(id, stored) {
    if (endedReplies.has(id)) return;
    endedReplies.add(id);
    announce(stored ? "The reply has ended." : "The reply could not be stored.");
  }

  /** Show a folded part whole (``open``: a long code block, a long message here or in a comparison)
   *  or folded again, its ``button`` saying which: "Fold", or the label it came with ("Show all"). */
  function showWhole(clip, button, open) {
    clip.classList.toggle("is-open", open);
    if (!button) return;
    if (!button.dataset.label) button.dataset.label = button.textContent;
    button.setAttribute("aria-expanded", String(open));
    button.textContent = open ? "Fold" : button.dataset.label;
  }

  /** Say ``text`` to a screen reader (the page's polite live region, #announce). */
  function announce(text) {
    const box = document.getElementById("announce");
    if (!box) return;
    box.textContent = "";
    setTimeout(() => (box.textContent = text), 50); // a change even when it says the same as last time
  }

  /** Say ``text`` next to the composer (#flash), in place of what was said there before. ``until``
   *  names the condition whose end makes it untrue (see ``unflash``). */
  function flash(text, until) {
    const box = document.getElementById("flash");
    if (!box) return;
    const note = document.createElement("div");
    note.className = "flash";
    note.setAttribute("role", "status");
    note.textContent = text;
    if (until) note.dataset.until = until;
    box.replaceChildren(note);
  }

  /** Take away what #flash says while ``condition`` held, now that it has ended (other notes stay). */
  function unflash(condition) {
    document.querySelectorAll(`#flash > [data-until="${condition}"]`).forEach((note) => note.remove());
  }

  // Answers htmx does not swap (the page's htmx config): a 404 says the session or entry is not there
  // for this reader any more (deleted, or their access ended: a 404 either way, so that a stranger

  // learns nothing), a server error says so; without this, the press would seem to do nothing.
  document.addEventListener("htmx:responseError", (ev) => {
    if (pitree.saidTaken && pitree.saidTaken(ev.detail)) return; // sending.js: the server had taken it
    const status = ev.detail.xhr ? ev.detail.xhr.status : 0;
    flash(
      status === 404
        ? "This session or entry is not available to you any more (it was deleted, or your access to it ended). Nothing was written."
        : `The server could not answer (HTTP ${status}). Try again.`,
    );
  });

  // A request that reached no server (offline, the server down), made by the reader (a click, a send,
  // a key): said next to the composer; nothing was written, and a message sent is back in its box.
  // The page's own refreshes (on load, on scroll, htmx.ajax) say nothing: the live badge tells of the
  // connection.
  const BACKGROUND = new Set(["load", "intersect", "revealed", "mouseenter"]); // mouseenter: an author's name, fetched on hover
  document.addEventListener("htmx:sendError", (ev) => {
    const cause = ev.detail.requestConfig && ev.detail.requestConfig.triggeringEvent;
    if (!cause || BACKGROUND.has(cause.type)) return;
    if (pitree.saidTaken && pitree.saidTaken(ev.detail)) return; // sending.js: the server had taken it
    flash("The server could not be reached (offline, or the server is down). Nothing was written; try again.", "unreachable");
  });

  // The network is back, or a socket reached the server again: "could not be reached" is no longer true.
  window.addEventListener("online", () => unflash("unreachable"));
  document.addEventListener("htmx:wsOpen", () => unflash("unreachable"));

  function store(key, value) {
    try {
      if (value === null) localStorage.removeItem(key);
      else localStorage.setItem(key, value);
    } catch (error) {
      // Storage refused: the choice holds for this page only.
    }
  }

  function stored(key) {
    try {
      return localStorage.getItem(key);
    } catch (error) {
      return null; // storage refused: nothing kept
    }
  }

  // ---- requests: the tab's position, and where a refusal is said ---------------------------------
  // Forms were rendered for the position their page or push had, and an entry's panel is fetched long
  // after: every request naming a position names the one the server keeps for the tab now. A write
  // names the cursor of its page too, and the reply being written there: the server puts the write
  // where the tab stands as of then (after what it was about to be shown), and below that reply, never
  // beside it. (htmx's parameters are a FormData proxy: `in` does not see its keys.)
  document.addEventListener("htmx:configRequest", (ev) => {
    const parameters = ev.detail.parameters;
    if (parameters.at === undefined || !document.getElementById("tab-state")) return;
    parameters.at = pitree.position();
    if (ev.detail.verb !== "post") return;
    parameters.cursor = document.getElementById("tab-state").dataset.cursor || "0";
    const reply = document.querySelector(`#entries > [data-reply][data-parent="${CSS.escape(pitree.position())}"]`);
    if (reply) parameters.reply = reply.dataset.reply;
  });

  // A refused request (the answer says why) is shown next to the form that was sent when that form has
  // room for it, else in #flash, next to the composer; the next answer that goes through clears it.
  document.addEventListener("htmx:beforeSwap", (ev) => {
    const xhr = ev.detail.xhr;
    if (!xhr || !REFUSED.has(xhr.status)) return;
    const elt = ev.detail.requestConfig && ev.detail.requestConfig.elt;
    const form = elt && elt.closest && elt.closest("form");
    const box = form && form.querySelector(":scope .form-errors");
    if (box) ev.detail.target = box;
  });

  // What a refusal said is out of date once the reader sends again ("Write a message first." stayed
  // red the whole time the next message's reply was written): it goes as the request goes.
  document.addEventListener("htmx:beforeRequest", (ev) => {
    const config = ev.detail.requestConfig;
    if (!config || config.verb !== "post" || !config.triggeringEvent) return;
    const form = ev.detail.elt.closest && ev.detail.elt.closest("form");
    const box = form && form.querySelector(":scope .form-errors");
    if (box) box.replaceChildren();
    document.querySelectorAll("#flash > :not([data-until])").forEach((note) => note.remove());
  });

  document.addEventListener("htmx:afterRequest", (ev) => {
    const xhr = ev.detail.xhr;
    if (!xhr || xhr.status >= 400) return;
    const form = ev.detail.elt.closest && ev.detail.elt.closest("form");
    const box = form && form.querySelector(":scope .form-errors");
    if (box) box.replaceChildren();
    // What the answer itself said there (its transcript's #flash: [data-said]) stays.
    const flash = document.getElementById("flash");
    if (flash && ev.detail.requestConfig && ev.detail.requestConfig.verb === "post") flash.querySelectorAll(":scope > :not([data-said])").forEach((note) => note.remove());
  });

  // "Skip to the message box": the box gets the focus, its caret after the draft, and the address

  document.addEventListener("click", (ev) => {
    const dismiss = ev.target.closest && ev.target.closest("[data-dismiss]");
    if (dismiss) dismiss.parentElement.remove();
  });

  // ---- htmx's history cache: the pages Back puts back without asking the server ------------------
  // htmx keeps the last pages in sessionStorage, whose quota (about 5 M characters) a few pages of a
  // long session fill: each save that no longer fits then logs an error, and every click reads and
  // writes megabytes. The cache is kept within a budget instead, the oldest pages leaving first; a page
  // larger than the budget on its own is not kept (htmx then fetches it anew on Back). htmx adds the
  // item it passes here after this event, so an item emptied here is stored as nothing: its URL is
  // blanked too, which no page has, so that Back to it is a cache miss.
  const HISTORY_BUDGET = 2_000_000; // characters of pages, inside the quota once escaped as JSON
  document.addEventListener("htmx:historyItemCreated", (ev) => {
    const { item, cache } = ev.detail;
    for (let i = cache.length - 1; i >= 0; i--) if (!cache[i].url) cache.splice(i, 1);
    if (item.content.length > HISTORY_BUDGET) {
      item.url = "";
      item.content = "";
    }
    let total = cache.reduce((sum, kept) => sum + kept.content.length, item.content.length);
    while (cache.length && total > HISTORY_BUDGET) total -= cache.shift().content.length;
  });
})();
