// Today, live: while the device's today is shown, `health/today`, `location` and `status` update
// the page without a reload; a device gone offline (its will, or a clean stop) is said so.
(function (KA) {
  "use strict";
  var F = KA.format;
  var live = KA.live = { today: null, status: null };
  var lastRefresh = Date.now();

  live.follow = function (device) {
    var base = "keepalive/" + device + "/";
    var escaped = base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    KA.session.follow(base + "health/today", new RegExp("^" + escaped + "health/today$"), function (_, text) {
      var health = parse(text);
      if (!health) return;
      live.today = health;
      if (health.tz) KA.zone = health.tz;
      if (health.date) {
        KA.strip.setToday(health.date);
        KA.strip.markData(health.date);
      }
      KA.showZone();
      if (KA.strip.selected === health.date && !KA.busy) {
        KA.figures.render(health, KA.zone);
        document.getElementById("figures").dataset.source = "health/today";
        document.getElementById("answered-by").textContent =
          "Today, live: figures from the device's health/today at " + F.time(new Date().toISOString(), KA.zone) + ".";
        // The timeline, workouts and track are not in health/today: asked again, at most once a
        // minute, so a page left open on today does not spend the device's query budget.
        if (Date.now() - lastRefresh > 60000) {
          lastRefresh = Date.now();
          KA.refresh();
        }
      }
    });
    KA.session.follow(base + "health/daily/+", new RegExp("^" + escaped + "health/daily/(\\d{4}-\\d{2}-\\d{2})$"), function (match, text) {
      if (text) KA.strip.markData(match[1]);
    });
    KA.session.follow(base + "location", new RegExp("^" + escaped + "location$"), function (_, text, packet) {
      var p = parse(text);
      if (!p || packet.retain || p.stale || !p.tst) return;
      if (KA.strip.selected === KA.strip.today && F.dateIn(new Date(p.tst * 1000), KA.zone) === KA.strip.today) KA.map.append(p, KA.zone);
    });
    KA.session.follow(base + "status", new RegExp("^" + escaped + "status$"), function (_, text, packet) {
      var status = parse(text);
      if (!status) return;
      live.status = status;
      var banner = document.getElementById("offline");
      if (status.state === "offline") {
        banner.hidden = false;
        banner.textContent = packet.retain
          ? "The device is offline (its last session began " + F.dateTime(status.since, KA.zone) + "). Past days may still be answered by an archive."
          : "The device went offline at " + F.dateTime(new Date().toISOString(), KA.zone) + ": its status turned offline (its MQTT will, or a clean stop).";
      } else {
        banner.hidden = true;
      }
    });
    KA.workouts.shoe(null);
    KA.session.follow(base + "gear/+", new RegExp("^" + escaped + "gear/([^/]+)$"), function (match, text) {
      KA.workouts.shoe(match[1], text);
    });
  };

  function parse(text) {
    if (!text) return null;
    try { return JSON.parse(text); } catch (error) { return null; }
  }
})(window.KeepAlivePage);
