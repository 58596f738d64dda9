// compare.html's charts: every run on the same axes (sim/src/compare_html.cpp
// writes the data), with the helpers of common.js.
'use strict';
(function () {
  const { data, series, axis, steps, lineChart, unitOf } = gpuslice;
  const colour = (i) => series[i % series.length];
  // Each run its own dash as well as its colour: runs that did the same draw
  // the same line, and the dashes let each still be seen.
  const dashes = [[], [9, 5], [2, 4], [14, 4, 3, 4]];
  const dash = (i) => dashes[i % dashes.length];
  const time = gpuslice.timeAxis(data.end_seconds);
  // Legend keys as short lines, so each run's dash shows in its key.
  Chart.defaults.plugins.legend.labels.boxHeight = 0;
  Chart.defaults.plugins.legend.labels.boxWidth = 36;

  lineChart('chart-allocation',
            data.runs.map((r, i) => steps(r.timeline, 'alloc_gpu_pct', time.unit, r.label, colour(i), { borderDash: dash(i) })),
            time.scale, axis('GPU allocated (% of capacity)', { max: 100 }));

  lineChart('chart-pending',
            data.runs.map((r, i) => steps(r.timeline, 'pending', time.unit, r.label, colour(i), { borderDash: dash(i) })),
            Object.assign({}, time.scale), axis('pods pending', { ticks: { precision: 0 } }));

  // Waits: the share placed within x, a step at each wait; from 0 (pods placed
  // at once) to the longest wait of any run, each line held flat after its last.
  let longest = 0;
  for (const r of data.runs) for (const s of r.waits.seconds) longest = Math.max(longest, s);
  if (longest === 0)
    gpuslice.note('chart-waits', 'No pod waited in any run: each was placed the moment it arrived, or not at all. ' +
                  'The lines show the share placed.');
  const waitUnit = unitOf(longest);
  // A round right edge past the longest wait, so its step stays in sight
  // (1 s when nobody waited).
  const past = longest > 0 ? longest / waitUnit[0] * 1.04 : 1;
  const magnitude = Math.pow(10, Math.floor(Math.log10(past)));
  const right = Math.ceil(past / magnitude * 2) / 2 * magnitude;
  lineChart('chart-waits', data.runs.map((r, i) => {
    const points = [{ x: 0, y: 0 }];
    r.waits.seconds.forEach((s, k) => points.push({ x: s / waitUnit[0], y: r.waits.pct[k] }));
    points.push({ x: right, y: points[points.length - 1].y });
    return { label: r.label + ' (' + r.waits.placed + ' of ' + r.waits.pods + ' placed)', data: points,
             borderColor: colour(i), backgroundColor: colour(i), borderDash: dash(i), pointRadius: 0,
             borderWidth: 1.8, stepped: 'before' };
  }), { type: 'linear', min: 0, max: right, title: { display: true, text: 'waited at most (' + waitUnit[1] + ')' } },
  axis('pods placed (% of the run\'s pods)', { max: 100 }));

  if (data.curves)
    lineChart('chart-curve', data.runs.map((r, i) => ({
      label: r.label, borderColor: colour(i), backgroundColor: colour(i), borderDash: dash(i), pointRadius: 0,
      borderWidth: 1.8, spanGaps: true,
      data: r.curve.map((v, x) => ({ x: x, y: v })).filter((p) => p.y !== null),
    })), { type: 'linear', min: 0, max: 130, title: { display: true, text: 'arrived GPU demand (% of capacity)' } },
    axis('GPU allocated (% of capacity)', { max: 100 }));
  gpuslice.done();
})();
