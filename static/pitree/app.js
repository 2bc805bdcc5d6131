// pitree's little JavaScript: what htmx cannot do on its own.
// - forms name the entry the tab stands on now (as the server keeps it for the tab: #tab-state), and
//   refusals are said next to the form that was sent;
// - a reply in progress: Send turning into Stop while a reply is written where the tab stands (asked
//   here or elsewhere), and what a send does meanwhile to the message box;
// - the shell: drawers (sessions, tree), the theme switch, a session opening at its newest message,
//   the sidebar following the sessions folder (its page's socket says when it changed) and its ages;
// - each message's actions: copy, the panel its buttons load into; code blocks' copy and unfold;
// - the share dialog: the share form loaded into a modal <dialog>, opened once it is in;
// - a search result's permalink: the entry found, its words marked, the fold holding them open;
// - keyboard: j/k move along the path, [ / ] (or h/l) switch sibling branch (enter.js: a message box's keys), and the
//   tree panel is an ARIA tree (arrows, Home/End, Enter; C on a branch point compares its branches).
(function () {
  "use strict";

  const root = document.documentElement;
  const REFUSED = new Set([400, 403, 409, 413, 422, 429]); // answers that say why (the page's htmx config swaps them)

  // A socket that dropped (the server restarting, the network gone) tries again soon: about half a
  // second, then twice as long each time, never more than 5 s apart, each wait jittered so that the
  // tabs of a restarted server do not all come back at once. (htmx's own "full-jitter" waits up to
  // 64 s: a tab could stay dark for a minute after the server was back.)
  const RECONNECT_CAP_MS = 5000;
  function reconnectDelay(retry) {
    return Math.min(500 * 2 ** retry, RECONNECT_CAP_MS) * (0.5 + Math.random() / 2);
  }
  htmx.config.wsReconnectDelay = reconnectDelay;

  const pitree = (window.pitree = {
    /** The entry the tab stands on, as the server keeps it for the tab; "" before the first entry. */
    position() {
      const state = document.getElementById("tab-state");
      return state ? state.dataset.position || "" : "";
    },
    /** The byte offset of the file the tab's page reflects. */
    cursor() {
      const state = document.getElementById("tab-state");
      return state ? state.dataset.cursor || "0" : "0";
    },
    refreshTree,
    refreshSidebar: () => {
      clearTimeout(sidebarTimer);
      sidebarTimer = setTimeout(refreshSidebar, 200);
    },
    flash,
    announce,
    replyEnded,
    heard: (token) => heard(token),
    showWhole,
    composerBox: () => composerBox(),
    /** The reply an edit or a regeneration asked for, while the control that asked is hidden (live.js
     *  gives it the focus when it shows); ``null`` forgets it. */
    askedReply(token) {
      if (token !== undefined) askedReply = token;
      return askedReply;
    },
    reconnectDelay,
  });
  let askedReply = null;

  const endedReplies = new Set(); // replies whose end was announced, by id

  // The answer to a send or a regenerate comes when its reply is stored (its stream token names the
  // reply). It swaps the transcript, form and all: the form's own events reach no listener then.
  document.addEventListener("htmx:afterSwap", (ev) => {
    const config = ev.detail.requestConfig;
    const token = config && config.verb === "post" && config.parameters && config.parameters.stream;
    if (token && ev.detail.xhr && ev.detail.xhr.status < 400) replyEnded(token, true);
  });

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
    if (tookIt(streamToken(ev.detail), ev.detail.xhr)) {
      flash(TAKEN);
      return;
    }
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
    if (tookIt(streamToken(ev.detail), ev.detail.xhr)) {
      flash(TAKEN);
      return;
    }
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

  // ---- the message box's draft, kept in the browser across reloads and closed tabs -----------------
  // Saved as the reader types (a moment after the last key), per session; put back on load into an
  // empty box only, so that nothing a tab shows is ever overwritten (with two tabs, the last one typed
  // in wins the next reload). What a send took leaves it when the box empties for the reply: the
  // message is in the conversation then, and a reload offering it again could send it twice (a refused
  // send puts it back, and here too).
  const DRAFT_DELAY_MS = 400;
  let draftTimer = 0;

  const composerBox = () => document.getElementById("composer-text");

  function draftKey() {
    const transcript = document.getElementById("transcript");
    return transcript && transcript.dataset.session ? `pitree:draft:${transcript.dataset.session}` : "";
  }

  /** Keep what the message box holds now as the session's draft (an empty box keeps none). */
  function saveDraft() {
    clearTimeout(draftTimer);
    draftTimer = 0;
    const box = composerBox();
    const key = draftKey();
    if (box && key) store(key, box.value.trim() ? box.value : null);
  }

  /** A send took ``text`` out of the box: the draft no longer holds it, unless another tab's since. */
  function draftSent(text) {
    const key = draftKey();
    if (key && (stored(key) === text || draftTimer)) saveDraft();
  }

  function restoreDraft() {
    const box = composerBox();
    const draft = box && !box.value && draftKey() && stored(draftKey());
    if (draft) box.value = draft;
  }

  document.addEventListener("input", (ev) => {
    if (ev.target !== composerBox()) return;
    clearTimeout(draftTimer);
    draftTimer = setTimeout(saveDraft, DRAFT_DELAY_MS);
  });

  // Closing or leaving the tab, or leaving the page for one htmx puts in its place (a URL it pushed,
  // Back, Forward), within the moment after typing: what was typed last is kept too.
  const savePendingDraft = () => {
    if (draftTimer) saveDraft();
  };
  window.addEventListener("pagehide", savePendingDraft);
  document.addEventListener("htmx:beforeHistorySave", savePendingDraft);

  // Back and Forward put back a page htmx kept (its history cache) as markup, which holds no typed
  // text: its box is empty, and the draft goes back in, as on load.
  document.addEventListener("htmx:historyRestore", restoreDraft);

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
    parameters.cursor = pitree.cursor();
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
  // stays as it was (a "#composer-text" in it would keep a reload from opening at the newest message).
  document.addEventListener("click", (ev) => {
    const skip = ev.target.closest && ev.target.closest("[data-skip-to-composer]");
    const box = skip && composerBox();
    if (!box) return;
    ev.preventDefault();
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
  });

  document.addEventListener("click", (ev) => {
    const dismiss = ev.target.closest && ev.target.closest("[data-dismiss]");
    if (dismiss) dismiss.parentElement.remove();
  });

  // ---- the tree panel: fetched again after a move, while it is shown -------------------------------
  let treeTimer = 0;
  let treeStale = false;
  // What the reader opened in the panel: its "+N" folds (by their two ends) and the pages of their path
  // loaded above the rows first drawn (by the last entry of the earliest). The panel is fetched again
  // at every append: it is asked for with them open (forms.TreePanelForm), so that it comes back as the
  // reader left it, in one request. Until the tab stands elsewhere than on the branch it stood on
  // (``at``, its position then, is not on the path it shows any more) or another filter is picked.
  // The folds opened most recently are kept, as many as fit in TREE_OPENED_CHARS characters of the
  // panel's URL (about 150 with pi's 8-character ids): a longer URL is refused by servers and proxies
  // (Twisted at 16 KB, nginx at 8 KB). Older ones fold again at the next fetch.
  const TREE_OPENED_CHARS = 6000;
  const nothingOpened = (at) => ({ folds: [], loaded: "", at });
  const foldChars = (fold) => 23 + encodeURIComponent(fold.first).length + encodeURIComponent(fold.last).length;
  let treeOpened = nothingOpened("");

  /** What the reader opened in the panel, as long as the tab has not moved elsewhere since. */
  function openedHere() {
    const at = pitree.position();
    if (!onPath(treeOpened.at)) treeOpened = nothingOpened(at);
    treeOpened.at = at;
    return treeOpened;
  }

  /** The panel's parameters: the tab's position, and what the reader opened there. */
  function treeValues() {
    const { folds, loaded, at } = openedHere();
    return { at, open_first: folds.map((fold) => fold.first), open_last: folds.map((fold) => fold.last), loaded };
  }

  /** Whether the entry ``id`` is on the path the tab shows ("": the start, above every entry). */
  function onPath(id) {
    const entry = id && document.getElementById(`entry-${id}`);
    return !id || Boolean(entry && !entry.hidden && entry.closest("#entries"));
  }

  // (Before the swap: the row is replaced by what it stood for, and events on it reach nobody after.)
  document.addEventListener("htmx:beforeSwap", (ev) => {
    const item = ev.detail.elt;
    if (!item.classList || !ev.detail.shouldSwap || !ev.detail.xhr || ev.detail.xhr.status !== 200) return;
    if (item.classList.contains("tree__row--fold")) {
      const opened = openedHere();
      const folds = [...opened.folds, { first: item.dataset.first, last: item.dataset.last }];
      let chars = folds.reduce((sum, fold) => sum + foldChars(fold), 0);
      while (chars > TREE_OPENED_CHARS) chars -= foldChars(folds.shift());
      opened.folds = folds;
    } else if (item.classList.contains("tree__row--earlier")) {
      openedHere().loaded = item.dataset.last; // each page loads above the one before: the earliest so far
    }
  });

  document.addEventListener("htmx:beforeRequest", (ev) => {
    if (ev.detail.elt.classList && ev.detail.elt.classList.contains("tree-filter")) {
      treeOpened = nothingOpened(pitree.position()); // other rows: nothing of them is open
    }
  });

  function treeShown() {
    const aside = document.getElementById("tree-aside");
    if (!aside) return false;
    const style = getComputedStyle(aside);
    return style.display !== "none" && style.visibility !== "hidden";
  }

  /** Fetch the tree panel again for the tab's position (soon, once, and only while it can be seen). */
  function refreshTree() {
    clearTimeout(treeTimer);
    const panel = document.getElementById("tree-panel");
    if (!panel || !panel.dataset.refresh) return; // not loaded yet: it loads when first shown
    if (document.hidden || !treeShown()) {
      treeStale = true;
      return;
    }
    treeTimer = setTimeout(() => {
      treeStale = false;
      const current = document.getElementById("tree-panel"); // a refresh meanwhile replaced it
      if (!current || !current.dataset.refresh) return;
      const values = treeValues();
      // Its own request (a source): not queued behind, nor dropped for, other refreshes (live.js).
      // One that reaches no server (offline, the server restarting) is made again when the network or
      // the session's socket is back.
      htmx.ajax("GET", current.dataset.refresh, { source: current, target: current, swap: "outerHTML", values }).catch(() => {
        treeStale = true;
      });
    }, 150);
  }

  function treeMaybeStale() {
    if (treeStale) refreshTree();
  }

  document.body.addEventListener("pitree:moved", refreshTree);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) treeMaybeStale();
  });
  window.addEventListener("online", treeMaybeStale);
  document.addEventListener("htmx:wsOpen", (ev) => {
    if (ev.target.id === "live") treeMaybeStale();
  });

  // ---- a reply in progress -------------------------------------------------------------------
  // A send, an edit or a regeneration is answered once its reply is stored; meanwhile the socket shows
  // what the server writes (the message, the reply growing: live.js). A send empties the message box
  // (the text comes back if it is refused). An edit or a regeneration moves the tab to the entry its new
  // branch grows from: what it replaces is hidden until the answer comes, and shown again if refused.
  function newToken() {
    const bytes = new Uint8Array(9);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  const sent = new Map(); // request token -> the composer's text it sent, until the answer comes
  const moves = new Map(); // request token -> the entry the tab stood on before its edit or regeneration
  const seen = new Set(); // requests whose reply the server started: it took them
  const taken = new Set(); // requests whose answer was lost after the server had taken them

  function showPending(form, token) {
    const from = form.dataset.replaceFrom;
    if (from) {
      let cut = document.getElementById(`entry-${from}`);
      while (cut) {
        if (!cut.hidden) {
          cut.hidden = true;
          cut.dataset.hiddenFor = token;
        }
        cut = cut.nextElementSibling;
      }
      moves.set(token, pitree.position());
      document.dispatchEvent(new CustomEvent("pitree:moving", { detail: { at: form.dataset.movesTo || "" } }));
      // The control that asked is hidden now: the focus goes to the reply being written once it shows.
      const active = document.activeElement;
      if (!active || active === document.body || active.closest("[hidden]")) askedReply = token;
    }
    const text = form.querySelector("textarea[name=text]");
    if (text && form.id === "composer") {
      // What was sent is in the conversation now: the box empties for the next message (and gets the
      // text back if the message is refused). The request took its fields already.
      sent.set(token, text.value);
      text.value = "";
      draftSent(sent.get(token));
    }
    toBottom(); // the view follows what the socket appends (live.js keeps a reader at the bottom there)
  }

  // The composer's box stays usable while a reply is written (the next message can be typed, and
  // focus stays in it); only what would send again is disabled. An entry's edit form goes away.
  function setBusy(form, busy) {
    Array.from(form.elements).forEach((el) => {
      if (el.matches("button:not([data-stop])") || (form.id !== "composer" && el.matches("textarea"))) el.disabled = busy;
    });
  }

  // A send, an edit or a regeneration can lose its answer after the server took it: the connection
  // dropped, the server was restarted mid-reply, a proxy gave up waiting for a long reply (the answer
  // comes when the reply is stored). Its socket said the server started the request's reply, then (the
  // reply's id is the request's token): the request is not undone, and its text does not come back into
  // the box, from where it would be sent twice.
  const TAKEN =
    "The connection was lost before the server answered, but it had taken what you sent: the message is in the conversation " +
    "(not back in the box, so that it is not sent twice) and the reply shows here once the connection is back " +
    "(cut short if the server was restarted).";

  /** The server started the reply ``token`` (its socket says so, live.js): if this tab asked for it, the
   *  request was taken. */
  function heard(token) {
    if (document.querySelector(`form[data-stream][data-pending="${CSS.escape(token)}"]`)) seen.add(token);
  }

  /** The stream token of the request an htmx event is about ("" for a request that streams nothing). */
  function streamToken(detail) {
    const config = detail.requestConfig;
    return (config && config.verb === "post" && config.parameters && config.parameters.stream) || "";
  }

  /** Whether the request ``token``, whose answer never came (no status) or failed (5xx), had been taken
   *  by the server. Asked when the request ends (htmx says so before it says the request failed). */
  function tookIt(token, xhr) {
    if (taken.has(token)) return true;
    const lost = !xhr || xhr.status === 0 || xhr.status >= 500;
    if (!lost || !seen.has(token)) return false;
    taken.add(token);
    return true;
  }

  function undoPending(form, token) {
    document.querySelectorAll(`[data-hidden-for="${token}"]`).forEach((el) => {
      el.hidden = false;
      delete el.dataset.hiddenFor;
    });
    if (moves.has(token)) document.dispatchEvent(new CustomEvent("pitree:moving", { detail: { at: moves.get(token) } }));
    if (askedReply === token) askedReply = null;
    setBusy(form, false);
    const text = form.querySelector("textarea[name=text]");
    if (text && sent.has(token)) {
      const typed = text.value;
      text.value = sent.get(token) + (typed ? `\n${typed}` : "");
      saveDraft();
    }
  }

  document.addEventListener("htmx:configRequest", (ev) => {
    const form = ev.detail.elt.closest && ev.detail.elt.closest("form[data-stream]");
    if (!form || ev.detail.verb !== "post") return;
    const token = newToken();
    ev.detail.parameters.stream = token;
    form.dataset.pending = token;
  });

  // Moves the reader asked for (a press or a key that fetches the transcript somewhere: a send, an
  // edit, a branch switch). A send's answer comes when its reply is stored, which may be long after:
  // if the reader went elsewhere meanwhile, the answer does not take them back to that reply.
  let movesAsked = 0;
  document.addEventListener("htmx:beforeRequest", (ev) => {
    const config = ev.detail.requestConfig;
    if (ev.detail.target && ev.detail.target.id === "transcript" && config && config.triggeringEvent) movesAsked += 1;
    const form = ev.detail.elt.closest && ev.detail.elt.closest("form[data-stream]");
    if (form && form.dataset.pending) {
      form.dataset.movesAsked = String(movesAsked);
      showPending(form, form.dataset.pending);
      setBusy(form, true);
    }
  });

  document.addEventListener("htmx:beforeSwap", (ev) => {
    const form = ev.detail.requestConfig && ev.detail.requestConfig.elt.closest && ev.detail.requestConfig.elt.closest("form[data-stream]");
    if (form && form.dataset.movesAsked && form.dataset.movesAsked !== String(movesAsked) && ev.detail.xhr.status < 300) {
      ev.detail.shouldSwap = false; // the reply is in the tree, and its branch a ‹ › away
    }
  });

  document.addEventListener("htmx:afterRequest", (ev) => {
    const form = ev.detail.elt.closest && ev.detail.elt.closest("form[data-stream]");
    if (!form || !form.dataset.pending) return;
    const token = form.dataset.pending;
    delete form.dataset.pending;
    // 409/422 answers are swapped (they carry the reason), so htmx calls them successful: check the status.
    const refused = !ev.detail.successful || (ev.detail.xhr && ev.detail.xhr.status >= 400);
    if (refused && tookIt(token, ev.detail.xhr)) {
      setBusy(form, false);
      // The tab stands on the new branch already, where the socket goes on showing it; what it
      // replaced is another branch now.
      document.querySelectorAll(`[data-hidden-for="${token}"]`).forEach((el) => el.remove());
    } else if (refused) undoPending(form, token);
    if (askedReply === token) askedReply = null;
    sent.delete(token);
    moves.delete(token);
    seen.delete(token);
  });

  // A message put into pi's queue (its turn's Steer or Follow up, which send the box's text), or asked
  // of several models (the beam's form, which sends it too), has left the box.
  document.addEventListener("htmx:afterRequest", (ev) => {
    const queued = ev.detail.elt.closest && ev.detail.elt.closest("form.pi-queue, form#beam");
    const box = composerBox();
    const xhr = ev.detail.xhr;
    // An answer that sends the tab elsewhere (the beam's page: HX-Redirect) is never marked successful.
    const taken = ev.detail.successful || (xhr && xhr.getResponseHeader("HX-Redirect"));
    if (!queued || !box || !taken || !xhr || xhr.status >= 300) return;
    const text = box.value;
    box.value = "";
    draftSent(text);
  });

  // ---- Send becomes Stop while a reply is written where this tab stands ---------------------------
  // A Stop for this tab's reply that no server process could act on: the reply had not started yet,
  // in a process that heard of the Stop too late (the server waits a second for it). It is asked
  // again, said nothing of, as soon as the reply streams here.
  let stopAgain = "";
  document.addEventListener("htmx:beforeSwap", (ev) => {
    const config = ev.detail.requestConfig;
    if (!config || config.elt.id !== "stop-reply" || ev.detail.xhr.status !== 409) return;
    const reply = config.formData.get("reply") || "";
    if (!reply || !document.querySelector(`form[data-stream][data-pending="${CSS.escape(reply)}"]`)) return;
    stopAgain = reply;
    ev.detail.shouldSwap = false;
  });

  // The reply being written where the tab stands (the socket shows it), or the one this tab has just
  // asked for (named by the request's token, which the server uses as the reply's id): Stop names it.
  // Stopping keeps its text so far; the entry then arrives like any other and Send comes back.
  function syncStop() {
    const composer = document.getElementById("composer");
    const stopForm = document.getElementById("stop-reply");
    if (!composer || !stopForm) return;
    const streaming = document.querySelector("#entries > article[data-reply]");
    const asked = document.querySelector("form[data-stream][data-pending]");
    const reply = streaming ? streaming.dataset.reply : asked ? asked.dataset.pending : "";
    stopForm.elements.reply.value = reply;
    if (!reply) stopAgain = "";
    else if (streaming && streaming.dataset.reply === stopAgain) {
      stopAgain = "";
      stopForm.requestSubmit();
    }
    if (!reply) unflash("reply-ends"); // the message waiting in the box may be sent now
    syncKeys(streaming);
    const stop = composer.querySelector(".stop");
    const send = composer.querySelector(".send");
    if (stop && stop.hidden === !!reply) {
      const focused = document.activeElement === stop || document.activeElement === send;
      stop.hidden = !reply;
      send.hidden = !!reply;
      if (focused) (reply ? stop : send).focus();
    }
  }

  // The composer's hint says what Enter does: while pi works where the tab stands, it steers pi and
  // Alt+Enter follows up (enter.js); the turn's queue form carries those words.
  function syncKeys(streaming) {
    const keys = document.getElementById("composer-keys");
    const box = composerBox();
    if (!keys || !box) return;
    if (keys.dataset.idle === undefined) keys.dataset.idle = keys.textContent;
    const queue = streaming && streaming.querySelector("form.pi-queue[data-keys]");
    const said = queue ? queue.dataset.keys : keys.dataset.idle;
    // Written only when it changes: a write is a mutation of #live, which calls this again.
    if (keys.textContent !== said) keys.textContent = said;
    box.setAttribute("aria-keyshortcuts", queue ? "Enter Alt+Enter" : "Enter");
  }

  // ---- sending: the refusal of a message from a tab that missed something -----------------------
  // The composer sends the entry the tab stands on and the cursor of its page (its fields, which the
  // server keeps current): a message from a tab that missed how the conversation went on after the
  // entry it answers is refused (views/chat.send), and the refusal's two ways on ("continue from the
  // latest", "send as a new branch here") send the composer again with their own fields.
  let resend = null;
  document.addEventListener("htmx:configRequest", (ev) => {
    if (!ev.detail.elt || ev.detail.elt.id !== "composer" || !resend) return;
    const parameters = ev.detail.parameters;
    parameters.parent = resend.parent;
    if (resend.cursor) parameters.cursor = resend.cursor;
    if (resend.branch) parameters.branch = "1";
  });

  document.addEventListener("click", (ev) => {
    const choice = ev.target.closest && ev.target.closest("#flash [data-resend]");
    const composer = document.getElementById("composer");
    if (!choice || !composer) return;
    resend = { parent: choice.dataset.parent || "", cursor: choice.dataset.cursor || "", branch: Boolean(choice.dataset.branch) };
    // "Continue from the latest" names the newest entry there when it was offered. A tab that has shown
    // more of that branch since (the reply then being written, say) continues from what it shows now,
    // at its cursor: from the entry named, it would only be refused again.
    if (!resend.branch && shownBeyond(resend.parent)) resend = { parent: pitree.position(), cursor: "", branch: false };
    try {
      composer.requestSubmit(); // htmx reads the fields now, in its submit handler
    } finally {
      resend = null;
    }
  });

  /** Whether the tab's position is further down the branch than the entry ``id`` (both shown). */
  function shownBeyond(id) {
    const named = id && document.getElementById(`entry-${id}`);
    const at = document.getElementById(`entry-${pitree.position()}`);
    return Boolean(named && at && named !== at && named.compareDocumentPosition(at) & Node.DOCUMENT_POSITION_FOLLOWING);
  }

  // ---- after the transcript changed: focus, open folds, the draft ----------------------------
  let focusAfterSwap = null;
  let focusNavigator = ""; // "prev" or "next": a ‹ › button was pressed, focus goes to the one shown
  let keptFolds = [];
  let keptDraft = "";

  let focusBack = null; // where focus goes back to once the transcript it was in is swapped
  let settingsFocus = null; // the name of the picker whose select is to have the focus when they load

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
      if (at && of) announce(`Branch ${at} of ${of}`);
      return;
    }
    if (ev.detail.requestConfig && ev.detail.requestConfig.verb === "post") toBottom();
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
    const anchor = entryList().find((el) => el.getBoundingClientRect().bottom > 0) || target.nextElementSibling;
    olderAnchor = anchor && { xhr: ev.detail.xhr, el: anchor, top: anchor.getBoundingClientRect().top };
  });

  document.addEventListener("htmx:afterSwap", (ev) => {
    if (!olderAnchor || olderAnchor.xhr !== ev.detail.xhr) return;
    const { el, top } = olderAnchor;
    olderAnchor = null;
    if (el.isConnected) window.scrollBy(0, el.getBoundingClientRect().top - top);
  });

  function toBottom() {
    window.scrollTo({ top: document.documentElement.scrollHeight });
  }

  // ---- each message's actions --------------------------------------------------------------------
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
  const sources = new Map(); // raw line URL -> its text (a promise)

  function fetchedSource(url) {
    if (!sources.has(url)) {
      const text = fetchSource(url);
      text.catch(() => sources.delete(url));
      sources.set(url, text);
      if (sources.size > SOURCES_KEPT) sources.delete(sources.keys().next().value);
    }
    return sources.get(url);
  }

  /** The text of a message too large for the page to carry (its Copy names its raw line): its text
   *  blocks joined as the server's ``EntryView.written`` joins them. */
  async function fetchSource(url) {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const entry = await response.json();
    const content = entry.message ? entry.message.content : entry.content;
    if (typeof content === "string") return content;
    const texts = (Array.isArray(content) ? content : []).filter((block) => block && block.type === "text" && block.text);
    return texts.map((block) => String(block.text)).join("\n\n");
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
      return;
    }
    const long = target.closest("[data-show-long]");
    if (long) {
      const open = long.getAttribute("aria-expanded") !== "true";
      showWhole(long.previousElementSibling, long, open);
      if (!open) long.closest("article.entry").scrollIntoView({ block: "nearest" }); // back to what was folded
      return;
    }
    const expand = target.closest("[data-expand-code]");
    if (expand) {
      const code = expand.closest(".code");
      showWhole(code, expand, !code.classList.contains("is-open"));
      return;
    }
    const stopButton = target.closest("[data-stop]");
    if (stopButton) {
      // Stop takes Send's place under the pointer: the second click of a double click on Send is no
      // Stop (it stopped the reply just asked for, before its first word). A click of its own is.
      if (ev.detail > 1) return;
      const stopForm = document.getElementById("stop-reply");
      if (stopForm && stopForm.elements.reply.value) stopForm.requestSubmit();
      return;
    }
    const close = target.closest("[data-close-panel]");
    if (close) {
      const panel = close.closest(".entry__panel");
      if (panel) closePanel(panel, true);
    }
    // ‹ › pressed: focus goes to the navigator of the sibling shown (the pressed button is swapped away).
    const sibling = target.closest(".navigator button[name=to]");
    if (sibling && sibling.value) {
      focusAfterSwap = sibling.value;
      focusNavigator = sibling.classList.contains("nav-next") ? "next" : "prev";
    }
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

  // ---- the shell: drawers, theme, where a session opens ---------------------------------------------
  const wide = window.matchMedia("(min-width: 75rem)");

  function drawerOf(name) {
    return document.getElementById(name === "tree" ? "tree-aside" : "sidebar");
  }

  function syncToggles() {
    document.querySelectorAll("[data-toggle-drawer]").forEach((toggle) => {
      const name = toggle.dataset.toggleDrawer;
      const open = name === "tree" && wide.matches ? root.dataset.tree !== "closed" : document.body.dataset.drawer === name;
      toggle.setAttribute("aria-expanded", String(open));
    });
    const backdrop = document.querySelector(".drawer-backdrop");
    if (backdrop) backdrop.hidden = !document.body.dataset.drawer;
  }

  // While a drawer is open, what it covers is inert: Tab stays in the drawer and the top bar instead of
  // reaching controls hidden under it (WCAG 2.4.3, 2.4.11).
  function setCovered(drawer) {
    document.querySelectorAll(".shell > *").forEach((el) => {
      el.inert = !!drawer && el !== drawer && !el.contains(drawer);
    });
  }

  function openDrawer(name) {
    document.body.dataset.drawer = name;
    syncToggles();
    const drawer = drawerOf(name);
    setCovered(drawer);
    const first = drawer && drawer.querySelector("[role=treeitem][tabindex='0'], input, a[href], button");
    if (first) first.focus();
    if (name === "tree") treeMaybeStale();
  }

  function closeDrawer() {
    const name = document.body.dataset.drawer;
    if (!name) return;
    delete document.body.dataset.drawer;
    syncToggles();
    setCovered(null);
    const toggle = document.querySelector(`[data-toggle-drawer="${name}"]`);
    if (toggle && toggle.offsetParent !== null) toggle.focus();
  }

  function setTreeOpen(open) {
    if (open) delete root.dataset.tree;
    else root.dataset.tree = "closed";
    store("pitree:tree", open ? null : "closed");
    syncToggles();
    if (open) treeMaybeStale();
  }

  document.addEventListener("click", (ev) => {
    const toggle = ev.target.closest && ev.target.closest("[data-toggle-drawer]");
    if (toggle) {
      const name = toggle.dataset.toggleDrawer;
      if (name === "tree" && wide.matches) setTreeOpen(root.dataset.tree === "closed");
      else if (document.body.dataset.drawer === name) closeDrawer();
      else openDrawer(name);
      return;
    }
    const close = ev.target.closest && ev.target.closest("[data-close-drawer]");
    if (close) {
      if (document.body.dataset.drawer) closeDrawer();
      else if (close.closest("#tree-aside")) setTreeOpen(false);
    }
  });

  wide.addEventListener("change", () => {
    if (wide.matches && document.body.dataset.drawer === "tree") {
      delete document.body.dataset.drawer;
      setCovered(null);
    }
    syncToggles();
  });

  const themeSwitch = document.getElementById("theme-switch");
  if (themeSwitch) {
    themeSwitch.value = root.dataset.theme || "system";
    themeSwitch.closest("label").hidden = false;
    themeSwitch.addEventListener("change", () => {
      const theme = themeSwitch.value === "system" ? null : themeSwitch.value;
      if (theme) root.dataset.theme = theme;
      else delete root.dataset.theme;
      store("pitree:theme", theme);
    });
  }

  // The full-text search link carries what is typed in the sidebar's filter.
  document.addEventListener("input", (ev) => {
    if (ev.target.id !== "sidebar-filter") return;
    const link = document.querySelector("[data-search-link]");
    if (!link) return;
    const url = new URL(link.href);
    if (ev.target.value.trim()) url.searchParams.set("q", ev.target.value.trim());
    else url.searchParams.delete("q");
    link.href = url.pathname + url.search;
  });

  // The sidebar's list arrived: the first time, the session on screen is scrolled into its view.
  let sidebarShown = false;
  document.addEventListener("htmx:afterSwap", (ev) => {
    if (!ev.detail.target || ev.detail.target.id !== "sidebar-list") return;
    showAges(ev.detail.target); // by this browser's clock, as the minute ticks will be
    if (sidebarShown) return;
    sidebarShown = true;
    const current = ev.detail.target.querySelector("a[aria-current=page]");
    if (current) current.scrollIntoView({ block: "nearest" });
  });

  // ---- the sidebar follows the sessions folder ----------------------------------------------------
  // A page's socket says when the sessions folder changed (a new session, a first message, a rename,
  // here or anywhere: live.js): the list is fetched again then, for what its filter holds and as many
  // pages as were scrolled in. Its ages ("3 minutes ago") are kept current meanwhile.
  let sidebarTimer = 0;

  // The pages the sidebar shows: one after the filter was typed in, one more for each "More sessions".
  document.addEventListener("htmx:beforeRequest", (ev) => {
    const list = document.getElementById("sidebar-list");
    const elt = ev.detail.elt;
    if (!list || !elt) return;
    if (elt.id === "sidebar-filter" || elt.id === "sidebar-workspace") delete list.dataset.pages;
    else if (elt.classList.contains("sidebar__more") && list.contains(elt)) list.dataset.pages = elt.dataset.page;
  });

  // A refresh that brings the very list shown (the folder changed outside what it lists) is not
  // swapped, so that the focus, a hover or a selection in it stay; one that changes it puts the focus
  // back on the link it was on.
  // What was last swapped in is kept on the list element itself: a page that Back puts back has a list
  // of its own (as it was then), which the next answer must replace, and a page of "More sessions"
  // added to the list makes it another list.
  let sidebarFocus = null; // the link that had the focus, by its address
  document.addEventListener("htmx:beforeSwap", (ev) => {
    const list = document.getElementById("sidebar-list");
    if (!list || !ev.detail.shouldSwap) return;
    if (ev.detail.target !== list) {
      if (list.contains(ev.detail.target)) list.pitreeShown = null;
      return;
    }
    if (ev.detail.serverResponse === list.pitreeShown) {
      ev.detail.shouldSwap = false;
      return;
    }
    list.pitreeShown = ev.detail.serverResponse;
    const focused = list.contains(document.activeElement) && document.activeElement.closest("a[href]");
    sidebarFocus = focused ? focused.getAttribute("href") : null;
  });

  document.addEventListener("htmx:afterSwap", (ev) => {
    const list = document.getElementById("sidebar-list");
    if (!list || ev.detail.target !== list || !sidebarFocus) return;
    const link = list.querySelector(`a[href="${CSS.escape(sidebarFocus)}"]`);
    sidebarFocus = null;
    if (link) link.focus({ preventScroll: true });
  });

  function refreshSidebar() {
    const list = document.getElementById("sidebar-list");
    const filter = document.getElementById("sidebar-filter");
    if (!list || !filter) return;
    const url = new URL(filter.getAttribute("hx-get"), window.location.href);
    if (filter.value.trim()) url.searchParams.set("q", filter.value.trim());
    const workspace = document.getElementById("sidebar-workspace");
    if (workspace && workspace.value) url.searchParams.set("workspace", workspace.value);
    if (list.dataset.pages) url.searchParams.set("through", list.dataset.pages);
    // Reaching no server, it is made again when the list's socket is back (its "resume" brings a notice).
    htmx.ajax("GET", url.pathname + url.search, { source: list, target: list, swap: "innerHTML" }).catch(() => {});
  }

  // Ages as the server words them (Django's timesince: the largest unit, in calendar months and years
  // beyond a month, with a no-break space; "just now" under a minute).
  const SHORT_UNITS = [
    ["week", 7 * 864e5],
    ["day", 864e5],
    ["hour", 36e5],
    ["minute", 6e4],
  ];

  function counted(count, unit) {
    return count ? `${count}\u00a0${unit}${count === 1 ? "" : "s"} ago` : "just now";
  }

  function age(ms) {
    const then = new Date(ms);
    const now = new Date();
    if (now <= then) return counted(0, "minute");
    let months = (now.getUTCFullYear() - then.getUTCFullYear()) * 12 + now.getUTCMonth() - then.getUTCMonth();
    const inMonth = (d) => (((d.getUTCDate() * 24 + d.getUTCHours()) * 60 + d.getUTCMinutes()) * 60 + d.getUTCSeconds()) * 1000 + d.getUTCMilliseconds();
    if (inMonth(then) > inMonth(now)) months -= 1;
    if (months >= 12) return counted(Math.floor(months / 12), "year");
    if (months >= 1) return counted(months, "month");
    const since = now - then;
    const [unit, size] = SHORT_UNITS.find(([, length]) => since >= length) || SHORT_UNITS[SHORT_UNITS.length - 1];
    return counted(Math.floor(since / size), unit);
  }

  function showAges(root) {
    root.querySelectorAll("time[data-ago]").forEach((el) => {
      const ms = Date.parse(el.getAttribute("datetime"));
      if (!Number.isNaN(ms)) el.textContent = age(ms);
    });
  }

  setInterval(() => {
    const list = document.getElementById("sidebar-list");
    if (list && !document.hidden) showAges(list);
  }, 60e3);

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
    // A transcript swapped in a moment ago may not be set up by htmx yet (it does that when it settles):
    // without this, the press would post the form as a page of its own.
    htmx.process(button.form);
    button.click();
    focusNavigator = ""; // a key moves the focus among entries: it stays on the entry shown
  }

  document.addEventListener("keydown", (ev) => {
    const target = ev.target;
    if (ev.key === "Escape" && document.body.dataset.drawer) {
      closeDrawer();
      return;
    }
    const panel = ev.key === "Escape" && target.closest && target.closest(".entry__panel");
    if (panel && panel.querySelector("[data-close-panel]")) {
      closePanel(panel, true); // focus goes back to the tool that opened it
      return;
    }
    if (target.matches && target.matches("[role=treeitem]")) {
      treeKey(ev, target);
      return;
    }
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

  // ---- the tree panel as an ARIA tree: one row in the tab order, arrows move ------------------------
  const level = (item) => Number(item.getAttribute("aria-level")) || 1;
  // A "+N" fold of another branch, or the row above the tab's path that loads its earlier entries.
  const isFold = (item) => item.matches(".tree__row--fold, .tree__row--earlier");

  function treeItems(tree) {
    return Array.from(tree.querySelectorAll(":scope > [role=treeitem]")).filter((item) => !item.hidden);
  }

  function moveTo(item) {
    if (!item) return;
    const tree = item.closest("[role=tree]");
    tree.querySelectorAll(":scope > [role=treeitem][tabindex='0']").forEach((other) => (other.tabIndex = -1));
    item.tabIndex = 0;
    item.focus();
  }

  // Folding a branch point hides the rows below it that are deeper; unfolding shows them again, except
  // below a branch point that stays folded.
  function setExpanded(item, open) {
    item.setAttribute("aria-expanded", String(open));
    const depth = level(item);
    let closedBelow = Infinity;
    for (let row = item.nextElementSibling; row && level(row) > depth; row = row.nextElementSibling) {
      if (!open) {
        row.hidden = true;
        continue;
      }
      if (level(row) > closedBelow) continue;
      closedBelow = Infinity;
      row.hidden = false;
      if (row.getAttribute("aria-expanded") === "false" && !isFold(row)) closedBelow = level(row);
    }
  }

  // A fold opened by keyboard: focus moves to the first row it held; earlier entries of the path load
  // above the row that had focus, and focus moves to the nearest of them (the last). Only once the
  // fold's own rows have come: another swap settling meanwhile (the sidebar, the pickers) would move
  // the focus onto the fold, which its rows then replace.
  let focusAfterFold = null;

  function openFold(item) {
    focusAfterFold = {
      item,
      tree: item.closest("[role=tree]"),
      before: item.previousElementSibling,
      after: item.nextElementSibling,
      earlier: item.classList.contains("tree__row--earlier"),
    };
    htmx.trigger(item, "pitree:expand");
  }

  function treeKey(ev, item) {
    const items = treeItems(item.closest("[role=tree]"));
    const at = items.indexOf(item);
    const expanded = item.getAttribute("aria-expanded");
    switch (ev.key) {
      case "ArrowDown":
        moveTo(items[at + 1]);
        break;
      case "ArrowUp":
        moveTo(items[at - 1]);
        break;
      case "Home":
        moveTo(items[0]);
        break;
      case "End":
        moveTo(items[items.length - 1]);
        break;
      case "ArrowRight":
        if (isFold(item)) openFold(item);
        else if (expanded === "false") setExpanded(item, true);
        else if (expanded === "true") moveTo(items[at + 1]);
        break;
      case "ArrowLeft":
        if (expanded === "true" && !isFold(item)) setExpanded(item, false);
        else moveTo(items.slice(0, at).reverse().find((other) => level(other) < level(item)));
        break;
      case "Enter":
      case " ":
        if (isFold(item)) openFold(item);
        else item.querySelector(".tree__node").click();
        break;
      case "c":
      case "C": {
        // A branch point's Compare: a link kept out of the tab order (the row holds focus), announced
        // by the row's description.
        const compare = item.querySelector(":scope > .tree__compare");
        if (!compare || ev.ctrlKey || ev.metaKey || ev.altKey) return;
        compare.click();
        break;
      }
      default:
        return;
    }
    ev.preventDefault();
  }

  // A click on a row outside its button and its Compare link goes there too.
  document.addEventListener("click", (ev) => {
    const item = ev.target.closest && ev.target.closest("[role=treeitem]");
    if (!item || isFold(item) || ev.target.closest(".tree__node, .tree__compare")) return;
    const node = item.querySelector(".tree__node");
    if (node) node.click();
  });

  let treeFocus = null; // the entry whose row had focus before the panel was fetched again
  let treeSummarize = false; // whether "Summarize the branch I leave" was ticked then
  let treeReading = null; // the row the reader was reading elsewhere than at the tab's position, and where

  document.addEventListener("htmx:beforeSwap", (ev) => {
    if (!ev.detail.target || ev.detail.target.id !== "tree-panel") return;
    const row = document.activeElement && document.activeElement.closest && document.activeElement.closest("#tree-panel [role=treeitem]");
    const node = row && row.querySelector(".tree__node");
    treeFocus = node ? node.dataset.entry : null;
    const summarize = document.querySelector("#tree-panel input[name=summarize]");
    treeSummarize = Boolean(summarize && summarize.checked);
    treeReading = readingElsewhere();
  });

  // The panel is fetched again at every append: a reader who scrolled it away from the tab's position
  // (to read other branches while an agent writes) keeps the rows they read where they were, rather
  // than be taken back to the position each time.
  function readingElsewhere() {
    const aside = document.getElementById("tree-aside");
    const rows = Array.from(document.querySelectorAll("#tree-panel [role=treeitem]"));
    if (!aside || !rows.length) return null;
    const box = aside.getBoundingClientRect();
    const seen = (row) => {
      const at = row.getBoundingClientRect();
      return at.bottom > box.top && at.top < box.bottom;
    };
    const position = rows.find((row) => row.classList.contains("is-position"));
    if (!position || seen(position)) return null;
    const first = rows.find((row) => seen(row) && row.querySelector(".tree__node"));
    return first ? { entry: first.querySelector(".tree__node").dataset.entry, top: first.getBoundingClientRect().top } : null;
  }

  function keepReading(tree, reading) {
    const node = tree.querySelector(`.tree__node[data-entry="${CSS.escape(reading.entry)}"]`);
    const aside = document.getElementById("tree-aside");
    if (node && aside) aside.scrollTop += node.closest("[role=treeitem]").getBoundingClientRect().top - reading.top;
  }

  // The panel is fetched again whenever the file grows (an agent appending, another tab): the choice to
  // summarize the branch left stays ticked meanwhile, until a move has used it.
  document.addEventListener("htmx:afterSwap", (ev) => {
    if (!ev.detail.target || ev.detail.target.id !== "tree-panel") return;
    const summarize = document.querySelector("#tree-panel input[name=summarize]");
    if (summarize) summarize.checked = treeSummarize;
  });

  document.addEventListener("htmx:afterRequest", (ev) => {
    const form = ev.detail.elt && ev.detail.elt.closest && ev.detail.elt.closest(".tree-form");
    const summarize = form && form.querySelector("input[name=summarize]");
    if (summarize && ev.detail.successful && ev.detail.xhr && ev.detail.xhr.status < 400) summarize.checked = false;
  });

  document.addEventListener("htmx:afterSettle", (ev) => {
    const asked = ev.detail.requestConfig && ev.detail.requestConfig.elt;
    if (focusAfterFold && asked === focusAfterFold.item && focusAfterFold.tree.isConnected) {
      const { tree, before, after, earlier } = focusAfterFold;
      focusAfterFold = null;
      let next = before ? before.nextElementSibling : tree.firstElementChild;
      if (earlier) next = after ? after.previousElementSibling : tree.lastElementChild;
      if (next) moveTo(next);
    }
    const tree = document.querySelector("#tree-panel [role=tree]");
    if (!tree) return;
    if (!tree.querySelector(":scope > [role=treeitem][tabindex='0']")) {
      const first = tree.querySelector(":scope > [role=treeitem]");
      if (first) first.tabIndex = 0;
    }
    if (!ev.detail.elt || ev.detail.elt.id !== "tree-panel") return;
    const node = treeFocus && tree.querySelector(`.tree__node[data-entry="${CSS.escape(treeFocus)}"]`);
    const reading = treeReading;
    treeFocus = null;
    treeReading = null;
    if (node) moveTo(node.closest("[role=treeitem]"));
    else if (reading) keepReading(tree, reading);
    else showPosition(tree);
  });

  // The tab's path ends at its position, far down a long panel: it is scrolled into the panel's view
  // (not the window's) when the panel arrives, unless it is in view already.
  function showPosition(tree) {
    const row = tree.querySelector(":scope > .is-position");
    const aside = document.getElementById("tree-aside");
    if (!row || !aside) return;
    const box = aside.getBoundingClientRect();
    const at = row.getBoundingClientRect();
    if (at.top < box.top + 48 || at.bottom > box.bottom - 8) aside.scrollTop += at.top - box.top - aside.clientHeight / 3;
  }

  // ---- a search result's permalink: the entry it found, its words marked, the fold holding them open ----
  // The address names the entry (#entry-<id>) and the words found (?hl=): they are marked in the entry,
  // every fold around them opened; when none shows (a large block loads only when opened), the entry's
  // folds are opened and the words marked once their contents arrive.
  const found = (() => {
    const words = (new URLSearchParams(location.search).get("hl") || "").toLocaleLowerCase().split(/\s+/).filter(Boolean);
    let id = "";
    try {
      id = decodeURIComponent(location.hash.slice(1));
    } catch (error) {
      id = "";
    }
    const entry = id.startsWith("entry-") && document.getElementById(id);
    return entry && entry.matches("article.entry") ? { entry, words } : null;
  })();

  function markWords(root, words) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) =>
        node.parentElement.closest("mark.hit, .entry__tools, template, script") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
    });
    const nodes = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
    const marks = [];
    for (const node of nodes) {
      let rest = node;
      for (;;) {
        const text = rest.data.toLocaleLowerCase();
        const at = words.map((w) => [text.indexOf(w), w]).filter(([i]) => i >= 0).sort((a, b) => a[0] - b[0])[0];
        if (!at) break;
        const hit = rest.splitText(at[0]);
        rest = hit.splitText(at[1].length);
        const mark = document.createElement("mark");
        mark.className = "hit";
        hit.replaceWith(mark);
        mark.append(hit);
        marks.push(mark);
      }
    }
    return marks;
  }

  function showFound(fromLoad) {
    const { entry, words } = found;
    entry.classList.add("is-hit");
    const marks = words.length ? markWords(entry, words) : [];
    marks.forEach((mark) => {
      for (let fold = mark.closest("details"); fold; fold = fold.parentElement.closest("details")) fold.open = true;
      const long = mark.closest(".entry__long");
      if (long) showWhole(long, long.nextElementSibling, true);
    });
    if (!marks.length && !fromLoad) entry.querySelectorAll("details").forEach((fold) => (fold.open = true));
    (marks[0] || entry).scrollIntoView({ block: "center" });
  }

  document.addEventListener("htmx:afterSwap", (ev) => {
    if (found && found.entry.isConnected && ev.detail.target && found.entry.contains(ev.detail.target)) showFound(true);
  });

  // ---- the share dialog: the share page's form, loaded into a modal dialog (a page without JavaScript) --
  // Opened once its form is in; the focus goes to the entry picked (in view in its list), else the first field.
  document.addEventListener("htmx:afterSwap", (ev) => {
    const body = ev.detail.target;
    if (!body || body.id !== "share-dialog-body") return;
    const dialog = body.closest("dialog");
    if (!dialog.open) dialog.showModal();
    const picked = body.querySelector('input[name="entry"]:checked');
    if (picked) {
      picked.scrollIntoView({ block: "nearest" });
      picked.focus({ preventScroll: true });
    }
  });

  // ---- start ----------------------------------------------------------------------------------------
  syncToggles();
  const live = document.getElementById("live");
  if (live) {
    new MutationObserver(syncStop).observe(live, {
      childList: true,
      subtree: true,
      attributes: true,
      attributeFilter: ["data-pending"],
    });
    syncStop();
    // A session opens at its newest message, with the composer in view (unless the address names a spot).
    if ("scrollRestoration" in history) history.scrollRestoration = "manual";
    // The folds it opens load through htmx: opened only once htmx has taken the page in (its own
    // DOMContentLoaded listener came first), so that their "toggle" is heard.
    if (found) document.addEventListener("DOMContentLoaded", () => showFound(false), { once: true });
    else if (!location.hash) toBottom();
    restoreDraft();
    // A session without a message yet (just started): the message box has the focus, as its page says.
    const box = composerBox();
    if (box && !location.hash && !document.querySelector("#entries > article.entry--user, #entries > article.entry--assistant")) {
      box.focus({ preventScroll: true });
    }
  }
})();
