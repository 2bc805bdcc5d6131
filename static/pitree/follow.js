// Live for the comparison and the map: the websocket of each session they show says when its file
// grew (the same push the session page follows, sessions_app/live/); after a quiet moment the page is
// told ("pitree:grew") and fetches what it shows again. Each socket sends its cursor, the byte offset
// the page was rendered from, so nothing appended meanwhile is missed, and resends the newest one
// after a reconnect, with the id of the line that ends there: a file replaced while the socket was
// down is then told apart from one that only grew (the server answers with a resync), as on the
// session page (live.js).
(function () {
  "use strict";

  const holder = document.querySelector("[data-follow]");
  if (!holder) return;
  const QUIET_MS = 250; // an agent's burst of appends refreshes the page once
  let timer = 0;
  let following = 0;

  function grew() {
    clearTimeout(timer);
    timer = setTimeout(() => document.dispatchEvent(new CustomEvent("pitree:grew")), QUIET_MS);
  }

  function follow(sessionId, cursor, lineId) {
    let retry = 0; // reconnections since the socket last opened (window.pitree.reconnectDelay)
    let mark = { end: cursor, id: lineId }; // the last line seen, and where it ends
    function connect() {
      const scheme = location.protocol === "https:" ? "wss" : "ws";
      const socket = new WebSocket(`${scheme}://${location.host}/ws/s/${encodeURIComponent(sessionId)}/`);
      socket.addEventListener("open", () => {
        retry = 0;
        socket.send(JSON.stringify(mark.id === null ? { cursor } : { cursor: mark.end, id: mark.id }));
      });
      socket.addEventListener("message", (ev) => {
        let message;
        try {
          message = JSON.parse(ev.data);
        } catch (error) {
          return;
        }
        if (message.t === "batch") {
          cursor = Math.max(cursor, message.to);
          const last = message.entries[message.entries.length - 1];
          if (last && last.end > mark.end) mark = { end: last.end, id: last.id };
          if (message.entries.length) grew();
        } else if (message.t === "resync") {
          cursor = 0; // the file was replaced: offsets start again, in a file not seen yet
          mark = { end: 0, id: null };
          grew();
        } else if (message.t === "live") {
          following += 1;
          holder.dataset.live = following === sessions.length ? "live" : "joining";
        }
      });
      socket.addEventListener("close", (ev) => {
        if (ev.code >= 4000) return; // the session is gone, or the socket was refused: stop
        following = Math.max(0, following - 1);
        holder.dataset.live = "closed";
        setTimeout(connect, window.pitree.reconnectDelay(retry));
        retry += 1;
      });
    }
    connect();
  }

  const sessions = JSON.parse(holder.dataset.follow);
  for (const item of sessions) follow(item.session, item.cursor, item.id);
})();
