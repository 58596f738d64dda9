// report.html's charts, drawn with Chart.js from the JSON in #report-data
// (written by gpuslice, see sim/src/report_data.cpp), with the helpers of
// common.js (inlined before this script).
'use strict';
(function () {
  const { data, count, note, axis, steps, lineChart } = gpuslice;
  const palette = { gpu: '#1f77b4', memory: '#ff7f0e', cores: '#2ca02c', frag: '#d62728', busy: '#9467bd',
                    running: '#1f77b4', pending: '#ff7f0e', waited: '#1f77b4', still: '#d62728' };

  // Simulated time in the unit that suits the run's length.
  const time = gpuslice.timeAxis(data.end_seconds);
  const unit = time.unit;
  const inUnit = (seconds) => seconds / unit[0];
  const timeAxis = () => Object.assign({}, time.scale);
  const tl = data.timeline;
  const line = (column, label, color) => steps(tl, column, unit, label, color);
  const sampledNote = tl.stride > 1 ? ' Sampled: every ' + count(tl.stride) + 'th of ' + count(tl.records) +
                                      ' records.' : '';

  lineChart('chart-allocation', [line('alloc_gpu_pct', 'GPU (milli-GPU)', palette.gpu),
                                 line('alloc_memory_pct', 'card memory', palette.memory),
                                 line('alloc_cores_pct', 'card cores', palette.cores)],
            timeAxis(), axis('allocated (% of capacity)', { max: 100 }));
  if (sampledNote) document.getElementById('chart-allocation-note').textContent += sampledNote;

  lineChart('chart-fragmentation', [line('frag_gpu_pct', 'fragmented GPU (% of capacity)', palette.frag),
                                    line('busy_cards_pct', 'cards holding a slice (%)', palette.busy)],
            timeAxis(), axis('% of the fleet', { suggestedMax: 10 }));

  lineChart('chart-pods', [line('running', 'running', palette.running), line('pending', 'pending', palette.pending)],
            timeAxis(), axis('pods', { ticks: { precision: 0 } }));

  // Runs with node groups: each group's size (steps from its summary's changes).
  if (data.node_groups) {
    lineChart('chart-nodes', data.node_groups.map((g, i) => steps(g, 'nodes', unit, g.name,
                                                                  gpuslice.series[i % gpuslice.series.length])),
              timeAxis(), axis('nodes', { ticks: { precision: 0 } }));
  }

  // Pending times: bins of a round width from 0 (gpuslice chose the width so
  // each bin's start, its label, is exact in the unit of the longest wait).
  const pd = data.pending;
  const bins = pd.waited.length;
  const inWaitUnit = (s) => Math.round(s / pd.unit_seconds * 1000) / 1000 + ' ' + pd.unit;
  note('chart-pending', count(pd.placed_at_once) + ' pods were placed the moment they arrived (not drawn), ' +
       count(pd.placed_after_waiting) + ' were placed after waiting, ' + count(pd.still_waiting) +
       ' were still waiting when the run ended (drawn apart, with their wait so far: a lower bound).');
  new Chart(document.getElementById('chart-pending'), {
    type: 'bar',
    data: { labels: pd.labels, datasets: [
      { label: 'placed after waiting', data: pd.waited, backgroundColor: palette.waited },
      { label: 'still waiting at the end (wait so far)', data: pd.still_waiting_bins, backgroundColor: palette.still },
    ] },
    options: {
      scales: {
        x: { stacked: true, ticks: { maxRotation: 0, autoSkip: true },
             title: { display: true, text: bins === 0 ? 'time pending (no pod waited)'
                                           : 'time pending (' + pd.unit + '), bins of ' + inWaitUnit(pd.bin_seconds) +
                                             ', each labelled by its start' } },
        y: axis('pods', { stacked: true, ticks: { precision: 0 } }),
      },
      plugins: { tooltip: { callbacks: { title: (items) => {
        const i = items[0].dataIndex;
        return 'waited ' + inWaitUnit(i * pd.bin_seconds) + ' to ' + inWaitUnit((i + 1) * pd.bin_seconds);
      } } } },
    },
  });

  // Per-card heatmap: Chart.js has no heatmap type, so a plugin paints the
  // grid's cells onto a scatter chart's axes (viridis colours, 0 to 100 %).
  const hm = data.heatmap;
  const viridis = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  function colour(v) {
    const f = Math.max(0, Math.min(1, v / 100)) * (viridis.length - 1);
    const i = Math.min(viridis.length - 2, Math.floor(f)), t = f - i;
    const c = viridis[i].map((a, k) => Math.round(a + (viridis[i + 1][k] - a) * t));
    return 'rgb(' + c.join(',') + ')';
  }
  const what = hm.metric === 'memory' ? 'card memory in use (% of the card)' : 'card cores in use (%)';
  if (!hm.kept)
    note('chart-heatmap', 'This run did not keep the per-card log (--no-card-use): no card_use.csv to draw.');
  else if (hm.cards === 0)
    note('chart-heatmap', 'No card held a slice during the run.');
  else
    note('chart-heatmap', 'Colour: ' + what + ', the time-weighted mean over each cell. Rows: the ' + count(hm.cards) +
         (hm.cards === 1 ? ' card that' : ' cards that') + ' held a slice at some point, in the order they first did' +
         (hm.cards_per_row > 1 ? ', grouped ' + count(hm.cards_per_row) + ' cards per row (mean over the group)' : '') +
         '; columns: ' + count(hm.columns) + ' equal spans of simulated time. Cards never used are not drawn.');
  const cellWidth = inUnit(hm.span_seconds) / hm.columns;
  new Chart(document.getElementById('chart-heatmap'), {
    type: 'scatter',
    data: { datasets: [] },
    options: {
      plugins: { legend: { display: false } },
      scales: {
        x: Object.assign(timeAxis(), { max: inUnit(hm.span_seconds) }),
        // Row r spans r - 0.5 .. r + 0.5, so its tick (and label) sits at its middle.
        y: { type: 'linear', reverse: true, min: -0.5, max: Math.max(1, hm.rows) - 0.5, offset: false,
             title: { display: true, text: hm.cards_per_row > 1 ? 'card group (node/card of its first card)' : 'node/card' },
             // Ticks on rows (at most 25 labelled), not on Chart.js's round numbers.
             afterBuildTicks: (scale) => {
               const step = Math.max(1, Math.ceil(hm.rows / 25));
               scale.ticks = [];
               for (let r = 0; r < hm.rows; r += step) scale.ticks.push({ value: r });
             },
             ticks: { autoSkip: false, callback: (v) => (Number.isInteger(v) && v < hm.rows ? hm.row_labels[v] : '') } },
      },
    },
    plugins: [{
      id: 'gpusliceHeatmap',
      beforeDatasetsDraw(chart) {
        const { ctx, scales: { x, y } } = chart;
        ctx.save();
        for (let r = 0; r < hm.rows; ++r) {
          const top = Math.floor(y.getPixelForValue(r - 0.5)), bottom = Math.ceil(y.getPixelForValue(r + 0.5));
          for (let c = 0; c < hm.columns; ++c) {
            const left = Math.floor(x.getPixelForValue(c * cellWidth));
            const right = Math.ceil(x.getPixelForValue((c + 1) * cellWidth));
            ctx.fillStyle = colour(hm.values[r * hm.columns + c]);
            ctx.fillRect(left, top, right - left, bottom - top);
          }
        }
        ctx.restore();
      },
    }],
  });
  const scale = document.createElement('div');
  scale.className = 'scale';
  scale.innerHTML = '<span>0 %</span><span class="bar" style="background:linear-gradient(to right,' +
                    viridis.map((c) => 'rgb(' + c.join(',') + ')').join(',') + ')"></span><span>100 % ' + what + '</span>';
  document.getElementById('chart-heatmap').parentNode.after(scale);

  // Pods not placed, by reason.
  const np = data.not_placed;
  if (np.reasons.length === 0) note('chart-refusals', 'Every pod was placed: none was refused, none left waiting.');
  new Chart(document.getElementById('chart-refusals'), {
    type: 'bar',
    data: { labels: np.reasons, datasets: [
      { label: 'refused', data: np.refused, backgroundColor: palette.frag, maxBarThickness: 36 },
      { label: 'still waiting at the end', data: np.still_pending, backgroundColor: palette.pending, maxBarThickness: 36 },
    ] },
    options: { indexAxis: 'y',
               scales: { x: axis('pods', { stacked: true, ticks: { precision: 0 } }), y: { stacked: true } } },
  });
  gpuslice.done();
})();
