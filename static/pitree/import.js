// The Import page: send the export in pieces (each within the server's request limit, so that no
// request holds a large export in the server's memory), showing how much has gone, then start the
// import and follow its progress on the status page. Without this script the form posts the file whole.
(function () {
  "use strict";

  function csrf(form) {
    return form.querySelector("input[name=csrfmiddlewaretoken]").value;
  }

  function post(url, form, body, type) {
    var headers = { "X-CSRFToken": csrf(form), "Accept": "application/json" };
    if (type) headers["Content-Type"] = type;
    return fetch(url, { method: "POST", headers: headers, body: body, credentials: "same-origin" }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (answer) {
        if (!response.ok) throw new Error(answer.error || "The server answered " + response.status + ".");
        return answer;
      });
    });
  }

  function send(form, file, urls) {
    var bar = document.getElementById("import-sent");
    var text = document.getElementById("import-sent-text");
    bar.max = file.size;
    function piece(offset) {
      bar.value = offset;
      text.textContent = Math.floor((100 * offset) / file.size) + " % sent";
      if (offset >= file.size) return Promise.resolve();
      var end = Math.min(offset + urls.chunk, file.size);
      return post(urls.piece + "?offset=" + offset, form, file.slice(offset, end), "application/octet-stream")
        .then(function (answer) { return piece(answer.arrived); });
    }
    return piece(0);
  }

  function start(event) {
    var form = event.target;
    var input = form.querySelector("input[type=file]");
    var file = input && input.files && input.files[0];
    if (!file || !window.fetch || !file.slice) return; // the form posts the file whole
    event.preventDefault();
    var error = document.getElementById("import-error");
    var button = form.querySelector("button[type=submit]");
    error.hidden = true;
    button.disabled = true;
    document.getElementById("import-sending").hidden = false;
    var data = new FormData();
    data.append("name", file.name);
    data.append("size", String(file.size));
    data.append("cwd", form.querySelector("[name=cwd]").value);
    post(form.dataset.start, form, data)
      .then(function (urls) {
        return send(form, file, urls).then(function () { return fetch(urls.run, {
          method: "POST", headers: { "X-CSRFToken": csrf(form) }, credentials: "same-origin"
        }); });
      })
      .then(function (response) {
        if (!response.ok) throw new Error("The import could not start (" + response.status + ").");
        window.location.assign(response.url);
      })
      .catch(function (failure) {
        error.textContent = "Not imported: " + failure.message;
        error.hidden = false;
        button.disabled = false;
      });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("import-form");
    if (form) form.addEventListener("submit", start);
  });
})();
