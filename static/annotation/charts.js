// Draw every chart on the page: <div data-figure="ID"> reads its plotly figure from the
// <script type="application/json" id="ID"> that json_script wrote. The modebar's camera button
// downloads the chart as PNG.
(function () {
  function draw() {
    document.querySelectorAll("[data-figure]").forEach(function (element) {
      var source = document.getElementById(element.dataset.figure);
      if (!source || !window.Plotly) return;
      var figure = JSON.parse(source.textContent);
      Plotly.newPlot(element, figure.data, figure.layout || {}, {
        responsive: true,
        displaylogo: false,
        toImageButtonOptions: { format: "png", filename: element.dataset.filename || "chart", scale: 2 },
      });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", draw);
  else draw();
})();
