// The share dialog: the share page's form (a page of its own without JavaScript), loaded into a modal
// <dialog>, opened once it is in.
(function () {
  "use strict";

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
})();
