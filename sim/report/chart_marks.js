// Shared by gpuslice's pages (report.html, defrag's report.html), run after
// Chart.js and before a page's own script: after each chart has drawn a
// non-empty canvas the body's data-rendered counts it (the browser tests
// compare that count with data-charts), and the charts' common defaults.
'use strict';
(function () {
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
})();
