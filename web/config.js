// What an owner may change without touching the page's code. A URL parameter overrides each:
// ?tiles=URL&attribution=TEXT&device=ID&broker=ws://host:port/
window.KEEPALIVE_PAGE = {
  // Map tiles: OpenStreetMap's by default (its tile usage policy asks for the attribution below).
  // Without reachable tiles the track is drawn on a plain background and the page says why.
  tiles: "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
  attribution: "&copy; <a href=\"https://www.openstreetmap.org/copyright\">OpenStreetMap</a> contributors",
  // The broker's WebSocket address; empty: the address this page was loaded from.
  broker: "",
  // How long to wait for an answer before saying there was none.
  replyTimeoutMs: 10000,
  // Days shown on the strip before the calendar is needed.
  stripDays: 60,
};
