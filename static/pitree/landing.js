// Where a session page opens: at the entry its address names (a search result's permalink: the words
// found marked, the folds holding them open), else at its newest message.
(function () {
  "use strict";

  const pitree = window.pitree;

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
      if (long) pitree.showWhole(long, long.nextElementSibling, true);
    });
    if (!marks.length && !fromLoad) entry.querySelectorAll("details").forEach((fold) => (fold.open = true));
    (marks[0] || entry).scrollIntoView({ block: "center" });
  }

  document.addEventListener("htmx:afterSwap", (ev) => {
    if (found && found.entry.isConnected && ev.detail.target && found.entry.contains(ev.detail.target)) showFound(true);
  });

  // A session opens at its newest message, with the composer in view (unless the address names a spot).
  if (document.getElementById("live")) {
    if ("scrollRestoration" in history) history.scrollRestoration = "manual";
    // The folds it opens load through htmx: opened only once htmx has taken the page in (its own
    // DOMContentLoaded listener came first), so that their "toggle" is heard.
    if (found) document.addEventListener("DOMContentLoaded", () => showFound(false), { once: true });
    else if (!location.hash) pitree.toBottom();
    // A session without a message yet (just started): the message box has the focus, as its page says.
    const box = pitree.composerBox();
    if (box && !location.hash && !document.querySelector("#entries > article.entry--user, #entries > article.entry--assistant")) {
      box.focus({ preventScroll: true });
    }
  }
})();
