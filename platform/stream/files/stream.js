// The page's side of platform/stream: follows the state a server pushes
// (Server-Sent Events), says in an element whether it is live, stale
// (nothing heard for two heartbeats) or lost, and tries again, more
// slowly, when the server refused the page or is gone.
"use strict";

// follow opens the stream at url, gives each state to onState (parsed),
// and keeps conn (an element) saying how the connection is.
function follow(url, conn, onState, heartbeat = 5000) {
  let source = null;
  let lastHeard = 0;
  const say = (cls, text) => { conn.className = "conn " + cls; conn.textContent = text; };
  const heard = () => { lastHeard = Date.now(); say("live", "live"); };
  const connect = () => {
    if (source) source.close();
    source = new EventSource(url);
    source.addEventListener("state", (e) => { heard(); onState(JSON.parse(e.data)); });
    source.addEventListener("beat", heard);
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        say("stale", "not connected: the server refused this page or is unreachable; retrying in 5 s");
        setTimeout(connect, 5000);
      } else {
        say("stale", "connection lost: reconnecting…");
      }
    };
  };
  setInterval(() => {
    if (lastHeard && Date.now() - lastHeard > 2 * heartbeat + 1000) {
      say("stale", "stale: nothing heard for " + Math.round((Date.now() - lastHeard) / 1000) + " s");
    }
  }, 1000);
  connect();
}
