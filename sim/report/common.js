// What gpuslice's pages share (report.html, compare.html, the study's
// report.html), inlined before each page's own script: the page's data, the
// count of charts that drew (the browser test compares data-rendered with
// data-charts), Chart.js's defaults, a palette and a few formatters.
'use strict';
const gpuslice = (function () {
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const body = document.body;
  const rendered = new Set();

  function hasInk(canvas) {
    if (!canvas.width || !canvas.height) return false;
    const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 0) return true;
    return false;
  }
  Chart.register({
    id: 'gpusliceRendered',
    afterRender(chart) {
      if (rendered.has(chart.canvas.id) || !hasInk(chart.canvas)) return;
      rendered.add(chart.canvas.id);
      body.setAttribute('data-rendered', String(rendered.size));
      body.setAttribute('data-rendered-charts', Array.from(rendered).sort().join(' '));
    },
  });
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.size = 13;
  Chart.defaults.plugins.legend.position = 'top';

  // Colours told apart in print and by most colour-blind readers (Okabe-Ito), in order.
  const series = ['#0072b2', '#e69f00', '#009e73', '#d55e00', '#cc79a7', '#56b4e9', '#f0e442', '#000000'];
  const count = (n) => Number(n).toLocaleString('en-US');
  const note = (id, text) => { document.getElementById(id + '-note').textContent = text; };
  // The unit a span of seconds reads best in: [its seconds, its name].
  const unitOf = (seconds) => seconds >= 2 * 86400 ? [86400, 'days'] : seconds >= 2 * 3600 ? [3600, 'h']
                            : seconds >= 120 ? [60, 'min'] : [1, 's'];
  function humanSeconds(s) {
    if (s < 120) return (Math.round(s * 10) / 10) + ' s';
    if (s < 7200) return (Math.round(s / 6) / 10) + ' min';
    if (s < 2 * 86400) return (Math.round(s / 360) / 10) + ' h';
    return (Math.round(s / 8640) / 10) + ' days';
  }
  const axis = (text, extra) => Object.assign({ beginAtZero: true, title: { display: true, text: text } }, extra || {});
  // Simulated time from 0 to `end` seconds, in the unit that suits it.
  function timeAxis(end) {
    const unit = unitOf(end);
    return { unit: unit, scale: { type: 'linear', min: 0, max: end / unit[0] || 1,
                                  title: { display: true, text: 'simulated time (' + unit[1] + ')' } } };
  }
  // A timeline column as steps (a record holds until the next one).
  function steps(timeline, column, unit, label, color, extra) {
    return Object.assign({ label: label, borderColor: color, backgroundColor: color, pointRadius: 0, borderWidth: 1.6,
                           stepped: true, data: timeline.time.map((t, i) => ({ x: t / unit[0], y: timeline[column][i] })) },
                         extra || {});
  }
  function lineChart(id, datasets, xAxis, yAxis, extra) {
    return new Chart(document.getElementById(id), Object.assign({
      type: 'line', data: { datasets: datasets },
      options: { parsing: false, normalized: true, interaction: { mode: 'nearest', axis: 'x', intersect: false },
                 scales: { x: xAxis, y: yAxis } },
    }, extra || {}));
  }
  // Milliseconds since the page began to load, for the figures in docs/simulator.md.
  const done = () => body.setAttribute('data-render-ms', String(Math.round(performance.now())));
  return { data, series, count, note, unitOf, humanSeconds, axis, timeAxis, steps, lineChart, done };
})();
