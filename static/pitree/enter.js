// The keys of a message box, as chat apps have them: Enter sends, Shift+Enter adds a line; Ctrl+Enter
// (or Cmd+Enter) sends too, in any of the app's text boxes. While pi works where the tab stands, the
// composer's Enter steers pi and Alt+Enter queues a follow-up, as pi's own editor does. On a touch
// screen, whose keyboard has no Shift to hold, Enter adds a line and the Send button sends. While an input method composes a word
// (Japanese, Chinese, Korean…), Enter picks the word and never sends.
(function () {
  "use strict";

  // A phone or a tablet without a mouse: its on-screen keyboard's Enter is how a line is added.
  const touchFirst = window.matchMedia("(hover: none) and (pointer: coarse)");

  /** Whether this key press asks ``box`` to send its form. */
  function sends(ev, box) {
    if (ev.key !== "Enter" || ev.isComposing || ev.keyCode === 229 || ev.altKey) return false;
    if (ev.ctrlKey || ev.metaKey) return true;
    // Enter alone sends only the boxes that hold a message (the composer, Edit & resend).
    return !ev.shiftKey && !touchFirst.matches && box.matches("form[data-stream] textarea[name=text]");
  }

  /** pi's queue while pi works where the tab stands (its turn's Steer and Follow up): what is typed in
   *  the composer meanwhile goes there, as in pi's own editor (Enter steers, Alt+Enter follows up). */
  function piQueue(box) {
    return box.matches("#composer textarea[name=text]") ? document.querySelector("#entries > article[data-pi] form.pi-queue") : null;
  }

  /** Whether this key press is Alt+Enter alone (pi's follow-up key). */
  function followsUp(ev) {
    return ev.key === "Enter" && ev.altKey && !ev.shiftKey && !ev.ctrlKey && !ev.metaKey && !ev.isComposing && ev.keyCode !== 229;
  }

  document.addEventListener("keydown", (ev) => {
    const box = ev.target;
    if (!box.matches || !box.matches("form textarea")) return;
    const queue = piQueue(box);
    const followUp = Boolean(queue) && followsUp(ev);
    if (!followUp && !sends(ev, box)) return;
    ev.preventDefault();
    if (queue) {
      // A click on the turn's button: htmx sends the box's text with that button's choice.
      if (box.value.trim()) queue.querySelector(`button[value="${followUp ? "follow_up" : "steer"}"]`).click();
      return;
    }
    const form = box.form;
    // While a reply is written on this branch, asked here or in another tab, what is typed stays in
    // the box: Send is Stop meanwhile.
    const send = form.querySelector("button.send");
    if (!form.dataset.pending && !(send && send.hidden)) form.requestSubmit();
    else if (form.id === "composer" && box.value.trim() && window.pitree) {
      window.pitree.flash(
        "A reply is being written on this branch: your message stays in the box until it ends (or until you stop it).",
        "reply-ends",
      );
    }
  });
})();
