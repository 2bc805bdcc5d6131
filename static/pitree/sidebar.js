// The sessions sidebar: it follows the sessions folder (a page's socket says when it changed: live.js),
// keeps its ages current, the focus in it across a refresh, and its filter in the full-text search link.
(function () {
  "use strict";

  const pitree = window.pitree;

  // The full-text search link carries what is typed in the sidebar's filter.
  document.addEventListener("input", (ev) => {
    if (ev.target.id !== "sidebar-filter") return;
    const link = document.querySelector("[data-search-link]");
    if (!link) return;
    const url = new URL(link.href);
    if (ev.target.value.trim()) url.searchParams.set("q", ev.target.value.trim());
    else url.searchParams.delete("q");
    link.href = url.pathname + url.search;
  });

  // The sidebar's list arrived: the first time, the session on screen is scrolled into its view.
  let sidebarShown = false;
  document.addEventListener("htmx:afterSwap", (ev) => {
    if (!ev.detail.target || ev.detail.target.id !== "sidebar-list") return;
    showAges(ev.detail.target); // by this browser's clock, as the minute ticks will be
    if (sidebarShown) return;
    sidebarShown = true;
    const current = ev.detail.target.querySelector("a[aria-current=page]");
    if (current) current.scrollIntoView({ block: "nearest" });
  });

  // A page's socket says when the sessions folder changed (a new session, a first message, a rename,
  // here or anywhere: live.js): the list is fetched again then, for what its filter holds and as many
  // pages as were scrolled in. Its ages ("3 minutes ago") are kept current meanwhile.
  let sidebarTimer = 0;

  /** Fetch the list again (soon, once for a burst of changes). */
  pitree.refreshSidebar = () => {
    clearTimeout(sidebarTimer);
    sidebarTimer = setTimeout(refreshSidebar, 200);
  };

  // The pages the sidebar shows: one after the filter was typed in, one more for each "More sessions".
  document.addEventListener("htmx:beforeRequest", (ev) => {
    const list = document.getElementById("sidebar-list");
    const elt = ev.detail.elt;
    if (!list || !elt) return;
    if (elt.id === "sidebar-filter" || elt.id === "sidebar-workspace") delete list.dataset.pages;
    else if (elt.classList.contains("sidebar__more") && list.contains(elt)) list.dataset.pages = elt.dataset.page;
  });

  // A refresh that brings the very list shown (the folder changed outside what it lists) is not
  // swapped, so that the focus, a hover or a selection in it stay; one that changes it puts the focus
  // back on the link it was on.
  // What was last swapped in is kept on the list element itself: a page that Back puts back has a list
  // of its own (as it was then), which the next answer must replace, and a page of "More sessions"
  // added to the list makes it another list.
  let sidebarFocus = null; // the link that had the focus, by its address
  document.addEventListener("htmx:beforeSwap", (ev) => {
    const list = document.getElementById("sidebar-list");
    if (!list || !ev.detail.shouldSwap) return;
    if (ev.detail.target !== list) {
      if (list.contains(ev.detail.target)) list.pitreeShown = null;
      return;
    }
    if (ev.detail.serverResponse === list.pitreeShown) {
      ev.detail.shouldSwap = false;
      return;
    }
    list.pitreeShown = ev.detail.serverResponse;
    const focused = list.contains(document.activeElement) && document.activeElement.closest("a[href]");
    sidebarFocus = focused ? focused.getAttribute("href") : null;
  });

  document.addEventListener("htmx:afterSwap", (ev) => {
    const list = document.getElementById("sidebar-list");
    if (!list || ev.detail.target !== list || !sidebarFocus) return;
    const link = list.querySelector(`a[href="${CSS.escape(sidebarFocus)}"]`);
    sidebarFocus = null;
    if (link) link.focus({ preventScroll: true });
  });

  function refreshSidebar() {
    const list = document.getElementById("sidebar-list");
    const filter = document.getElementById("sidebar-filter");
    if (!list || !filter) return;
    const url = new URL(filter.getAttribute("hx-get"), window.location.href);
    if (filter.value.trim()) url.searchParams.set("q", filter.value.trim());
    const workspace = document.getElementById("sidebar-workspace");
    if (workspace && workspace.value) url.searchParams.set("workspace", workspace.value);
    if (list.dataset.pages) url.searchParams.set("through", list.dataset.pages);
    // Reaching no server, it is made again when the list's socket is back (its "resume" brings a notice).
    htmx.ajax("GET", url.pathname + url.search, { source: list, target: list, swap: "innerHTML" }).catch(() => {});
  }

  // Ages as the server words them (Django's timesince: the largest unit, in calendar months and years
  // beyond a month, with a no-break space; "just now" under a minute).
  const SHORT_UNITS = [
    ["week", 7 * 864e5],
    ["day", 864e5],
    ["hour", 36e5],
    ["minute", 6e4],
  ];

  function counted(count, unit) {
    return count ? `${count}\u00a0${unit}${count === 1 ? "" : "s"} ago` : "just now";
  }

  function age(ms) {
    const then = new Date(ms);
    const now = new Date();
    if (now <= then) return counted(0, "minute");
    let months = (now.getUTCFullYear() - then.getUTCFullYear()) * 12 + now.getUTCMonth() - then.getUTCMonth();
    const inMonth = (d) => (((d.getUTCDate() * 24 + d.getUTCHours()) * 60 + d.getUTCMinutes()) * 60 + d.getUTCSeconds()) * 1000 + d.getUTCMilliseconds();
    if (inMonth(then) > inMonth(now)) months -= 1;
    if (months >= 12) return counted(Math.floor(months / 12), "year");
    if (months >= 1) return counted(months, "month");
    const since = now - then;
    const [unit, size] = SHORT_UNITS.find(([, length]) => since >= length) || SHORT_UNITS[SHORT_UNITS.length - 1];
    return counted(Math.floor(since / size), unit);
  }

  function showAges(root) {
    root.querySelectorAll("time[data-ago]").forEach((el) => {
      const ms = Date.parse(el.getAttribute("datetime"));
      if (!Number.isNaN(ms)) el.textContent = age(ms);
    });
  }

  setInterval(() => {
    const list = document.getElementById("sidebar-list");
    if (list && !document.hidden) showAges(list);
  }, 60e3);
})();
