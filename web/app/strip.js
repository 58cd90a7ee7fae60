// The date strip: a horizontal row of days that scrolls or swipes and snaps to a day, today and
// days with data marked; arrow keys, Home and End move along it (a listbox for screen readers);
// the calendar jumps further back.
(function (KA) {
  "use strict";
  var F = KA.format;
  var strip = KA.strip = { first: null, today: null, selected: null, withData: new Set(), onChoose: null };
  var element, calendar, settleTimer, userScrolling = false;

  strip.init = function (today, onChoose) {
    element = document.getElementById("strip");
    calendar = document.getElementById("calendar");
    strip.onChoose = onChoose;
    strip.today = today;
    strip.first = F.addDays(today, -(KA.settings.stripDays - 1));
    calendar.max = today;
    render();
    element.addEventListener("keydown", keyed);
    element.addEventListener("click", function (event) {
      var button = event.target.closest("[data-date]");
      if (button) strip.choose(button.dataset.date, "click");
    });
    // Scrolling or swiping stops on a day: the day in the middle is chosen. Only a person's
    // scrolling (wheel, touch, the scrollbar) counts, not the page re-centring the strip.
    ["wheel", "touchstart", "pointerdown"].forEach(function (kind) {
      element.addEventListener(kind, function () { userScrolling = true; }, { passive: true });
    });
    element.addEventListener("scroll", function () {
      if (!userScrolling) return;
      clearTimeout(settleTimer);
      settleTimer = setTimeout(settled, 250);
    }, { passive: true });
    calendar.addEventListener("change", function () {
      if (calendar.value) strip.choose(calendar.value, "calendar");
    });
  };

  // The device's day changed (midnight in its zone, or its zone became known).
  strip.setToday = function (today) {
    if (today === strip.today) return;
    strip.today = today;
    calendar.max = today;
    if (today > F.addDays(strip.first, KA.settings.stripDays * 4)) strip.first = F.addDays(today, -(KA.settings.stripDays - 1));
    render();
  };

  strip.markData = function (date) {
    strip.withData.add(date);
    var button = element && element.querySelector('[data-date="' + date + '"]');
    if (button) mark(button, date);
  };

  // A date after the device's today is still asked for (typed into the calendar): the device
  // says it is in the future, and the page shows that.
  strip.choose = function (date, how) {
    if (date < strip.first) { strip.first = date; render(); }
    var changed = date !== strip.selected;
    strip.selected = date;
    calendar.value = date;
    element.querySelectorAll("[data-date]").forEach(function (button) {
      var on = button.dataset.date === date;
      button.setAttribute("aria-selected", on ? "true" : "false");
      button.tabIndex = on ? 0 : -1;
    });
    var button = element.querySelector('[data-date="' + date + '"]');
    if (button) {
      button.scrollIntoView({ block: "nearest", inline: "center", behavior: how === "scroll" ? "auto" : "instant" });
      if (how === "key") button.focus();
    }
    if (changed) strip.onChoose(date);
  };

  function render() {
    var html = [];
    for (var date = strip.first; date <= strip.today; date = F.addDays(date, 1)) {
      var label = F.dayLabel(date);
      html.push('<button type="button" role="option" data-date="' + date + '" tabindex="-1" aria-selected="false">' +
        '<span class="weekday">' + label.weekday + '</span><span class="daynum">' + label.day + '</span>' +
        '<span class="month">' + label.month + '</span></button>');
    }
    element.innerHTML = html.join("");
    element.querySelectorAll("[data-date]").forEach(function (button) { mark(button, button.dataset.date); });
    if (strip.selected) strip.choose(strip.selected, "render");
    else {
      var last = element.querySelector('[data-date="' + strip.today + '"]');
      if (last) last.scrollIntoView({ block: "nearest", inline: "center", behavior: "instant" });
    }
  }

  function mark(button, date) {
    var label = F.dayLabel(date).long;
    var isToday = date === strip.today;
    var hasData = strip.withData.has(date);
    button.classList.toggle("today", isToday);
    button.classList.toggle("has-data", hasData);
    button.setAttribute("aria-label", label + (isToday ? ", today" : "") + (hasData ? ", has data" : ""));
  }

  function keyed(event) {
    var steps = { ArrowLeft: -1, ArrowRight: 1, PageUp: -7, PageDown: 7 }[event.key];
    var current = strip.selected || strip.today;
    var target = null;
    if (steps) target = F.addDays(current, steps);
    else if (event.key === "Home") target = strip.first;
    else if (event.key === "End") target = strip.today;
    if (!target) return;
    event.preventDefault();
    if (target < strip.first) target = strip.first;
    strip.choose(target, "key");
  }

  function settled() {
    userScrolling = false;
    var box = element.getBoundingClientRect();
    var middle = box.left + box.width / 2;
    var nearest = null, distance = Infinity;
    element.querySelectorAll("[data-date]").forEach(function (button) {
      var r = button.getBoundingClientRect();
      var d = Math.abs(r.left + r.width / 2 - middle);
      if (d < distance) { distance = d; nearest = button; }
    });
    if (nearest && nearest.dataset.date !== strip.selected && distance < nearest.offsetWidth) strip.choose(nearest.dataset.date, "scroll");
  }
})(window.KeepAlivePage);
