// The shell: the drawers (sessions, tree), the theme switch, and the link that skips to the message box.
(function () {
  "use strict";

  const pitree = window.pitree;

  const root = document.documentElement;
  const wide = window.matchMedia("(min-width: 75rem)");

  function drawerOf(name) {
    return document.getElementById(name === "tree" ? "tree-aside" : "sidebar");
  }

  function syncToggles() {
    document.querySelectorAll("[data-toggle-drawer]").forEach((toggle) => {
      const name = toggle.dataset.toggleDrawer;
      const open = name === "tree" && wide.matches ? root.dataset.tree !== "closed" : document.body.dataset.drawer === name;
      toggle.setAttribute("aria-expanded", String(open));
    });
    const backdrop = document.querySelector(".drawer-backdrop");
    if (backdrop) backdrop.hidden = !document.body.dataset.drawer;
  }

  // While a drawer is open, what it covers is inert: Tab stays in the drawer and the top bar instead of
  // reaching controls hidden under it (WCAG 2.4.3, 2.4.11).
  function setCovered(drawer) {
    document.querySelectorAll(".shell > *").forEach((el) => {
      el.inert = !!drawer && el !== drawer && !el.contains(drawer);
    });
  }

  function openDrawer(name) {
    document.body.dataset.drawer = name;
    syncToggles();
    const drawer = drawerOf(name);
    setCovered(drawer);
    const first = drawer && drawer.querySelector("[role=treeitem][tabindex='0'], input, a[href], button");
    if (first) first.focus();
    if (name === "tree") document.dispatchEvent(new Event("pitree:tree-shown"));
  }

  function closeDrawer() {
    const name = document.body.dataset.drawer;
    if (!name) return;
    delete document.body.dataset.drawer;
    syncToggles();
    setCovered(null);
    const toggle = document.querySelector(`[data-toggle-drawer="${name}"]`);
    if (toggle && toggle.offsetParent !== null) toggle.focus();
  }

  function setTreeOpen(open) {
    if (open) delete root.dataset.tree;
    else root.dataset.tree = "closed";
    pitree.store("pitree:tree", open ? null : "closed");
    syncToggles();
    if (open) document.dispatchEvent(new Event("pitree:tree-shown"));
  }

  document.addEventListener("click", (ev) => {
    const toggle = ev.target.closest && ev.target.closest("[data-toggle-drawer]");
    if (toggle) {
      const name = toggle.dataset.toggleDrawer;
      if (name === "tree" && wide.matches) setTreeOpen(root.dataset.tree === "closed");
      else if (document.body.dataset.drawer === name) closeDrawer();
      else openDrawer(name);
      return;
    }
    const close = ev.target.closest && ev.target.closest("[data-close-drawer]");
    if (close) {
      if (document.body.dataset.drawer) closeDrawer();
      else if (close.closest("#tree-aside")) setTreeOpen(false);
    }
  });

  wide.addEventListener("change", () => {
    if (wide.matches && document.body.dataset.drawer === "tree") {
      delete document.body.dataset.drawer;
      setCovered(null);
    }
    syncToggles();
  });

  const themeSwitch = document.getElementById("theme-switch");
  if (themeSwitch) {
    themeSwitch.value = root.dataset.theme || "system";
    themeSwitch.closest("label").hidden = false;
    themeSwitch.addEventListener("change", () => {
      const theme = themeSwitch.value === "system" ? null : themeSwitch.value;
      if (theme) root.dataset.theme = theme;
      else delete root.dataset.theme;
      pitree.store("pitree:theme", theme);
    });
  }


  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && document.body.dataset.drawer) closeDrawer();
  });

  // stays as it was (a "#composer-text" in it would keep a reload from opening at the newest message).
  document.addEventListener("click", (ev) => {
    const skip = ev.target.closest && ev.target.closest("[data-skip-to-composer]");
    const box = skip && pitree.composerBox();
    if (!box) return;
    ev.preventDefault();
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
  });

  syncToggles();
})();
