// One workout as TCX (Garmin Training Center Database v2), written in the browser from what the
// agent already answers: the day's GPX (every stored fix with its nearest heart rate, the agent's
// own writer) cut to the workout, and the workout record (sport, start, end, distance, splits).
// The agent exports TCX only on the Pi (`keepalive export --workout ID --format tcx`); this writes
// the same document (Sources/Agent/Workouts/WorkoutTCXDocument.swift): one Lap per completed km
// split and one for the rest, the laps' distances adding up to the record's, each point's time,
// position, altitude and heart rate. What it leaves out: each point's running distance (the
// agent's distance filter is not in any reply), which TCX has as optional; importers compute it.
(function (KA) {
  "use strict";
  var GPXTPX = "http://www.garmin.com/xmlschemas/TrackPointExtension/v1";
  var SPORTS = { run: "Running", cycle: "Biking" };

  // As the agent writes times (ExportText.time): UTC, milliseconds only when there are some.
  function time(ms) { return new Date(ms).toISOString().replace(".000Z", "Z"); }

  function escape(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }

  function points(gpx) {
    return Array.prototype.map.call(gpx.getElementsByTagName("trkpt"), function (p) {
      var ele = p.getElementsByTagName("ele")[0], hr = p.getElementsByTagNameNS(GPXTPX, "hr")[0];
      var bpm = hr ? Number(hr.textContent) : NaN;
      return {
        ms: Date.parse(p.getElementsByTagName("time")[0].textContent), lat: p.getAttribute("lat"), lon: p.getAttribute("lon"),
        ele: ele ? ele.textContent : null, hr: bpm >= 1 && bpm <= 255 ? bpm : null,
      };
    }).sort(function (a, b) { return a.ms - b.ms; });
  }

  // The laps' bounds: the start, the end of each completed km (the record's splits are timed by
  // elapsed time from the start), the end; as WorkoutTCXDocument.Lap.laps does.
  function laps(workout, all) {
    var start = Date.parse(workout.start), end = Math.max(Date.parse(workout.end), start);
    var bounds = [start], at = start;
    (workout.splits || []).forEach(function (split) {
      at += Math.round(split.elapsed_s * 1000);
      if (split.distance_m >= 1000 && at > bounds[bounds.length - 1] && at < end) bounds.push(at);
    });
    var completed = bounds.length - 1, total = Math.max(0, workout.distance_m || 0), next = 0;
    bounds.push(end);
    var result = [];
    for (var i = 0; i <= completed; i++) {
      var last = i === completed, first = next;
      while (next < all.length && (last || all[next].ms < bounds[i + 1])) next++;
      result.push({ start: bounds[i], end: bounds[i + 1], distance: last ? Math.max(0, total - 1000 * completed) : 1000,
        byDistance: !last, points: all.slice(first, next) });
    }
    return result;
  }

  function lap(l) {
    var text = '<Lap StartTime="' + time(l.start) + '"><TotalTimeSeconds>' + ((l.end - l.start) / 1000).toFixed(3) +
      "</TotalTimeSeconds><DistanceMeters>" + l.distance.toFixed(2) + "</DistanceMeters><Calories>0</Calories>";
    var rates = l.points.map(function (p) { return p.hr; }).filter(function (r) { return r !== null; });
    if (rates.length) {
      var sum = rates.reduce(function (a, b) { return a + b; }, 0);
      text += "<AverageHeartRateBpm><Value>" + Math.round(sum / rates.length) + "</Value></AverageHeartRateBpm>" +
        "<MaximumHeartRateBpm><Value>" + Math.max.apply(null, rates) + "</Value></MaximumHeartRateBpm>";
    }
    text += "<Intensity>Active</Intensity><TriggerMethod>" + (l.byDistance ? "Distance" : "Manual") + "</TriggerMethod>\n";
    if (l.points.length) {
      text += "<Track>\n" + l.points.map(function (p) {
        return "<Trackpoint><Time>" + time(p.ms) + "</Time><Position><LatitudeDegrees>" + p.lat + "</LatitudeDegrees><LongitudeDegrees>" +
          p.lon + "</LongitudeDegrees></Position>" + (p.ele !== null ? "<AltitudeMeters>" + p.ele + "</AltitudeMeters>" : "") +
          (p.hr !== null ? "<HeartRateBpm><Value>" + p.hr + "</Value></HeartRateBpm>" : "") + "</Trackpoint>\n";
      }).join("") + "</Track>\n";
    }
    return text + "</Lap>\n";
  }

  // `gpx`: the day's GPX document already cut to the workout; `creator`: the Device_t's Name.
  KA.tcx = function (workout, gpx, creator) {
    var text = '<?xml version="1.0" encoding="UTF-8"?>\n' +
      '<TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" ' +
      'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2 ' +
      'http://www.garmin.com/xmlschemas/TrainingCenterDatabasev2.xsd">\n<Activities>\n<Activity Sport="' +
      (SPORTS[workout.sport] || "Other") + '">\n<Id>' + time(Date.parse(workout.start)) + "</Id>\n";
    text += laps(workout, points(gpx)).map(lap).join("");
    text += '<Creator xsi:type="Device_t"><Name>' + escape(creator) + "</Name><UnitId>0</UnitId><ProductID>0</ProductID>" +
      "<Version><VersionMajor>0</VersionMajor><VersionMinor>0</VersionMinor></Version></Creator>\n";
    return text + "</Activity>\n</Activities>\n</TrainingCenterDatabase>\n";
  };
})(window.KeepAlivePage);
