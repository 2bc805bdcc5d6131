// The message box's draft, kept in the browser across reloads and closed tabs. Saved as the reader types
// (a moment after the last key), per session; put back on load into an empty box only, so that nothing
// a tab shows is ever overwritten (with two tabs, the last one typed in wins the next reload). What a
// send took leaves it when the box empties for the reply: the message is in the conversation then, and
// a reload offering it again could send it twice (a refused send puts it back, and here too).
(function () {
  "use strict";

  const pitree = window.pitree;

  const { composerBox, store, stored } = pitree;
  const DRAFT_DELAY_MS = 400;
  let draftTimer = 0;

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

  pitree.saveDraft = saveDraft;
  pitree.draftSent = draftSent;
  restoreDraft();
})();
