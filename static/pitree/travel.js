// The "As it was…" box: the slider says which line it stands on as it moves, and the date box is read
// in the browser's own time zone, which only the browser knows; the server is sent the moment in UTC
// (ISO with "Z"). Without this script the box still works: the date is then taken as UTC, as it says.
(function () {
  "use strict";

  function setUp(form) {
    const range = form.querySelector("input[type=range][name=line]");
    const shown = form.querySelector("output[data-line]");
    if (range && shown) {
      const say = () => (shown.value = `line ${range.value}`);
      range.addEventListener("input", say);
      say();
    }
    const moment = form.querySelector("input[type=datetime-local]");
    const zone = form.querySelector("[data-zone]");
    if (!moment || !zone) return;
    zone.textContent = Intl.DateTimeFormat().resolvedOptions().timeZone || "your time";
    form.addEventListener("submit", () => {
      const utc = form.querySelector("input[type=hidden][name=time]");
      if (utc) utc.remove();
      if (!moment.value) {
        moment.name = "time";
        return;
      }
      const hidden = document.createElement("input");
      hidden.type = "hidden";
      hidden.name = "time";
      hidden.value = new Date(moment.value).toISOString(); // datetime-local is read as local time
      moment.name = ""; // not sent as well
      form.append(hidden); // (a moment wins over the line the slider also sends)
    });
  }

  document.querySelectorAll("form.travel__form").forEach(setUp);
})();
