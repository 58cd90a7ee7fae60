// The day's 15-minute timeline (the reply's `timeline`: 96 buckets, 92 or 100 on a day the
// clocks change) of steps and heart rate, drawn with Chart.js (Debian's libjs-chart.js).
(function (KA) {
  "use strict";
  var F = KA.format;
  var view = KA.timeline = {};
  var chart;

  view.show = function (buckets, zone) {
    buckets = buckets || [];
    var labels = buckets.map(function (b) { return F.time(b.from, zone); });
    var steps = buckets.map(function (b) { return b.steps; });
    var hr = buckets.map(function (b) { return b.hr ? b.hr.avg : null; });
    var canvas = document.getElementById("timeline");
    canvas.dataset.buckets = String(buckets.length);
    if (chart) {
      chart.data.labels = labels;
      chart.data.datasets[0].data = steps;
      chart.data.datasets[1].data = hr;
      chart.update("none");
      return;
    }
    chart = new Chart(canvas, {
      data: {
        labels: labels,
        datasets: [
          { type: "bar", label: "Steps", data: steps, yAxisID: "steps", backgroundColor: "#4c6ef5" },
          { type: "line", label: "Heart rate (bpm, mean)", data: hr, yAxisID: "hr", borderColor: "#e03131",
            backgroundColor: "#e03131", pointRadius: 0, spanGaps: false, borderWidth: 2 },
        ],
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        interaction: { mode: "index", intersect: false },
        scales: {
          x: { ticks: { maxTicksLimit: 13 } },
          steps: { type: "linear", position: "left", beginAtZero: true, title: { display: true, text: "steps" } },
          hr: { type: "linear", position: "right", grid: { drawOnChartArea: false }, title: { display: true, text: "bpm" } },
        },
      },
    });
  };
})(window.KeepAlivePage);
