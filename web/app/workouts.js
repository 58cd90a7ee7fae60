// The day's workouts (distance, pace, splits, heart rate) with GPX and TCX downloads, and the
// shoes with their kilometres and limit.
//
// The agent has no per-workout export over MQTT (`keepalive export --workout` runs on the Pi), so
// the page asks for the day's full track as GPX (`"format":"gpx"`, the agent's own writer) and
// keeps the points between the workout's start and end, with the browser's XML parser; the TCX is
// written from those points and the workout record (tcx.js).
(function (KA) {
  "use strict";
  var F = KA.format;
  var view = KA.workouts = { shoes: new Map() };

  var escape = F.escape;

  view.show = function (workouts, date, zone) {
    var box = document.getElementById("workouts");
    if (!workouts || !workouts.length) {
      box.innerHTML = "<p>No workout this day.</p>";
      return;
    }
    box.innerHTML = workouts.map(function (w, index) {
      var hr = w.hr || {};
      var splits = (w.splits || []).map(function (s) {
        return "<tr><td>" + F.number(s.km) + "</td><td>" + F.km(s.distance_m) + "</td><td>" + F.pace(s.pace_s_per_km) +
          "</td><td>" + F.bpm(s.hr_avg) + "</td></tr>";
      }).join("");
      return '<article class="workout" data-workout="' + escape(w.id) + '">' +
        "<h3>" + escape(w.sport) + " · " + F.time(w.start, zone) + "–" + F.time(w.end, zone) + "</h3>" +
        '<dl class="figures">' +
        '<div class="figure"><dt>Distance</dt><dd data-field="workout_distance_m" data-value="' + w.distance_m + '">' + F.km(w.distance_m) + "</dd></div>" +
        '<div class="figure"><dt>Moving time</dt><dd>' + F.duration(w.moving_s) + "</dd></div>" +
        '<div class="figure"><dt>Pace</dt><dd>' + F.pace(w.pace_s_per_km) + "</dd></div>" +
        '<div class="figure"><dt>Heart rate</dt><dd>' + F.bpm(hr.avg) + " avg, " + F.bpm(hr.max) + " max</dd></div>" +
        "</dl>" +
        (splits ? "<details><summary>Splits</summary><table><thead><tr><th>km</th><th>distance</th><th>pace</th><th>heart rate</th></tr></thead><tbody>" +
          splits + "</tbody></table></details>" : "") +
        '<button type="button" class="gpx" data-index="' + index + '">Download GPX</button> ' +
        '<button type="button" class="tcx" data-index="' + index + '">Download TCX</button> ' +
        '<span class="export-note" role="status"></span>' +
        "</article>";
    }).join("");
    box.querySelectorAll("button.gpx, button.tcx").forEach(function (button) {
      button.addEventListener("click", function () { download(workouts[Number(button.dataset.index)], date, button, button.className); });
    });
  };

  function download(workout, date, button, format) {
    var note = button.parentNode.querySelector(".export-note");
    note.textContent = "Asking the device for the track…";
    KA.session.ask(KA.requestTopic(), { date: date, include: ["track", "hr"], track: "full", format: "gpx" }, KA.device).then(function (reply) {
      if (reply.status !== 200 || reply.text.charAt(0) === "{") {
        note.textContent = KA.errorSentence(reply.text);
        return;
      }
      var doc = cut(reply.text, workout);
      var file = format === "tcx"
        ? { text: KA.tcx(workout, doc, "KeepAlive page (" + KA.device + ")"), type: "application/vnd.garmin.tcx+xml" }
        : { text: new XMLSerializer().serializeToString(doc), type: "application/gpx+xml" };
      var link = document.getElementById("last-export") || document.body.appendChild(document.createElement("a"));
      link.href = URL.createObjectURL(new Blob([file.text], { type: file.type }));
      link.download = "keepalive-" + workout.sport + "-" + workout.start.slice(0, 16).replace(/:/g, "") + "." + format;
      link.id = "last-export";
      link.click();
      note.textContent = "Saved " + link.download + ".";
      KA.lastExport = file.text;
    }, function (error) { note.textContent = error.message; });
  }

  // The day's GPX document with only the points between the workout's start and end.
  function cut(text, workout) {
    var doc = new DOMParser().parseFromString(text, "application/xml");
    var from = Date.parse(workout.start), to = Date.parse(workout.end);
    Array.prototype.slice.call(doc.getElementsByTagName("trkpt")).forEach(function (point) {
      var time = point.getElementsByTagName("time")[0];
      var t = time ? Date.parse(time.textContent) : NaN;
      if (!(t >= from && t <= to)) point.parentNode.removeChild(point);
    });
    var name = doc.querySelector("trk > name");
    if (name) name.textContent = workout.sport + " " + workout.start;
    return doc;
  }

  // id null: draws the list as it is (at start: none yet).
  view.shoe = function (id, text) {
    if (id === null) { /* nothing to change */ } else if (!text) view.shoes.delete(id);
    else {
      try { view.shoes.set(id, JSON.parse(text)); } catch (error) { return; }
    }
    var list = document.getElementById("shoes");
    var pairs = Array.from(view.shoes.values());
    list.innerHTML = pairs.length ? pairs.map(function (g) {
      var share = g.limit_km ? Math.round(100 * g.total_km / g.limit_km) : null;
      return '<li data-gear="' + escape(g.id) + '"><strong>' + escape(g.name) + "</strong> " + F.number(g.total_km, 1) + " km" +
        (g.limit_km ? " of " + F.number(g.limit_km, 0) + " km (" + share + " %)" : "") +
        (g.selected ? " · selected" : "") + (g.retired ? " · retired" : "") +
        (share !== null ? ' <meter min="0" max="100" value="' + Math.min(100, share) + '"></meter>' : "") + "</li>";
    }).join("") : "<li>No shoes registered (<code>keepalive gear add</code>).</li>";
  };
})(window.KeepAlivePage);
