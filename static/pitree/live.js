// Live updates of a session page. The server sends, over the page's websocket (htmx's ws extension),
// what was appended to the session file — by this tab, another tab, the command line, pi — rendered
// once for every tab, and the replies being written. This tab decides what each means for it:
// - an entry whose parent is the entry the tab stands on continues its branch: it is appended and the
//   tab moves onto it (so what it sends next answers the newest entry, never making a sibling by
//   accident);
// - anything else changes only what it touches: "‹ 2/3 ›" counts, labels, the header, the tree panel;
// - when the file's position is elsewhere, a note offers to go there instead of jumping (and says so
//   when the session moved away from where this tab stood, which it then follows without a reload).
// A badge says when the socket is down (reconnecting, or offline). Sending says how far into the file
// this tab is, so the server refuses a message from a tab that missed how the conversation went on;
// its answer offers two ways on, which send the composer again.
// The page carries the byte offset of the file it reflects (its cursor) and the id of the line that ends
// there; the socket sends both on every (re)connect and gets exactly what it missed, or, when the file
// is another one now (replaced while the socket was down), is told to fetch the page again. Messages
// are JSON (live/fragments.py describes them) and are applied here: htmx never swaps them by itself, so
// no out-of-band target can be missing.
(function () {
  "use strict";

  const LOG_SIZE = 200; // batches kept to re-apply after the transcript is swapped by an older answer

  const state = {
    cursor: 0,
    mark: { end: 0, id: null }, // the last line this tab has (null: the page did not say) and where it ends
    epoch: 0,
    log: [], // recent batches, oldest first
    replies: new Map(), // reply id -> latest "reply" message, shown where its parent is the position
    ended: new Set(), // replies whose end came: a piece that arrives late is dropped
    leaf: null, // the file's position as last heard (null: not known)
    waiting: null, // messages that arrive while the page is fetched again
    socket: null,
    gone: false, // the feed said the session's file was deleted
  };

  const live = () => document.getElementById("live");
  const transcript = () => document.getElementById("transcript");
  const entries = () => document.getElementById("entries");
  const position = () => (transcript() ? transcript().dataset.position || "" : "");
  const entryEl = (id) => document.getElementById(`entry-${id}`);
  const composerBox = window.pitree.composerBox;

  function fragment(html) {
    const template = document.createElement("template");
    template.innerHTML = html.trim();
    return template.content.firstElementChild;
  }

  function sessionUrl() {
    return live().dataset.sessionUrl;
  }

  // The permalink of an entry as the server wrote it on the entry (its "#" link: any id is escaped there
  // as the URL converter escapes it); the session's own URL for an id no URL can carry.
  function permalink(id) {
    const entry = id && document.getElementById(`entry-${id}`);
    const link = entry && entry.querySelector(":scope > .entry__head > a.entry__link");
    return (link && link.getAttribute("href")) || sessionUrl();
  }

  function readCursor() {
    const t = transcript();
    return t ? Number(t.dataset.cursor || 0) : 0;
  }

  // The page's cursor and the line that ends there, as the server rendered them with its content.
  function takePageCursor() {
    const t = transcript();
    state.cursor = readCursor();
    state.mark = { end: state.cursor, id: t && t.dataset.cursorId !== undefined ? t.dataset.cursorId : null };
  }

  // What the socket says when it opens: the cursor, and the id of the line that ends there, by which the
  // server tells whether the file is still the one this page came from. A tab of a branch share gets
  // batches that end past lines it may not see: it names its own last line, and where that ends.
  function hello() {
    if (state.mark.id === null) return { cursor: state.cursor };
    return { cursor: state.mark.end, id: state.mark.id };
  }

  // ---- the socket ---------------------------------------------------------------------------------
  document.addEventListener("htmx:wsOpen", (ev) => {
    if (ev.target !== live()) return;
    state.socket = ev.detail.socketWrapper;
    setLink(live(), "open");
    ev.detail.socketWrapper.send(JSON.stringify(hello()));
  });

  document.addEventListener("htmx:wsClose", (ev) => {
    if (ev.target !== live() && ev.target !== document.getElementById("session-groups")) return;
    beforeOffline.delete(ev.target); // closed for real: it reconnects
    const code = ev.detail.event.code;
    if (code >= 4000) {
      // The extension does not retry 4xxx closes; say why the page stopped following.
      setLink(ev.target, "stopped");
      if (ev.target === live()) {
        // 4404: the file was deleted (its "gone" message said so first), or the reader's access ended.
        if (code !== 4404) flash("Live updates stopped.");
        else if (!state.gone) flash("This session is not available to you any more: live updates stopped.");
      } else if (code === 4429) {
        flash("You have too many session lists open (in other tabs): this one no longer follows the folder. Reload it once some are closed.");
      }
    } else {
      setLink(ev.target, "closed");
    }
  });

  // ---- the badge: whether what this page shows is still live ------------------------------------
  function setLink(el, value) {
    el.dataset.live = value;
    const down = ["closed", "stopped"].includes(value);
    const badge = linkBadge();
    badge.hidden = !down;
    if (!down) return;
    if (value === "stopped") badge.textContent = "Live updates stopped";
    else badge.textContent = navigator.onLine === false ? "Offline: reconnecting when the network is back…" : "Reconnecting…";
    badge.dataset.state = value;
  }

  function linkBadge() {
    return statusNote("live-status", "live-status");
  }

  /** The page's status note ``id`` (made the first time, hidden until shown). */
  function statusNote(id, className) {
    let el = document.getElementById(id);
    if (!el) {
      el = document.createElement("div");
      el.id = id;
      el.className = className;
      el.setAttribute("role", "status");
      el.hidden = true;
      document.body.append(el);
    }
    return el;
  }

  // Offline, a socket may stay open with nothing getting through (the browser need not close it): the
  // badge says so at once. Back online, a socket that did not close meanwhile is as it was (what the
  // server sent meanwhile arrives now); one that closed reconnects from its cursor, as always.
  const beforeOffline = new Map(); // socket element -> its state when the network went
  window.addEventListener("offline", () => {
    [live(), document.getElementById("session-groups")].forEach((el) => {
      if (!el || el.dataset.live === "stopped") return;
      if (el.dataset.live !== "closed" && !beforeOffline.has(el)) beforeOffline.set(el, el.dataset.live);
      setLink(el, "closed");
    });
  });

  window.addEventListener("online", () => {
    beforeOffline.forEach((was, el) => {
      if (el.isConnected && el.dataset.live === "closed") setLink(el, was);
    });
    beforeOffline.clear();
  });

  document.addEventListener("htmx:wsBeforeMessage", (ev) => {
    if (ev.target !== live()) return;
    ev.preventDefault(); // applied below, never swapped by htmx
    let message;
    try {
      message = JSON.parse(ev.detail.message);
    } catch (error) {
      return;
    }
    if (state.waiting) state.waiting.push(message);
    else receive(message);
  });

  function receive(message) {
    switch (message.t) {
      case "batch":
        state.log.push(message);
        if (state.log.length > LOG_SIZE) state.log.shift();
        applyBatch(message);
        break;
      case "resync":
        state.epoch = message.epoch;
        if (message.replaced) openAtLeaf(REPLACED);
        else refetch();
        break;
      case "reply":
        if (state.ended.has(message.reply)) break;
        state.replies.set(message.reply, message);
        showReply(message);
        break;
      case "reply-end":
        state.ended.add(message.reply);
        endReply(message);
        if (lostAnswers.has(message.reply) && message.entry) showLostAnswers();
        else lostAnswers.delete(message.reply);
        break;
      case "live":
        setLink(live(), "live");
        showLostAnswers();
        break;
      case "gone":
        state.gone = true;
        flash("This session's file is gone: live updates stopped.");
        break;
      case "layer":
        layerNote().hidden = !message.paused;
        break;
    }
  }

  // The server's channel to its other processes (Redis) does not answer: what they write still comes
  // through the file, but a reply another server is writing shows only once it is stored.
  function layerNote() {
    const el = statusNote("live-layer", "live-status live-status--layer");
    el.textContent = "Live updates from other servers are paused: a reply they are writing shows once it is stored.";
    return el;
  }

  // ---- entries ------------------------------------------------------------------------------------
  // Entries that may change the model or thinking level the branch is on (a reply names its model).
  const SETTINGS_KINDS = ["entry--model_change", "entry--thinking_level_change", "entry--assistant"];

  function applyBatch(batch) {
    // The header says what the file holds, whatever this tab shows: a batch whose entries came with the
    // answer to the tab's own request (its transcript is not the header) still updates it.
    updateHead(batch);
    if (batch.to <= state.cursor) return; // all of it is in the page already
    let moved = false;
    let settingsChanged = false;
    let compacted = false;
    const wasAtBottom = atBottom();
    for (const item of batch.entries) {
      if (item.end <= state.cursor) continue;
      if (item.node && (item.parent || "") === position()) {
        if (item.html && !entryEl(item.id)) append(item);
        setPosition(item.id);
        moved = true;
        const el = entryEl(item.id);
        settingsChanged ||= !!el && SETTINGS_KINDS.some((kind) => el.classList.contains(kind));
        compacted ||= !!el && el.classList.contains("entry--compaction");
      }
    }
    state.cursor = Math.max(state.cursor, batch.to);
    const last = batch.entries[batch.entries.length - 1]; // a ``leaf`` marker too: it is a line of the file
    if (last && last.end > state.mark.end) state.mark = { end: last.end, id: last.id };
    for (const [id, html] of Object.entries(batch.navs)) replaceNavigator(id, html);
    for (const [id, text] of Object.entries(batch.labels)) setLabel(id, text);
    notePosition(batch.leaf || "");
    if (moved) followBottom(wasAtBottom);
    // A compaction on this branch changes how all of it reads: its summary card takes the place of the
    // history it folds, above. The page is fetched again, as it now is: its tree and pickers with it.
    if (compacted) {
      refetch();
      return;
    }
    if (batch.tree) refreshTree();
    if (settingsChanged) refreshSettings();
  }

  // The composer's pickers, fetched again for the tab's new position (app.js names it in ``at``): they
  // show what the next reply uses, whoever changed it (another tab's picker, or pi writing a
  // thinking_level_change). The request is the element's own, so that it queues behind the element's
  // requests only (htmx.ajax without a source queues every such request behind one another, on the
  // body, keeping only the last one waiting).
  function refreshSettings() {
    const settings = document.getElementById("composer-settings");
    if (!settings || !settings.getAttribute("hx-get")) return;
    // Reaching no server, they stay as they were until the next change fetches them (never an uncaught error).
    htmx.ajax("GET", settings.getAttribute("hx-get"), { source: settings, target: settings, swap: "innerHTML" }).catch(() => {});
  }

  // The file's position is elsewhere: the page's note says this tab shows an earlier point or another
  // branch. When the session moved away from where this tab stood, a note says that instead, and
  // following it fetches the session's own page without a reload.
  function notePosition(leaf) {
    const followed = state.leaf === position();
    state.leaf = leaf;
    const note = document.getElementById("position-note");
    let moved = document.getElementById("moved-note");
    // This tab's own edit or regeneration moves the session to a sibling of what it shows until its
    // answer comes (with the reply): no other tab or program moved it, and the answer shows it there
    // (or, when the answer was lost, the session at its leaf once the reply is stored).
    if (leaf !== position() && (document.querySelector("form[data-stream][data-pending]") || lostAnswers.size)) {
      if (moved) moved.remove();
      return;
    }
    if (leaf === position()) {
      if (note) note.hidden = true;
      if (moved) moved.remove();
      return;
    }
    if (!followed && !moved) {
      if (note) note.hidden = false;
      return;
    }
    if (!moved && note) {
      moved = document.createElement("p");
      moved.id = "moved-note";
      moved.className = "moved-note";
      moved.setAttribute("role", "status");
      moved.append("The session moved to another branch (by another tab or program). ");
      const follow = document.createElement("button");
      follow.type = "button";
      follow.className = "link";
      follow.textContent = "Follow it";
      follow.addEventListener("click", () => {
        history.pushState(history.state, "", sessionUrl());
        refetch(sessionUrl());
      });
      moved.append(follow);
      note.after(moved);
    }
    if (note) note.hidden = true;
  }

  function append(item) {
    const el = fragment(item.html);
    const list = entries();
    if (!el || !list) return;
    const empty = list.querySelector(":scope > .empty-note");
    if (empty) empty.remove();
    const stand = standIn(el, item);
    if (stand) replaceKeepingFocus(stand, el);
    else list.append(el);
    htmx.process(el);
  }

  // What a new entry replaces: the message this tab showed while sending it, or the reply placeholder
  // that grew into it.
  function standIn(el, item) {
    const list = entries();
    if (el.classList.contains("entry--user")) {
      return list.querySelector(":scope > article.entry--user[data-pending-for]");
    }
    if (!el.classList.contains("entry--assistant")) return null;
    const named = list.querySelector(`:scope > [data-reply-entry="${CSS.escape(item.id)}"]`);
    if (named) return named;
    const growing = list.querySelectorAll(`:scope > [data-reply][data-parent="${CSS.escape(item.parent || "")}"]`);
    if (growing.length === 1) return growing[0];
    return list.querySelector(":scope > article.entry--assistant[data-pending-for]");
  }

  // A stand-in that holds the focus (a reply being written, which app.js focuses when the control that
  // asked for it was hidden) hands it on to what replaces it: removed, it would drop it to the body.
  function replaceKeepingFocus(old, el) {
    const focused = old.contains(document.activeElement);
    old.replaceWith(el);
    if (focused) focusHeir(el);
  }

  function focusHeir(el) {
    if (el.tabIndex < 0 && !el.hasAttribute("tabindex")) el.tabIndex = -1; // not a control: focusable by script only
    el.focus({ preventScroll: true });
  }

  function setPosition(id) {
    const t = transcript();
    t.dataset.position = id;
    const parent = document.querySelector("#composer input[name=parent]");
    if (parent) parent.value = id;
    document.querySelectorAll("#entries > article.entry.is-position").forEach((el) => el.classList.remove("is-position"));
    const el = entryEl(id);
    if (el) el.classList.add("is-position");
    if (location.pathname !== sessionUrl()) history.replaceState(history.state, "", permalink(id));
    // Replies under the old position now belong to a sibling branch; those under the new one show.
    document.querySelectorAll("#entries > [data-reply]:not([data-asked])").forEach((reply) => {
      if (reply.dataset.parent !== id) reply.remove();
    });
    state.replies.forEach((message) => showReply(message));
  }

  function replaceNavigator(id, html) {
    const head = document.querySelector(`#entry-${CSS.escape(id)} > .entry__head`);
    const nav = html && fragment(html);
    if (!head || !nav) return;
    const old = head.querySelector(":scope > .navigator");
    if (old) old.replaceWith(nav);
    else head.insertBefore(nav, head.querySelector(":scope > .entry__link"));
    htmx.process(nav);
  }

  function setLabel(id, text) {
    const entry = entryEl(id);
    if (!entry) return;
    const head = entry.querySelector(":scope > .entry__head");
    let tag = head.querySelector(":scope > .tag[title=label]");
    if (!text) {
      if (tag) tag.remove();
    } else {
      if (!tag) {
        tag = document.createElement("span");
        tag.className = "tag";
        tag.title = "label";
        head.insertBefore(tag, head.querySelector(":scope > .navigator, :scope > .entry__link"));
      }
      tag.textContent = text;
    }
    // An open label form shows the label as it is now, unless the reader is typing one there.
    const input = entry.querySelector(":scope > .entry__panel .label-form input[name=label]");
    if (input && input !== document.activeElement) input.value = text || "";
  }

  function updateHead(batch) {
    const meta = document.getElementById("session-meta");
    const fresh = batch.head && fragment(batch.head);
    if (meta && fresh) meta.replaceWith(fresh);
    const title = document.getElementById("session-title");
    if (title && batch.title) title.textContent = batch.title;
    if (batch.doctitle) document.title = batch.doctitle;
    // The Rename field holds the name as it is now (saved as it was, it would undo another's rename),
    // unless the reader is typing a name there.
    if (typeof batch.name !== "string") return;
    const rename = document.querySelector(".rename input[name=name]");
    if (rename && rename !== document.activeElement) rename.value = batch.name;
  }

  // The tree panel is fetched again for this tab's position (app.js waits until it can be seen: a long
  // session's tree costs the server, and a hidden panel or tab catches up when shown).
  function refreshTree() {
    window.pitree.refreshTree();
  }

  // ---- replies being written ----------------------------------------------------------------------
  // Shown where the reply continues the tab's branch, and in the tab that asked for it (a regenerated
  // answer or an edited message is a sibling of what that tab shows until its request returns).
  function showReply(message) {
    const existing = document.getElementById(`reply-${message.reply}`);
    const done = existing && existing.dataset.replyEntry && entryEl(existing.dataset.replyEntry);
    // pi's turn is not named by the request that asked for it: it takes the place of this tab's stand-in.
    const pending = entries().querySelector(
      message.pi ? ":scope > article.entry--assistant[data-pending-for]" : `:scope > article.entry--assistant[data-pending-for="${CSS.escape(message.reply)}"]`,
    );
    const asked = pending || (existing && existing.dataset.asked);
    if (((message.parent || "") !== position() && !asked) || done) {
      if (existing) existing.remove();
      return;
    }
    const el = fragment(message.html);
    if (!el) return;
    const wasAtBottom = atBottom();
    if (existing) {
      // Only the text: the Stop button the reader may be pressing stays where it is.
      existing.querySelector(".stream").replaceWith(el.querySelector(".stream"));
    } else {
      if (pending) {
        if (!message.pi) el.dataset.asked = "1"; // pi's moves on with the entries pi writes
        replaceKeepingFocus(pending, el);
      } else entries().append(el);
      htmx.process(el);
    }
    followBottom(wasAtBottom);
  }

  function endReply(message) {
    state.replies.delete(message.reply);
    const el = document.getElementById(`reply-${message.reply}`);
    if (!el) return;
    window.pitree.replyEnded(message.reply, !!message.entry);
    const entry = message.entry && entryEl(message.entry);
    if (message.entry && !entry) {
      el.dataset.replyEntry = message.entry; // the entry replaces it when it arrives from the file
      return;
    }
    const focused = el.contains(document.activeElement);
    el.remove();
    const composer = composerBox();
    if (focused && (entry || composer)) focusHeir(entry || composer);
  }

  // ---- the transcript swapped by an answer, or fetched again ----------------------------------------
  // An answer to this tab's own action (send, navigate, label) swaps the whole transcript. It was
  // rendered at some byte offset: batches that arrived before it but reach further are applied again.
  document.addEventListener("htmx:afterSwap", (ev) => {
    if (!live() || !(ev.detail.target && ev.detail.target.id === "transcript")) return;
    noteLeaf();
    rebase();
  });

  // Back and Forward put back a page htmx kept (its history cache): as it was when the tab left it,
  // at its cursor then. What the file gained since is applied again, or the page is fetched anew.
  document.addEventListener("htmx:historyRestore", () => {
    if (!live() || !transcript()) return;
    noteLeaf();
    rebase();
  });

  function rebase() {
    const applied = state.cursor;
    takePageCursor();
    const cursor = state.cursor;
    if (applied <= cursor) return;
    const first = state.log.find((batch) => batch.to > cursor);
    if (!first || first.from > cursor) {
      refetch(); // the log does not reach back that far
      return;
    }
    state.log.filter((batch) => batch.to > cursor).forEach(applyBatch);
  }

  // The answer to this tab's own send, edit or regeneration was lost after the server took it (app.js).
  // It would have shown the session at the new reply: once that reply is stored (at once if it is), the
  // tab shows the session at its leaf, the reply. A send is followed anyway (its message and reply
  // continue the tab's branch), but an edit or a regeneration writes a sibling of what the tab shows.
  const lostAnswers = new Set(); // their replies, until the session is shown at its leaf
  document.addEventListener("pitree:answer-lost", (ev) => {
    lostAnswers.add(ev.detail.token);
    if (state.ended.has(ev.detail.token)) showLostAnswers();
  });

  // Shown once their reply ended, or once the socket is back and caught up ("live"): a server that was
  // restarted stored the reply as it stopped (aborted) while the socket was down, and its end is never
  // told; the backlog brought the reply, and the leaf is where it is. (A reply another server process
  // still writes shows there too: its text is sent again to a feed that joins.) A page that could not
  // be fetched (the server restarting) waits for the next time the socket is live.
  async function showLostAnswers() {
    if (!lostAnswers.size) return;
    const shown = Array.from(lostAnswers);
    shown.forEach((token) => state.replies.delete(token)); // its text so far: stored now, or sent again
    if (await openAtLeaf()) shown.forEach((token) => lostAnswers.delete(token));
  }

  // The session's own page, at its leaf: where a lost answer would have taken the tab, and where a tab
  // goes when the session's file is another one now (replaced, rewritten: the entry this tab stands on
  // may not be in it, so its permalink may answer 404), saying so (``note``), or what the reader saw
  // would change without a word.
  const REPLACED = "This session's file was replaced or rewritten (by another program): it shows as the file is now.";

  async function openAtLeaf(note) {
    if (location.pathname !== sessionUrl()) history.replaceState(history.state, "", sessionUrl());
    return refetch(sessionUrl(), note);
  }

  // Fetch the page again at the tab's position (the file changed too much to patch), or at ``url``
  // (the session's own page, to follow it), keeping what the reader was typing, and saying ``note``
  // once it is shown. Whether it was fetched.
  async function refetch(url, note) {
    if (state.waiting) return false;
    state.waiting = [];
    try {
      const response = await fetch(url || permalink(position()), { credentials: "same-origin" });
      const doc = new DOMParser().parseFromString(await response.text(), "text/html");
      const typing = takeTyping(); // now: the reader may have typed on while the page came
      for (const id of ["transcript", "session-meta", "session-title"]) {
        const fresh = doc.getElementById(id);
        const old = document.getElementById(id);
        if (fresh && old) {
          old.replaceWith(fresh);
          htmx.process(fresh);
        }
      }
      if (doc.title) document.title = doc.title;
      const orphaned = restoreTyping(typing);
      takePageCursor();
      noteLeaf();
      state.log = [];
      refreshTree();
      const said = [note, orphaned && ORPHANED].filter(Boolean).join(" ");
      if (said) flash(said); // (the page's own #flash came with it, empty)
      return true;
    } catch (error) {
      flash("This page could not be brought up to date: the server could not be reached. Reload it once the connection is back.");
      return false;
    } finally {
      const waiting = state.waiting;
      state.waiting = null;
      waiting.forEach(receive);
    }
  }

  // ---- what the reader is typing, across a page fetched again --------------------------------------
  // The transcript fetched again replaces the composer and the entries' open panels (Edit & resend,
  // Label, Compact): what is typed there is carried over. An open panel is moved whole onto its entry
  // in the new page (its fields as typed, its form set up by htmx already, so that it still sends); a
  // message typed in the Edit panel of an entry that is not on the new page goes to the message box.
  // The field that had the focus gets it back, its caret or selection where it was.
  const ORPHANED = "The message you were editing is not on this page any more: what you typed there is in the message box.";

  /** What the reader is typing in the transcript, taken before it is replaced. Panels of entries
   *  hidden for this tab's own edit or regeneration are left: what they held was sent. */
  function takeTyping() {
    const box = composerBox();
    const active = document.activeElement;
    const panels = Array.from(document.querySelectorAll("#entries article.entry > .entry__panel"))
      .filter((panel) => !panel.closest("[hidden]"))
      .map((panel) => ({ panel, entry: panel.parentElement.dataset.entry }));
    const typingIn = active && active.closest("#transcript") && typeof active.selectionStart === "number";
    return {
      draft: box ? box.value : "",
      panels,
      focus: typingIn ? { field: active, start: active.selectionStart, end: active.selectionEnd, direction: active.selectionDirection } : null,
      composerFocused: Boolean(box) && active === box,
    };
  }

  /** Put what ``takeTyping`` took into the page fetched again. Whether a message typed in a panel whose
   *  entry is not on it any more went to the message box (after the draft there, a blank line between). */
  function restoreTyping(typing) {
    const box = composerBox();
    const orphans = typing.panels.filter(({ panel, entry }) => !replant(panel, entry));
    const messages = orphans.map(({ panel }) => typedMessage(panel)).filter(Boolean);
    const text = [typing.draft, ...messages].filter(Boolean).join("\n\n");
    if (box && text) box.value = text;
    refocus(typing, box);
    return Boolean(box) && messages.length > 0;
  }

  /** Move an open panel onto its entry in the page fetched again, its button saying it is open. False
   *  when that entry is not there. */
  function replant(panel, id) {
    const entry = entryEl(id);
    const slot = entry && !entry.hidden && entry.querySelector(":scope > .entry__panel");
    if (!slot) return false;
    slot.replaceWith(panel);
    entry.querySelectorAll(":scope > .entry__tools [data-panel]").forEach((tool) => {
      tool.setAttribute("aria-expanded", String(tool.dataset.panel === panel.dataset.action));
    });
    return true;
  }

  /** What the reader wrote in a panel's message (Edit & resend), if they changed it. */
  function typedMessage(panel) {
    const text = panel.querySelector("textarea[name=text]");
    return text && text.value.trim() && text.value !== text.defaultValue ? text.value : "";
  }

  /** The focus back on the field that had it (moved with its panel, or the composer's new box), its
   *  caret as it was. A field not carried over (its entry is gone) hands it to the box, at the end, where
   *  its message went: it would otherwise fall to the page's body. */
  function refocus(typing, box) {
    const { focus } = typing;
    if (!focus) return;
    const field = focus.field.isConnected ? focus.field : box;
    if (!field) return;
    field.focus();
    if (field === focus.field || typing.composerFocused) field.setSelectionRange(focus.start, focus.end, focus.direction);
    else field.setSelectionRange(field.value.length, field.value.length);
  }

  // Whether the page was rendered at the file's position (the server hides its note then).
  function atLeaf() {
    const note = document.getElementById("position-note");
    return Boolean(note && note.hidden);
  }

  // The file's position as this tab last saw it shown, if the tab stands there.
  function noteLeaf() {
    state.leaf = atLeaf() ? position() : null;
  }

  // ---- sending: how far into the file this tab is -------------------------------------------------
  // The composer sends the tab's cursor: a message from a tab that missed how the conversation went on
  // after the entry it answers is refused (views/chat.send), and the refusal's two ways on ("continue
  // from the latest", "send as a new branch here") send the composer again with their own fields.
  let resend = null;
  document.addEventListener("htmx:configRequest", (ev) => {
    if (!live() || !ev.detail.elt || ev.detail.elt.id !== "composer") return;
    const parameters = ev.detail.parameters;
    parameters.cursor = String(state.cursor);
    if (!resend) return;
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
    if (!resend.branch && shownBeyond(resend.parent)) resend = { parent: position(), cursor: "", branch: false };
    try {
      composer.requestSubmit(); // htmx reads the fields now, in its submit handler
    } finally {
      resend = null;
    }
  });

  /** Whether the tab's position is further down the branch than the entry ``id`` (both shown). */
  function shownBeyond(id) {
    const named = id && entryEl(id);
    const at = entryEl(position());
    return Boolean(named && at && named !== at && named.compareDocumentPosition(at) & Node.DOCUMENT_POSITION_FOLLOWING);
  }

  // ---- reading position: new entries do not yank a reader who scrolled up --------------------------
  function atBottom() {
    return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 120;
  }

  function marker() {
    let el = document.getElementById("new-below");
    if (!el) {
      el = document.createElement("button");
      el.type = "button";
      el.id = "new-below";
      el.className = "new-below";
      el.textContent = "New messages below ↓";
      el.hidden = true;
      el.addEventListener("click", () => {
        el.hidden = true;
        window.scrollTo({ top: document.documentElement.scrollHeight });
      });
      document.body.append(el);
    }
    return el;
  }

  function followBottom(wasAtBottom) {
    if (wasAtBottom) window.scrollTo({ top: document.documentElement.scrollHeight });
    else marker().hidden = false;
  }

  window.addEventListener(
    "scroll",
    () => {
      const el = document.getElementById("new-below");
      if (el && !el.hidden && atBottom()) el.hidden = true;
    },
    { passive: true },
  );

  function flash(text) {
    window.pitree.flash(text);
  }

  // ---- the session list ---------------------------------------------------------------------------
  // The server sends the whole listing when the sessions folder changed (and, after a reconnect, at
  // once: changes may have been missed meanwhile).
  let listOpened = false;
  document.addEventListener("htmx:wsOpen", (ev) => {
    const groups = document.getElementById("session-groups");
    if (ev.target !== groups) return;
    const page = Number(groups.dataset.page || 1);
    ev.detail.socketWrapper.send(JSON.stringify({ q: groups.dataset.query || "", page, resume: listOpened }));
    listOpened = true;
  });

  document.addEventListener("htmx:wsBeforeMessage", (ev) => {
    const groups = document.getElementById("session-groups");
    if (ev.target !== groups) return;
    ev.preventDefault();
    let message;
    try {
      message = JSON.parse(ev.detail.message);
    } catch (error) {
      return;
    }
    if (message.t === "live") setLink(groups, "live");
    if (message.t !== "list") return;
    const template = document.createElement("template");
    template.innerHTML = message.html;
    const fresh = Array.from(template.content.children);
    groups.replaceChildren(template.content);
    fresh.forEach((el) => htmx.process(el));
  });

  // The cursor of the page as it was loaded. This script is deferred: it runs once the document is
  // parsed, before htmx opens the socket (on DOMContentLoaded).
  takePageCursor();
  if (live()) {
    live().dataset.live = "connecting";
    noteLeaf();
  }
})();
