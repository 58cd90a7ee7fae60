// The day's figures, from a health aggregate (a query reply's `health`, or `health/today`):
// the same numbers as the reply, with their units. Each shown value carries the reply's own
// number in data-value, so what is shown can be checked against what was answered.
(function (KA) {
  "use strict";
  var F = KA.format;
  var figures = KA.figures = {};

  function item(field, label, value, shown, detail) {
    var raw = value === null || value === undefined ? "" : String(value);
    return '<div class="figure"><dt>' + label + '</dt><dd data-field="' + field + '" data-value="' + F.escape(raw) + '">' + F.escape(shown) +
      (detail ? '<small>' + F.escape(detail) + '</small>' : "") + '</dd></div>';
  }

  figures.render = function (health, zone) {
    var main = document.getElementById("figures");
    var sleepList = document.getElementById("sleep");
    if (!health) {
      main.innerHTML = "";
      sleepList.innerHTML = "";
      return;
    }
    var hr = health.heart_rate || {};
    var loc = health.location || {};
    var stepsDetail = health.steps === null || health.steps === undefined ? "no step sensor that day"
      : (health.steps_source || "") + (health.steps_estimated ? ", estimated from the strap" : "");
    main.innerHTML = [
      item("steps", "Steps", health.steps, F.number(health.steps), stepsDetail),
      item("distance_m", "Distance", loc.distance_m, F.km(loc.distance_m), loc.moving_s ? "moving " + F.duration(loc.moving_s) : ""),
      item("hr_min", "Heart rate min", hr.min, F.bpm(hr.min)),
      item("hr_avg", "Heart rate average", hr.avg, F.bpm(hr.avg)),
      item("hr_max", "Heart rate max", hr.max, F.bpm(hr.max)),
      item("hr_resting", "Resting heart rate", hr.resting, F.bpm(hr.resting)),
    ].join("");

    var sleep = health.sleep;
    if (!sleep) {
      sleepList.innerHTML = item("sleep_s", "Sleep", null, "no night recorded", "the strap was not worn overnight");
      return;
    }
    var person = { given: "computed with your age and sex ([person])", partial: "computed with part of [person]",
      unset: "computed without [person]: the classifier's average sleeper" }[sleep.person] || "";
    sleepList.innerHTML = [
      item("sleep_s", "Sleep", health.sleep_s, F.duration(health.sleep_s), sleep.in_progress ? "so far: the night may go on" : person),
      item("sleep_start", "Fell asleep", sleep.start, F.time(sleep.start, zone)),
      item("sleep_end", "Woke up", sleep.end, sleep.end ? F.time(sleep.end, zone) : "still asleep"),
      item("sleep_efficiency", "Efficiency", sleep.efficiency, F.percent(sleep.efficiency)),
      item("sleep_awakenings", "Awakenings", sleep.awakenings, F.number(sleep.awakenings)),
    ].join("");
  };
})(window.KeepAlivePage);
