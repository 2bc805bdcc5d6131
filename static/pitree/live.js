// Live pages. What a page's websocket brings is HTML the server rendered for this very tab, and htmx's
// websocket extension swaps it in (every element in it says where: sessions_app/live/tabs.py): new
// entries of the branch the tab shows, counts and labels that changed, the header, the note about the
// file's position, replies being written. The server keeps where the tab stands; this script tells it
// where the page is, on every connect and every move (a page answered or fetched again, an edit or a
// regeneration asked for), and keeps what only a browser can: the reader's place in the page, the focus
// and what is typed across a page fetched again, and a badge while the socket is down.
// A message begins with a comment naming the move it was made for (one made for a page the tab has
// left since is dropped: the socket answers the tab's new page from its cursor) and what the page
// fetches again itself, holding what its reader opened there: the tree panel, the composer's pickers,
// the sessions sidebar; or that it grew (the comparison and the map).
(function () {
  "use strict";

  // A socket that dropped (the server restarting, the network gone) tries again soon: about half a
  // second, then twice as long each time, never more than 5 s apart, each wait jittered so that the
  // tabs of a restarted server do not all come back at once. (htmx's own "full-jitter" waits up to
  // 64 s: a tab could stay dark for a minute after the server was back.)
  const RECONNECT_CAP_MS = 5000;
  window.pitree.reconnectDelay = (retry) => Math.min(500 * 2 ** retry, RECONNECT_CAP_MS) * (0.5 + Math.random() / 2);
  htmx.config.wsReconnectDelay = window.pitree.reconnectDelay;

  const HEAD = /^<!--pitree(?: v=(\d+))?(?: do=([\w:,-]+))?-->/;
  const ORPHANED = "The message you were editing is not on this page any more: what you typed there is in the message box.";

  let view = 0; // the tab's moves, as its socket was told them
  let session = null; // the session page's socket, once open
  const opened = new WeakSet(); // socket elements that opened once: the next open is a reconnect
  let topSent = "";

  const live = () => document.getElementById("live");
  const tabState = () => document.getElementById("tab-state");
  const entries = () => document.getElementById("entries");
  const flash = (text) => window.pitree.flash(text);

  // ---- where the page is --------------------------------------------------------------------------
  /** The page's entry, cursor and what it shows, as the socket needs them (``at``: another entry the
   *  tab moves to, for an edit or a regeneration it asked for). */
  function whereAt(at) {
    const state = tabState();
    const first = document.querySelector("#entries article.entry[data-entry]");
    const note = document.getElementById("position-note");
    topSent = first ? first.dataset.entry : "";
    view += 1;
    return {
      v: view,
      at: at === undefined ? state.dataset.position : at,
      cursor: Number(state.dataset.cursor || 0),
      id: state.dataset.cursorId,
      top: topSent,
      notes: document.getElementById("moved-note") ? "moved" : note && !note.hidden ? "position" : "none",
      replies: Array.from(document.querySelectorAll("#entries > [data-reply]"), (el) => el.dataset.reply),
      asked: Array.from(document.querySelectorAll("form[data-stream][data-pending]"), (form) => form.dataset.pending),
    };
  }

  /** Tell the socket the tab is on another page now (nothing while it is down: it says so on opening). */
  function moved(at) {
    if (session && live() && tabState()) session.sendImmediately(JSON.stringify(whereAt(at)));
  }

  document.addEventListener("htmx:wsOpen", (ev) => {
    const socket = ev.detail.socketWrapper;
    socket.queue.length = 0; // what a page said while the socket was down: this says where it is now
    const resume = opened.has(ev.target);
    opened.add(ev.target);
    setLink(ev.target, "open");
    if (ev.target === live()) {
      session = socket;
      socket.send(JSON.stringify({ ...whereAt(), sidebar: true, resume }));
    } else if (ev.target.id === "session-groups") {
      const groups = ev.target;
      const workspace = groups.dataset.workspace || "";
      const listed = groups.dataset.listed || ""; // the listing the page shows: sent again if the folder changed since
      socket.send(JSON.stringify({ q: groups.dataset.query || "", page: Number(groups.dataset.page || 1), workspace, listed, resume }));
    } else if (ev.target.id === "sidebar-list") {
      socket.send(JSON.stringify({ q: "", page: 1, resume, notify: true }));
    } else if (ev.target.matches("[ws-connect='/ws/follow/']")) {
      const follow = JSON.parse(document.getElementById("follow-state").dataset.follow);
      const beam = document.querySelector(".compare[data-replies]"); // a beam's answers being written
      socket.send(JSON.stringify({ follow, replies: beam ? JSON.parse(beam.dataset.replies) : [] }));
    }
  });

  // A page answered (a message sent, a branch switched) or fetched again, and a page Back put back
  // (its socket opens anew), is another page: the socket is told, and answers from its cursor.
  document.addEventListener("htmx:afterSwap", (ev) => {
    if (ev.detail.target && ev.detail.target.id === "transcript" && live()) moved();
    else if (ev.detail.target && entries() && entries().contains(ev.detail.target)) scrolled();
  });

  // Older entries loaded above, or a compaction's fold opened: entries the socket may update now.
  function scrolled() {
    const first = document.querySelector("#entries article.entry[data-entry]");
    const top = first ? first.dataset.entry : "";
    if (session && top !== topSent) {
      topSent = top;
      session.sendImmediately(JSON.stringify({ top }));
    }
  }

  // An edit or a regeneration moves the tab to the entry its new branch grows from (the page hides
  // what it replaces meanwhile: sending.js); refused, it moves back.
  document.addEventListener("pitree:moving", (ev) => moved(ev.detail.at));

  // ---- messages -----------------------------------------------------------------------------------
  let before = null; // the page as a message found it

  document.addEventListener("htmx:wsBeforeMessage", (ev) => {
    const head = HEAD.exec(ev.detail.message);
    if (head && head[1] !== undefined && ev.target === live() && Number(head[1]) !== view) {
      ev.preventDefault(); // made for a page this tab has left
      return;
    }
    const active = document.activeElement;
    before = {
      todo: head && head[2] ? head[2].split(",") : [],
      bottom: atBottom(),
      height: document.documentElement.scrollHeight,
      position: tabState() ? tabState().dataset.position : "",
      reply: active && active.closest && active.closest("#entries > [data-reply]"),
      replies: Array.from(document.querySelectorAll("#entries > [data-reply]")),
      last: lastEntry(),
    };
  });

  document.addEventListener("htmx:wsAfterMessage", (ev) => {
    const was = before;
    before = null;
    if (!was) return;
    for (const todo of was.todo) {
      if (todo === "live") setLink(ev.target, "live");
      else if (todo === "tree") window.pitree.refreshTree();
      else if (todo === "settings") refreshSettings();
      else if (todo === "sidebar") window.pitree.refreshSidebar();
      else if (todo === "grew") document.dispatchEvent(new CustomEvent("pitree:grew"));
      else if (todo.startsWith("reply:")) window.pitree.heard(todo.slice(6));
    }
    if (ev.target !== live()) return;
    const title = document.getElementById("session-title");
    if (title && title.dataset.doctitle) document.title = title.dataset.doctitle;
    const state = tabState();
    if (state && state.dataset.position !== was.position) {
      markPosition();
      if (location.pathname !== sessionUrl()) history.replaceState(history.state, "", state.dataset.url || sessionUrl());
    }
    // A reply being written that ended: said to a screen reader once it is stored (its entry came), and
    // the focus it had goes to what took its place.
    const last = lastEntry();
    was.replies.forEach((reply) => {
      if (!reply.isConnected && last !== was.last) window.pitree.replyEnded(reply.dataset.reply, true);
    });
    if (was.reply && !was.reply.isConnected) focusHeir();
    focusAskedReply();
    if (document.documentElement.scrollHeight > was.height) followBottom(was.bottom);
  });

  function sessionUrl() {
    return live().dataset.sessionUrl;
  }

  /** The entry the tab stands on is marked (the server moved it there). */
  function markPosition() {
    const at = tabState() ? tabState().dataset.position : "";
    document.querySelectorAll("#entries > article.entry.is-position").forEach((el) => {
      if (el.dataset.entry !== at) el.classList.remove("is-position");
    });
    const el = at && document.getElementById(`entry-${at}`);
    if (el) el.classList.add("is-position");
  }

  /** The newest entry the page shows (a reply being written aside). */
  function lastEntry() {
    const shown = entries() ? entries().querySelectorAll(":scope > article.entry[data-entry]") : [];
    return shown.length ? shown[shown.length - 1] : null;
  }

  function focusHeir() {
    const heir = lastEntry() || window.pitree.composerBox();
    if (!heir) return;
    if (heir.tabIndex < 0 && !heir.hasAttribute("tabindex")) heir.tabIndex = -1; // focusable by script only
    heir.focus({ preventScroll: true });
  }

  // The reply an edit or a regeneration asked for takes the focus when it shows, if the control that
  // asked was hidden with what it replaces (sending.js names it): it would fall to the page's body.
  function focusAskedReply() {
    const asked = window.pitree.askedReply();
    const reply = asked && document.getElementById(`reply-${asked}`);
    if (!reply) return;
    const active = document.activeElement;
    if (!active || active === document.body || active.closest("[hidden]")) {
      reply.tabIndex = -1;
      reply.focus({ preventScroll: true });
    }
    window.pitree.askedReply(null);
  }

  // The composer's pickers, fetched again for where the tab stands (app.js names it in ``at``): they
  // show what the next reply uses, whoever changed it. The request is the element's own, so that it
  // queues behind the element's requests only. They are morphed in: the pickers stay the same elements,
  // so a list the reader has open is not closed under them and what they pick in it is sent (htmx sends
  // nothing for a form that left the page).
  function refreshSettings() {
    const settings = document.getElementById("composer-settings");
    if (!settings || !settings.getAttribute("hx-get")) return;
    // Reaching no server, they stay as they were until the next change fetches them.
    htmx.ajax("GET", settings.getAttribute("hx-get"), { source: settings, target: settings, swap: "morph:innerHTML" }).catch(() => {});
  }

  // A field the reader is typing in is not replaced under them (the Rename field after another's rename).
  document.addEventListener("htmx:oobBeforeSwap", (ev) => {
    const target = ev.detail.target;
    if (target === document.activeElement && target.matches("input, textarea")) ev.detail.shouldSwap = false;
  });

  // A page fetched again by the socket's say (#resync) that reaches no server stays as it was.
  document.addEventListener("htmx:sendError", (ev) => {
    if (ev.detail.elt && ev.detail.elt.id === "resync") {
      flash("This page could not be brought up to date: the server could not be reached. Reload it once the connection is back.");
    }
  });

  // ---- a page morphed in: what the reader typed, the panels open, the focus stay -------------------
  // A page fetched again (a compaction, a file replaced, Follow it) is morphed into the one shown:
  // entries that stay keep what the reader opened in them; the message box, the panels open on entries
  // (Edit & resend, Label: their forms as typed) and the refusals said are kept as they are. A message
  // typed in the Edit panel of an entry the new page does not show goes to the message box.
  function keep(old) {
    if (!(old instanceof Element)) return false;
    if (old.id === "composer-text" || old.id === "flash") return true;
    if (old.matches(".entry__panel") && !old.hidden) return true;
    const entry = old.matches(".entry__tools") && old.parentElement;
    return Boolean(entry && entry.querySelector(":scope > .entry__panel:not([hidden])"));
  }

  function rescue(node) {
    if (!(node instanceof Element)) return;
    const typed = Array.from(node.querySelectorAll(".entry__panel:not([hidden]) textarea[name=text]")).filter(
      (text) => text.value.trim() && text.value !== text.defaultValue,
    );
    const box = window.pitree.composerBox();
    if (!typed.length || !box) return;
    box.value = [box.value, ...typed.map((text) => text.value)].filter(Boolean).join("\n\n");
    if (typed.some((text) => text === document.activeElement)) {
      box.focus();
      box.setSelectionRange(box.value.length, box.value.length);
    }
    flash(ORPHANED);
  }

  document.addEventListener("DOMContentLoaded", () => {
    if (!window.Idiomorph) return; // only the session page morphs
    Idiomorph.defaults.callbacks.beforeNodeMorphed = (old) => !keep(old);
    Idiomorph.defaults.callbacks.beforeNodeRemoved = (node) => {
      rescue(node);
      return true;
    };
  });

  // ---- the socket's state: a badge while it is down -------------------------------------------------
  document.addEventListener("htmx:wsClose", (ev) => {
    // (A socket of a page Back replaced closes as the page it belonged to goes: nothing to say.)
    if (!ev.target.hasAttribute("ws-connect") || !ev.target.isConnected) return;
    if (ev.target === live()) session = null;
    beforeOffline.delete(ev.target); // closed for real: it reconnects
    const code = ev.detail.event.code;
    if (code >= 4000) {
      // The extension does not retry 4xxx closes. 4404: the file was deleted or the reader's access
      // ended (the server said which); anything else is a bug of this page.
      setLink(ev.target, "stopped");
      if (ev.target === live() && code !== 4404) flash("Live updates stopped.");
      else if (code === 4429) {
        flash("You have too many session lists open (in other tabs): this one no longer follows the folder. Reload it once some are closed.");
      }
    } else {
      setLink(ev.target, "closed");
    }
  });

  function setLink(el, value) {
    el.dataset.live = value;
    const down = ["closed", "stopped"].includes(value);
    const badge = document.getElementById("live-status"); // base.html
    badge.hidden = !down;
    if (!down) return;
    if (value === "stopped") badge.textContent = "Live updates stopped";
    else badge.textContent = navigator.onLine === false ? "Offline: reconnecting when the network is back…" : "Reconnecting…";
    badge.dataset.state = value;
  }

  // Offline, a socket may stay open with nothing getting through (the browser need not close it): the
  // badge says so at once. Back online, a socket that did not close meanwhile is as it was (what the
  // server sent meanwhile arrives now); one that closed reconnects from its cursor, as always.
  const beforeOffline = new Map(); // socket element -> its state when the network went
  window.addEventListener("offline", () => {
    document.querySelectorAll("[ws-connect]").forEach((el) => {
      if (el.dataset.live === "stopped") return;
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

  // ---- reading position: new entries do not yank a reader who scrolled up --------------------------
  function atBottom() {
    return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 120;
  }

  // "New messages below" (session.html) takes the reader down to them.
  document.addEventListener("click", (ev) => {
    const marker = ev.target.closest && ev.target.closest("#new-below");
    if (!marker) return;
    marker.hidden = true;
    window.pitree.toBottom();
  });

  function followBottom(wasAtBottom) {
    if (wasAtBottom) window.pitree.toBottom();
    else document.getElementById("new-below").hidden = false;
  }

  window.addEventListener(
    "scroll",
    () => {
      const el = document.getElementById("new-below");
      if (el && !el.hidden && atBottom()) el.hidden = true;
    },
    { passive: true },
  );

  // This script is deferred: it runs once the document is parsed, before htmx opens the sockets.
  document.querySelectorAll("[ws-connect]").forEach((el) => {
    el.dataset.live = "connecting";
  });
})();
