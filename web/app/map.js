// The day's 5-minute locations and their track on a Leaflet map (Debian's libjs-leaflet). The
// tiles come from the configured URL; when none loads, the track is still drawn on the map's
// plain background and the page says why.
(function (KA) {
  "use strict";
  var F = KA.format;
  var view = KA.map = {};
  var map, layer, line, noted = false;

  function ensure() {
    if (map) return;
    map = L.map("map", { preferCanvas: false, zoomControl: true }).setView([0, 0], 2);
    var tiles = L.tileLayer(KA.settings.tiles, { attribution: KA.settings.attribution, maxZoom: 19 });
    tiles.on("tileerror", function () {
      if (noted) return;
      noted = true;
      var host = KA.settings.tiles.replace(/^([a-z]+:\/\/[^/]+).*$/, "$1");
      document.getElementById("map-note").textContent =
        "Map tiles could not be loaded from " + host + " (no internet, or the tile server refused): the track is drawn without a background map.";
    });
    tiles.addTo(map);
    layer = L.layerGroup().addTo(map);
  }

  // points: [{tst, lat, lon, …}] (tst in epoch seconds).
  view.show = function (points, zone) {
    ensure();
    layer.clearLayers();
    line = null;
    var usable = (points || []).filter(function (p) { return typeof p.lat === "number" && typeof p.lon === "number"; });
    usable.forEach(function (p) { add(p, zone); });
    if (usable.length) {
      line = L.polyline(usable.map(function (p) { return [p.lat, p.lon]; }), { color: "#d9480f", weight: 3, className: "ka-track" });
      layer.addLayer(line);
      map.fitBounds(line.getBounds(), { padding: [20, 20], maxZoom: 17, animate: false });
    }
    map.invalidateSize();
    document.getElementById("map").dataset.points = String(usable.length);
  };

  function add(p, zone) {
    var time = p.tst ? F.time(new Date(p.tst * 1000).toISOString(), zone) : "";
    layer.addLayer(L.circleMarker([p.lat, p.lon], { radius: 4, weight: 1, color: "#1c3d5a", fillOpacity: 0.9, className: "ka-point" })
      .bindTooltip(time));
  }

  // A live location while today is shown.
  view.append = function (p, zone) {
    if (!map || typeof p.lat !== "number") return;
    add(p, zone);
    if (line) line.addLatLng([p.lat, p.lon]);
    var el = document.getElementById("map");
    el.dataset.points = String(Number(el.dataset.points || 0) + 1);
  };
})(window.KeepAlivePage);
