// The page: log in, find the devices, and show the chosen day (docs/contract.md, "The page").
(function (KA) {
  "use strict";
  var F = KA.format;
  var params = new URLSearchParams(location.search);
  KA.settings = Object.assign({}, window.KEEPALIVE_PAGE);
  ["tiles", "attribution", "broker", "device"].forEach(function (key) { if (params.get(key)) KA.settings[key] = params.get(key); });
  KA.zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  KA.devices = new Map();
  KA.archive = false;
  var request = 0;

  var ERRORS = {
    future_date: "That day has not come yet where the device is.",
    not_found: "The archive holds no record of that day.",
    rate_limited: "The device is answering too many requests right now: wait a moment and choose the day again.",
    invalid_date: "That is not a date the device knows.",
    too_large: "The answer would be too large to send.",
    forbidden_topic: "The device may not reply to this page (its [query] reply_topics do not allow reply/…).",
    bad_request: "The device did not understand the request.",
    internal: "The device failed to answer (an internal error: see its log).",
  };
  KA.errorSentence = function (text) {
    try {
      var error = JSON.parse(text).error || {};
      return (ERRORS[error.code] || "The device answered with an error.") + " (" + error.code + ": " + error.message + ")";
    } catch (e) { return "The device's answer could not be read."; }
  };

  KA.requestTopic = function () { return "keepalive/" + KA.device + "/selection/date"; };
  KA.showZone = function () {
    document.getElementById("device-line").textContent = "Device " + KA.device + " · times in " + KA.zone + " (the device's time zone)";
  };
  KA.connectionChanged = function (up) {
    if (!up) say("The connection to the broker was lost; trying again…");
    else say("");
  };

  function say(text) {
    var p = document.getElementById("message");
    p.textContent = text;
    p.dataset.state = text ? "shown" : "";
  }

  KA.start = function () {
    var form = document.getElementById("login");
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var message = document.getElementById("login-message");
      message.textContent = "Connecting…";
      var button = document.getElementById("login-button");
      button.disabled = true;
      KA.session.connect(document.getElementById("user").value, document.getElementById("password").value).then(function () {
        message.textContent = "";
        form.hidden = true;
        discover();
      }, function (error) {
        message.textContent = error.message;
        button.disabled = false;
      });
    });
    document.body.dataset.ready = "true";
  };

  // Devices announce themselves with their retained status; archives with theirs (the fleet).
  function discover() {
    var select = document.getElementById("device");
    KA.session.follow("keepalive/+/status", /^keepalive\/([^/]+)\/status$/, function (match) {
      var id = match[1];
      if (id === "archive" || KA.devices.has(id)) return;
      KA.devices.set(id, true);
      var option = document.createElement("option");
      option.value = option.textContent = id;
      select.appendChild(option);
      document.getElementById("device-choice").hidden = KA.devices.size < 2;
      if (!KA.device && (!KA.settings.device || KA.settings.device === id)) open(id);
    });
    KA.session.follow("keepalive/archive/status/+", /^keepalive\/archive\/status\/[^/]+$/, function (_, text) {
      if (text) KA.archive = true;
    });
    select.addEventListener("change", function () { location.search = "?device=" + encodeURIComponent(select.value); });
    setTimeout(function () {
      if (!KA.device) say("No device has announced itself on this broker yet (no retained keepalive/<device>/status).");
    }, 3000);
  }

  function open(device) {
    KA.device = device;
    document.getElementById("device").value = device;
    document.getElementById("day").hidden = false;
    KA.showZone();
    KA.strip.init(F.dateIn(new Date(), KA.zone), choose);
    KA.live.follow(device);
    // health/today (retained) names the device's today and zone; choose today once it is known.
    setTimeout(function () { if (!KA.strip.selected) KA.strip.choose(KA.strip.today, "start"); }, 300);
  }

  // The chosen day asked again (today, while it goes on).
  KA.refresh = function () { if (KA.strip.selected) choose(KA.strip.selected); };

  var PARTS = ["health", "location", "track", "timeline", "workouts"];

  function choose(date) {
    var mine = ++request;
    performance.clearMarks("ka-choose");
    performance.mark("ka-choose");
    KA.busy = true;
    say("");
    document.getElementById("answered-by").textContent = "Asking for " + F.dayLabel(date).long + "…";
    document.body.dataset.loading = date;
    var answer = KA.archive && date !== KA.strip.today ? fromArchiveThenDevice(date) : fromDevice(date);
    answer.then(function (result) {
      if (mine !== request) return;
      performance.clearMarks("ka-answered");
      performance.mark("ka-answered");
      draw(date, result);
    }, function (error) {
      if (mine !== request) return;
      say(error.message);
      finish(date);
    });
  }

  function parseReply(reply) {
    var body;
    try { body = JSON.parse(reply.text); } catch (e) { throw new Error("The device's answer could not be read."); }
    if (!body.ok) throw new Error(KA.errorSentence(reply.text));
    return body;
  }

  function fromDevice(date) {
    return KA.session.ask(KA.requestTopic(), { date: date, include: PARTS }, KA.device).then(function (reply) {
      return { day: parseReply(reply), by: "the device (" + KA.device + ")" };
    });
  }

  // The archive holds each finished day's summary; the map, timeline and workouts come from the
  // device. Whatever the archive does not hold is asked of the device.
  function fromArchiveThenDevice(date) {
    var archived = KA.session.ask("keepalive/archive/" + KA.device + "/selection/date", { date: date }, "archive").then(parseReply);
    return archived.then(function (summary) {
      return fromDevice(date).then(function (result) {
        result.day.health = summary.health;
        result.by = "the archive (figures) and the device (map, timeline, workouts)";
        return result;
      }, function (error) {
        return { day: summary, by: "the archive (the device did not answer: " + error.message + ")" };
      });
    }, function (error) {
      // Not held there (not_found), or no answer: the device is asked, and the page says so.
      return fromDevice(date).then(function (result) {
        result.by += "; the archive did not answer: " + error.message;
        return result;
      });
    });
  }

  function draw(date, result) {
    var day = result.day;
    if (day.tz) KA.zone = day.tz;
    KA.showZone();
    var health = day.health;
    if (date === KA.strip.today && KA.live.today && KA.live.today.date === date && (!health || KA.live.today.seq > health.seq)) health = KA.live.today;
    KA.figures.render(health, KA.zone);
    document.getElementById("figures").dataset.source = "query";
    KA.map.show(day.track || [], KA.zone);
    KA.timeline.show(day.timeline || [], KA.zone);
    KA.workouts.show(day.workouts, date, KA.zone);
    if (day.has_data === false) say("No data was recorded on " + F.dayLabel(date).long + ".");
    else if (day.has_data) KA.strip.markData(date);
    document.getElementById("answered-by").textContent = "Answered by " + result.by + ".";
    KA.lastReply = day;
    finish(date);
  }

  function finish(date) {
    KA.busy = false;
    requestAnimationFrame(function () {
      performance.clearMeasures("ka-day-drawn");
      var measure = performance.measure("ka-day-drawn", "ka-choose");
      var answered = performance.getEntriesByName("ka-answered", "mark").pop();
      var chosen = performance.getEntriesByName("ka-choose", "mark").pop();
      // How much of it was waiting for the answer (the request, the agent, the reply).
      document.body.dataset.answerMs = answered && chosen && answered.startTime >= chosen.startTime
        ? String(Math.round(answered.startTime - chosen.startTime)) : "";
      document.body.dataset.drawn = date;
      document.body.dataset.drawnMs = String(Math.round(measure.duration));
      delete document.body.dataset.loading;
    });
  }
})(window.KeepAlivePage);
