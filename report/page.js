// aimeter report: draws the charts of every scenario from the JSON in
// #report-data with the embedded uPlot, then sets
// document.body.dataset.rendered to the number of charts drawn.
(function () {
  "use strict";
  var dataEl = document.getElementById("report-data");
  if (!dataEl || typeof uPlot === "undefined") {
    return;
  }
  var data = JSON.parse(dataEl.textContent);
  var style = getComputedStyle(document.documentElement);
  function cssVar(name) {
    return style.getPropertyValue(name).trim();
  }
  var fg = cssVar("--fg");
  var gridColor = cssVar("--grid");
  var c1 = cssVar("--c1"), c2 = cssVar("--c2"), c3 = cssVar("--c3"), c4 = cssVar("--c4");
  var bad = cssVar("--bad");
  var band = cssVar("--band");
  var fill = cssVar("--fill");
  var HEIGHT = 300;
  var plots = [];

  function fmt(v) {
    if (v == null || !isFinite(v)) {
      return "—";
    }
    var a = Math.abs(v);
    if (a === 0) {
      return "0";
    }
    if (a >= 1e5 || a < 1e-3) {
      return v.toExponential(3);
    }
    return String(Number(v.toPrecision(4)));
  }

  function axis(label, extra) {
    var a = {
      label: label,
      stroke: fg,
      grid: { stroke: gridColor, width: 1 },
      ticks: { stroke: gridColor, width: 1 }
    };
    for (var k in extra || {}) {
      a[k] = extra[k];
    }
    return a;
  }

  function series(label, color, opts) {
    var s = {
      label: label,
      stroke: color,
      width: 1.5,
      points: { show: false },
      value: function (u, v) { return fmt(v); }
    };
    for (var k in opts || {}) {
      s[k] = opts[k];
    }
    return s;
  }

  // Scale range that also takes in the marked values, linear or log.
  function rangeWith(extra, log, fromZero) {
    return function (u, min, max) {
      extra.forEach(function (e) {
        if (e != null && isFinite(e)) {
          min = Math.min(min, e);
          max = Math.max(max, e);
        }
      });
      if (min == null || max == null) {
        return [0, 1];
      }
      if (log) {
        return uPlot.rangeLog(min > 0 ? min : 1e-9, max > 0 ? max : 1, 10, true);
      }
      if (fromZero) {
        min = Math.min(0, min);
      }
      return uPlot.rangeNum(min, max, 0.05, true);
    };
  }

  // Dashed marker lines: {axis: "x" | "y", value, label, color}.
  function markers(list) {
    return {
      hooks: {
        draw: [function (u) {
          var ctx = u.ctx;
          var r = uPlot.pxRatio;
          ctx.save();
          ctx.lineWidth = 1.5 * r;
          ctx.setLineDash([6 * r, 4 * r]);
          ctx.font = Math.round(11 * r) + "px sans-serif";
          ctx.textBaseline = "alphabetic";
          var xRow = 0, yRow = 0;
          list.forEach(function (m) {
            if (m.value == null || !isFinite(m.value)) {
              return;
            }
            var sc = u.scales[m.axis];
            if (sc.min == null || m.value < sc.min || m.value > sc.max) {
              return;
            }
            var p = Math.round(u.valToPos(m.value, m.axis, true));
            var b = u.bbox;
            ctx.strokeStyle = m.color;
            ctx.fillStyle = m.color;
            ctx.beginPath();
            if (m.axis === "x") {
              ctx.moveTo(p, b.top);
              ctx.lineTo(p, b.top + b.height);
              ctx.stroke();
              // Beside the line, on the side with room; one row per label.
              var w = ctx.measureText(m.label).width;
              var right = p + 4 * r + w <= b.left + b.width;
              ctx.textAlign = right ? "left" : "right";
              ctx.fillText(m.label, right ? p + 4 * r : p - 4 * r, b.top + (12 + 14 * xRow++) * r);
            } else {
              ctx.moveTo(b.left, p);
              ctx.lineTo(b.left + b.width, p);
              ctx.stroke();
              // At the right end, alternately above and below the line.
              ctx.textAlign = "right";
              var below = yRow++ % 2 === 1;
              ctx.fillText(m.label, b.left + b.width - 4 * r, below ? p + 13 * r : p - 4 * r);
            }
          });
          ctx.restore();
        }]
      }
    };
  }

  function plot(id, opts, values) {
    var el = document.getElementById(id);
    if (!el) {
      throw new Error("aimeter report: no element #" + id);
    }
    opts.width = Math.max(200, el.clientWidth || 600);
    opts.height = HEIGHT;
    opts.legend = opts.legend || { live: true };
    var u = new uPlot(opts, values, el);
    plots.push({ u: u, el: el });
    return u;
  }

  function draw(c) {
    var unit = c.unit;
    var latLabel = c.latencyLabel + " (" + unit + ")";
    var targetMark = { axis: "x", value: c.targetLatency, label: c.targetLabel + " " + fmt(c.targetLatency) + " " + unit, color: c4 };
    var boundMark = { axis: "x", value: c.bound, label: "bound " + fmt(c.bound) + " " + unit, color: bad };
    var xMarks = [targetMark].concat(c.bound != null ? [boundMark] : []);
    var xExtra = [c.targetLatency, c.bound];

    plot(c.id + "-hist", {
      scales: {
        x: { time: false, distr: c.logX ? 3 : 1, range: rangeWith(xExtra, c.logX, false) },
        y: { range: rangeWith([0], false, true) }
      },
      axes: [axis(latLabel), axis("samples", { size: 60 })],
      series: [
        { label: c.latencyLabel, value: function (u, v) { return fmt(v) + " " + unit; } },
        series("count", c1, { fill: fill, paths: uPlot.paths.stepped({ align: 1 }) })
      ],
      plugins: [markers(xMarks)]
    }, [c.hist.x, c.hist.y]);

    plot(c.id + "-cdf", {
      scales: {
        x: { time: false, distr: c.logX ? 3 : 1, range: rangeWith(xExtra, c.logX, false) },
        y: { range: [0, 1.02] }
      },
      axes: [axis(latLabel), axis("fraction ≤ latency", { size: 60 })],
      series: [
        { label: c.latencyLabel, value: function (u, v) { return fmt(v) + " " + unit; } },
        series(c.cdf.exact ? "CDF" : "CDF (from histogram)", c1, { paths: uPlot.paths.stepped({ align: 1 }) })
      ],
      plugins: [markers(xMarks.concat([{ axis: "y", value: c.targetP, label: c.targetLabel, color: c4 }]))]
    }, [c.cdf.x, c.cdf.y]);

    var yMarks = [{ axis: "y", value: c.targetLatency, label: c.targetLabel + " " + fmt(c.targetLatency) + " " + unit, color: c4 }];
    if (c.bound != null) {
      yMarks.push({ axis: "y", value: c.bound, label: "bound " + fmt(c.bound) + " " + unit, color: bad });
    }
    plot(c.id + "-latency", {
      scales: {
        x: { time: false },
        y: c.time.logY ?
          { distr: 3, range: rangeWith([c.targetLatency, c.bound], true, false) } :
          { range: rangeWith([0, c.targetLatency, c.bound], false, true) }
      },
      axes: [axis("time since start of pass (s)"), axis(latLabel, { size: 60 })],
      series: [
        { label: "time (s)", value: function (u, v) { return fmt(v); } },
        series("min", c3, { width: 1, spanGaps: true }),
        series("mean", c1, { width: 2, spanGaps: true }),
        series("max", c2, { width: 1, spanGaps: true })
      ],
      bands: [{ series: [3, 1], fill: band }],
      plugins: [markers(yMarks)]
    }, [c.time.x, c.time.min, c.time.mean, c.time.max]);

    var tSeries = [{ label: "time (s)", value: function (u, v) { return fmt(v); } }];
    var tValues = [c.time.x];
    if (c.time.issued) { // Offline issues everything at once: no issue rate
      tSeries.push(series("issued/s", c2, { width: 1 }));
      tValues.push(c.time.issued);
    }
    tSeries.push(series("completed/s", c1, { width: 2 }));
    tValues.push(c.time.completed);
    if (c.time.failed) {
      tSeries.push(series("failed/s", bad, { width: 1 }));
      tValues.push(c.time.failed);
    }
    plot(c.id + "-throughput", {
      scales: { x: { time: false }, y: { range: rangeWith([0], false, true) } },
      axes: [axis("time since start of pass (s)"), axis("samples per second", { size: 70 })],
      series: tSeries
    }, tValues);
  }

  data.charts.forEach(draw);

  var resizeTimer = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      plots.forEach(function (p) {
        p.u.setSize({ width: Math.max(200, p.el.clientWidth), height: HEIGHT });
      });
    }, 100);
  });
  document.body.dataset.rendered = String(plots.length);
})();
