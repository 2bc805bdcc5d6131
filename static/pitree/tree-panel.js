// The tree panel: fetched again after a move or an append while it is shown, with what the reader opened
// in it (its folds, earlier pages) and the row they were reading kept; an ARIA tree (arrows, Home/End,
// Enter; C on a branch point compares its branches).
(function () {
  "use strict";

  const pitree = window.pitree;

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

  pitree.refreshTree = refreshTree;
  document.body.addEventListener("pitree:moved", refreshTree);
  document.addEventListener("pitree:tree-shown", treeMaybeStale);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) treeMaybeStale();
  });
  window.addEventListener("online", treeMaybeStale);
  document.addEventListener("htmx:wsOpen", (ev) => {
    if (ev.target.id === "live") treeMaybeStale();
  });

  // The panel is an ARIA tree: one row in the tab order, arrows move.
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

  document.addEventListener("keydown", (ev) => {
    if (ev.target.matches && ev.target.matches("[role=treeitem]")) treeKey(ev, ev.target);
  });

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
})();
