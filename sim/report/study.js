// The study's report.html: per trace, allocation by arrived demand for each
// policy, ours solid and the artifact's published curve dashed in the same
// colour (sim/src/study_report.cpp writes the data; helpers in common.js).
'use strict';
(function () {
  const { data, series, axis, lineChart } = gpuslice;
  const points = (curve, from) => curve.map((v, x) => ({ x: x, y: v })).filter((p) => p.y !== null && p.x >= from);
  const last = (curve) => { for (let x = curve.length - 1; x >= 0; --x) if (curve[x] !== null) return curve[x]; return null; };
  const fixed = (v) => (v === null ? 'n/a' : v.toFixed(2) + ' %');
  Chart.defaults.plugins.legend.labels.boxHeight = 0;
  Chart.defaults.plugins.legend.labels.boxWidth = 30;
  for (const trace of data.traces) {
    const datasets = [];
    trace.lines.forEach((line, i) => {
      const colour = series[i % series.length];
      datasets.push({ label: line.policy + ' (ours ' + fixed(last(line.ours)) + ')', data: points(line.ours, trace.from),
                      borderColor: colour, backgroundColor: colour, pointRadius: 0, borderWidth: 2 });
      if (line.published)
        datasets.push({ label: line.policy + ' (published ' + fixed(last(line.published)) + ')',
                        data: points(line.published, trace.from), borderColor: colour, backgroundColor: colour,
                        borderDash: [7, 4], pointRadius: 0, borderWidth: 1.5 });
    });
    lineChart(trace.id, datasets,
              { type: 'linear', min: trace.from, max: 130, title: { display: true, text: 'arrived GPU demand (% of capacity)' } },
              axis('GPU allocated (% of capacity)', { beginAtZero: false, max: 100 }));
  }
  gpuslice.done();
})();
