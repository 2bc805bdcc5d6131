// The send path: a send, an edit or a regeneration is answered once its reply is stored; meanwhile the
// socket shows what the server writes (the message, the reply growing: live.js). A send empties the
// message box (the text comes back if it is refused). An edit or a regeneration moves the tab to the
// entry its new branch grows from: what it replaces is hidden until the answer comes, and shown again
// if refused. An answer lost after the server took the request is told apart from a refusal by what the
// socket said (the reply started), so that nothing is sent twice.
(function () {
  "use strict";

  const pitree = window.pitree;

  let askedReply = null;

  /** The reply an edit or a regeneration asked for, while the control that asked is hidden (live.js
   *  gives it the focus when it shows); ``null`` forgets it. */
  pitree.askedReply = (token) => {
    if (token !== undefined) askedReply = token;
    return askedReply;
  };

  // The answer to a send or a regenerate comes when its reply is stored (its stream token names the
  // reply). It swaps the transcript, form and all: the form's own events reach no listener then.
  document.addEventListener("htmx:afterSwap", (ev) => {
    const token = streamToken(ev.detail);
    if (token && ev.detail.xhr && ev.detail.xhr.status < 400) pitree.replyEnded(token, true);
  });

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
      pitree.draftSent(sent.get(token));
    }
    pitree.toBottom(); // the view follows what the socket appends (live.js keeps a reader at the bottom there)
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
  pitree.heard = (token) => {
    if (document.querySelector(`form[data-stream][data-pending="${CSS.escape(token)}"]`)) seen.add(token);
  };

  /** Whether the request an htmx error is about had been taken by the server: then that is said (app.js
   *  says nothing more). */
  pitree.saidTaken = (detail) => {
    if (!tookIt(streamToken(detail), detail.xhr)) return false;
    pitree.flash(TAKEN);
    return true;
  };

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
      pitree.saveDraft();
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
    const box = pitree.composerBox();
    const xhr = ev.detail.xhr;
    // An answer that sends the tab elsewhere (the beam's page: HX-Redirect) is never marked successful.
    const taken = ev.detail.successful || (xhr && xhr.getResponseHeader("HX-Redirect"));
    if (!queued || !box || !taken || !xhr || xhr.status >= 300) return;
    const text = box.value;
    box.value = "";
    pitree.draftSent(text);
  });

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
})();
