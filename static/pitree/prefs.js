// Runs in <head>, before the page is drawn (it is not deferred): applies what the reader chose and
// the browser remembers, so that the page never shows first in the wrong theme or with the tree panel
// the reader closed. The content security policy allows no inline script; this file is the app's own.
(function () {
  "use strict";
  const root = document.documentElement;
  root.dataset.js = ""; // styles that need a script to undo them (folds.js) (a long message folded) apply only now
  try {
    const theme = localStorage.getItem("pitree:theme");
    if (theme === "light" || theme === "dark") root.dataset.theme = theme;
    if (localStorage.getItem("pitree:tree") === "closed") root.dataset.tree = "closed";
  } catch (error) {
    // Storage refused (a private window's policy): the system's theme and the default layout.
  }
  // The reader's time zone, for what the server groups by day (the session list's Today, Yesterday…).
  try {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const cookie = `pitree_tz=${encodeURIComponent(zone)}`;
    if (zone && !document.cookie.split("; ").includes(cookie)) {
      document.cookie = `${cookie}; path=/; max-age=31536000; samesite=lax`;
    }
  } catch (error) {
    // No zone to tell: the server uses UTC.
  }
})();
