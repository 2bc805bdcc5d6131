// Send becomes Stop while a reply is written where this tab stands, and the composer's hint says what
// Enter does meanwhile.
(function () {
  "use strict";

  const pitree = window.pitree;

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
    if (!reply) pitree.unflash("reply-ends"); // the message waiting in the box may be sent now
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
    const box = pitree.composerBox();
    if (!keys || !box) return;
    if (keys.dataset.idle === undefined) keys.dataset.idle = keys.textContent;
    const queue = streaming && streaming.querySelector("form.pi-queue[data-keys]");
    const said = queue ? queue.dataset.keys : keys.dataset.idle;
    // Written only when it changes: a write is a mutation of #live, which calls this again.
    if (keys.textContent !== said) keys.textContent = said;
    box.setAttribute("aria-keyshortcuts", queue ? "Enter Alt+Enter" : "Enter");
  }

  document.addEventListener("click", (ev) => {
    const stopButton = ev.target.closest && ev.target.closest("[data-stop]");
    if (!stopButton) return;
    // Stop takes Send's place under the pointer: the second click of a double click on Send is no
    // Stop (it stopped the reply just asked for, before its first word). A click of its own is.
    if (ev.detail > 1) return;
    const stopForm = document.getElementById("stop-reply");
    if (stopForm && stopForm.elements.reply.value) stopForm.requestSubmit();
  });

  const live = document.getElementById("live");
  if (live) {
    new MutationObserver(syncStop).observe(live, {
      childList: true,
      subtree: true,
      attributes: true,
      attributeFilter: ["data-pending"],
    });
    syncStop();
  }
})();
