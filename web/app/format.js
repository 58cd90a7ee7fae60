// Numbers and times as the page shows them. Times are in the device's zone (a day is the
// device's local day), which the page names, whatever zone the viewer's browser is in.
window.KeepAlivePage = window.KeepAlivePage || {};
(function (KA) {
  "use strict";
  var F = KA.format = {};
  F.none = "—";
  // Text from a device's payload, for innerHTML.
  F.escape = function (text) {
    return String(text).replace(/[&<>"']/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]; });
  };

  F.number = function (value, digits) {
    if (value === null || value === undefined) return F.none;
    return Number(value).toLocaleString("en-GB", { minimumFractionDigits: digits || 0, maximumFractionDigits: digits || 0 });
  };
  F.km = function (metres) { return metres === null || metres === undefined ? F.none : F.number(metres / 1000, 2) + " km"; };
  F.duration = function (seconds) {
    if (seconds === null || seconds === undefined) return F.none;
    var minutes = Math.round(seconds / 60);
    return Math.floor(minutes / 60) + " h " + String(minutes % 60).padStart(2, "0") + " min";
  };
  F.pace = function (secondsPerKm) {
    if (!secondsPerKm) return F.none;
    var s = Math.round(secondsPerKm);
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0") + " /km";
  };
  F.percent = function (fraction) { return fraction === null || fraction === undefined ? F.none : F.number(fraction * 100, 0) + " %"; };
  F.bpm = function (value) { return value === null || value === undefined ? F.none : F.number(value, 0) + " bpm"; };

  // The local date (YYYY-MM-DD) of an instant in a zone.
  F.dateIn = function (instant, zone) {
    return new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(instant);
  };
  F.time = function (iso, zone) {
    if (!iso) return F.none;
    return new Intl.DateTimeFormat("en-GB", { timeZone: zone, hour: "2-digit", minute: "2-digit" }).format(new Date(iso));
  };
  F.dateTime = function (iso, zone) {
    if (!iso) return F.none;
    return new Intl.DateTimeFormat("en-GB", { timeZone: zone, dateStyle: "medium", timeStyle: "short" }).format(new Date(iso));
  };
  // Calendar arithmetic on YYYY-MM-DD strings (noon UTC: never crosses a date line).
  F.addDays = function (date, days) {
    var d = new Date(date + "T12:00:00Z");
    d.setUTCDate(d.getUTCDate() + days);
    return d.toISOString().slice(0, 10);
  };
  F.dayLabel = function (date) {
    var d = new Date(date + "T12:00:00Z");
    return {
      weekday: d.toLocaleDateString("en-GB", { weekday: "short", timeZone: "UTC" }),
      day: d.getUTCDate(),
      month: d.toLocaleDateString("en-GB", { month: "short", timeZone: "UTC" }),
      long: d.toLocaleDateString("en-GB", { weekday: "long", day: "numeric", month: "long", year: "numeric", timeZone: "UTC" }),
    };
  };
})(window.KeepAlivePage);
