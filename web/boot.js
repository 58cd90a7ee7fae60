// Loads the libraries and the page's scripts in order. The libraries are stored gzipped
// (web/build.sh): mosquitto serves files as they are, without Content-Encoding, so the browser's
// DecompressionStream unzips them here. That keeps what is transferred within the page's budget.
(function () {
  "use strict";
  var parts = [
    "lib/leaflet.css.gz", "style.css",
    "lib/leaflet.min.js.gz", "lib/chart.min.js.gz", "lib/mqtt.min.js.gz",
    "format.js", "session.js", "strip.js", "figures.js", "map.js", "timeline.js", "tcx.js", "workouts.js", "live.js", "app.js",
  ];
  function text(url) {
    return fetch(url).then(function (response) {
      if (!response.ok) throw new Error(url + ": HTTP " + response.status);
      if (!/\.gz$/.test(url)) return response.text();
      return new Response(response.body.pipeThrough(new DecompressionStream("gzip"))).text();
    });
  }
  function failed(error) {
    var p = document.getElementById("login-message");
    p.textContent = "The page could not load its files (" + error.message + ").";
  }
  if (typeof DecompressionStream === "undefined") {
    failed(new Error("this browser has no DecompressionStream; use a current Firefox, Chrome or Safari"));
    return;
  }
  // Fetch everything at once, run in order.
  Promise.all(parts.map(text)).then(function (sources) {
    sources.forEach(function (source, index) {
      var element;
      if (/\.css(\.gz)?$/.test(parts[index])) {
        element = document.createElement("style");
      } else {
        element = document.createElement("script");
        source += "\n//# sourceURL=" + parts[index].replace(/\.gz$/, "");
      }
      element.textContent = source;
      document.head.appendChild(element);
    });
    window.KeepAlivePage.start();
  }).catch(failed);
})();
