// defrag's report.html: card use before and after the plan, drawn with
// Chart.js from the JSON in #report-data (written by gpuslice, see
// defrag/src/html_report.cpp), read by the simulator's common.js, run before,
// which also counts the charts drawn for the browser test.
'use strict';
(function () {
  const data = gpuslice.data;

  const cards = data.cards;
  const labels = cards.map((c) => c.label);
  function bars(id, unit, before, after, capacity) {
    const datasets = [
      { label: 'before', backgroundColor: '#9aa5b1', data: cards.map(before) },
      { label: data.has_plan ? 'after the plan' : 'after (no plan: unchanged)', backgroundColor: '#1f77b4',
        data: cards.map(after) },
      { label: 'capacity', type: 'line', borderColor: '#d62728', backgroundColor: '#d62728', pointRadius: 2,
        borderWidth: 1, showLine: false, data: cards.map(capacity) },
    ];
    return new Chart(document.getElementById(id), {
      type: 'bar', data: { labels: labels, datasets: datasets },
      options: { scales: { x: { ticks: { autoSkip: false, maxRotation: 60, minRotation: 30 } },
                           y: { beginAtZero: true, title: { display: true, text: unit } } },
                 plugins: { legend: { position: 'top' },
                            tooltip: { callbacks: { afterBody: (items) => cards[items[0].dataIndex].note || '' } } } },
    });
  }
  bars('chart-memory', 'card memory in use (MiB)', (c) => c.before_mib, (c) => c.after_mib, (c) => c.capacity_mib);
  bars('chart-cores', 'card cores in use (%)', (c) => c.before_cores, (c) => c.after_cores, (c) => c.capacity_cores);
})();
