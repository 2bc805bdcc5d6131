// A long message's "Show all" and a long code block's unfold (the server renders both folded: a capped
// height that scrolls, which is how they read without a script).
(function () {
  "use strict";

  const pitree = window.pitree;

  document.addEventListener("click", (ev) => {
    const long = ev.target.closest && ev.target.closest("[data-show-long]");
    if (long) {
      const open = long.getAttribute("aria-expanded") !== "true";
      pitree.showWhole(long.previousElementSibling, long, open);
      if (!open) long.closest("article.entry").scrollIntoView({ block: "nearest" }); // back to what was folded
      return;
    }
    const expand = ev.target.closest && ev.target.closest("[data-expand-code]");
    if (expand) {
      const code = expand.closest(".code");
      pitree.showWhole(code, expand, !code.classList.contains("is-open"));
    }
  });
})();
