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
  var bg = cssVar("--bg");
  var HEIGHT = 300;
  var plots = [];

  // fmt formats a chart value for people, as the report's Go formatters
  // do: four significant digits, whole numbers from 1,000 on with thousands
  // separators, no float expansion.
  function fmt(v) {
    if (v == null || !isFinite(v)) {
      return "—";
    }
    var a = Math.abs(v);
    if (a === 0) {
      return "0";
    }
    if (a >= 1000) {
      return Math.round(v).toLocaleString("en-US");
    }
    if (a < 1e-3) {
      return v.toPrecision(3);
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

  // Dashed marker lines: {axis: "x" | "y", value, label, color}, each
  // labelled on a background box. Labels are placed so that none overlaps
  // another label or any marker line: each takes the first free place from a
  // list of candidates (beside a vertical line, row by row from the top;
  // above or below a horizontal line, at the right end then the left, moving
  // away from it row by row). The chart element's data-labels and data-lines
  // hold the boxes and lines drawn, in CSS pixels from the canvas's top left,
  // for the browser test.
  function markers(list) {
    return {
      hooks: {
        draw: [function (u) {
          var ctx = u.ctx;
          var r = uPlot.pxRatio;
          var b = u.bbox;
          var pad = 3 * r, gap = 3 * r, boxH = 15 * r;
          ctx.save();
          ctx.font = Math.round(11 * r) + "px sans-serif";
          ctx.textBaseline = "middle";
          ctx.textAlign = "left";
          var shown = [];
          list.forEach(function (m) {
            if (m.value == null || !isFinite(m.value)) {
              return;
            }
            var sc = u.scales[m.axis];
            if (sc.min == null || m.value < sc.min || m.value > sc.max) {
              return;
            }
            shown.push({ m: m, p: Math.round(u.valToPos(m.value, m.axis, true)) });
          });
          // Every line first: a label must keep off all of them.
          var lines = shown.map(function (s) {
            ctx.strokeStyle = s.m.color;
            ctx.lineWidth = 1.5 * r;
            ctx.setLineDash([6 * r, 4 * r]);
            ctx.beginPath();
            if (s.m.axis === "x") {
              ctx.moveTo(s.p, b.top);
              ctx.lineTo(s.p, b.top + b.height);
              ctx.stroke();
              return { x: s.p - r, y: b.top, w: 2 * r, h: b.height };
            }
            ctx.moveTo(b.left, s.p);
            ctx.lineTo(b.left + b.width, s.p);
            ctx.stroke();
            return { x: b.left, y: s.p - r, w: b.width, h: 2 * r };
          });
          ctx.setLineDash([]);
          function overlaps(a, c) {
            return a.x < c.x + c.w && c.x < a.x + a.w && a.y < c.y + c.h && c.y < a.y + a.h;
          }
          function inside(a) {
            return a.x >= b.left && a.y >= b.top && a.x + a.w <= b.left + b.width && a.y + a.h <= b.top + b.height;
          }
          var rows = Math.max(1, Math.floor(b.height / (boxH + gap)));
          var placed = [];
          shown.forEach(function (s) {
            var w = ctx.measureText(s.m.label).width + 2 * pad;
            var cands = [];
            for (var k = 0; k < rows; k++) {
              if (s.m.axis === "x") {
                var y = b.top + gap + k * (boxH + gap);
                cands.push({ x: s.p + gap, y: y, w: w, h: boxH }, { x: s.p - gap - w, y: y, w: w, h: boxH });
              } else {
                var off = k * (boxH + gap);
                var xr = b.left + b.width - gap - w, xl = b.left + gap;
                cands.push(
                  { x: xr, y: s.p - gap - boxH - off, w: w, h: boxH },
                  { x: xr, y: s.p + gap + off, w: w, h: boxH },
                  { x: xl, y: s.p - gap - boxH - off, w: w, h: boxH },
                  { x: xl, y: s.p + gap + off, w: w, h: boxH });
              }
            }
            function free(c, withLines) {
              return inside(c) &&
                !placed.some(function (q) { return overlaps(c, q); }) &&
                (!withLines || !lines.some(function (l) { return overlaps(c, l); }));
            }
            // A place clear of labels and lines; failing that (a crowded
            // chart), one clear of labels; failing that, the first.
            var box = cands.find(function (c) { return free(c, true); }) ||
              cands.find(function (c) { return free(c, false); }) || cands[0];
            box.text = s.m.label;
            placed.push(box);
            ctx.globalAlpha = 0.85;
            ctx.fillStyle = bg;
            ctx.fillRect(box.x, box.y, box.w, box.h);
            ctx.globalAlpha = 1;
            ctx.fillStyle = s.m.color;
            ctx.fillText(s.m.label, box.x + pad, box.y + box.h / 2);
          });
          ctx.restore();
          var css = function (a) {
            var o = { x: a.x / r, y: a.y / r, w: a.w / r, h: a.h / r };
            if (a.text != null) {
              o.text = a.text;
            }
            return o;
          };
          var el = u.root.parentNode;
          el.dataset.labels = JSON.stringify(placed.map(css));
          el.dataset.lines = JSON.stringify(lines.map(css));
        }]
      }
    };
  }

  // plot draws one chart into the element id. Its legend shows the value
  // under the mouse, and while the mouse is away summary[i] for series i
  // (the x series first): a summary of the whole pass, so that the legend
  // says something before the mouse moves.
  // windows shades the steady-state windows (from/to in seconds of the
  // pass) across the plot area, each labelled at its top left, before the
  // series are drawn; the plot's root element's dataset.windows counts those
  // shown, for the browser test.
  function windows(list) {
    return {
      hooks: {
        drawClear: [function (u) {
          var ctx = u.ctx;
          var r = uPlot.pxRatio;
          var b = u.bbox;
          var shown = 0;
          ctx.save();
          ctx.font = Math.round(11 * r) + "px sans-serif";
          ctx.textBaseline = "top";
          list.forEach(function (w, i) {
            var x0 = Math.max(u.valToPos(w.from, "x", true), b.left);
            var x1 = Math.min(u.valToPos(w.to, "x", true), b.left + b.width);
            if (!(x1 > x0)) {
              return;
            }
            ctx.fillStyle = i % 2 ? "rgba(44,160,44,0.10)" : "rgba(31,119,180,0.10)";
            ctx.fillRect(x0, b.top, x1 - x0, b.height);
            ctx.fillStyle = fg;
            ctx.fillText(w.label, x0 + 3 * r, b.top + (3 + 14 * i) * r);
            shown++;
          });
          ctx.restore();
          u.root.dataset.windows = String(shown);
        }]
      }
    };
  }

  function plot(id, opts, values, summary) {
    var el = document.getElementById(id);
    if (!el) {
      throw new Error("aimeter report: no element #" + id);
    }
    opts.series.forEach(function (s) {
      var show = s.value || function (u, v) { return fmt(v); };
      s.value = function (u, v, sidx, idx) {
        if (idx == null && summary && summary[sidx] != null) {
          return summary[sidx];
        }
        return show(u, v, sidx, idx);
      };
    });
    opts.width = Math.max(200, el.clientWidth || 600);
    opts.height = HEIGHT;
    opts.legend = opts.legend || { live: true };
    var u = new uPlot(opts, values, el);
    u.setLegend({ idx: null });
    plots.push({ u: u, el: el });
    return u;
  }

  function draw(c) {
    var unit = c.unit;
    var latLabel = c.latencyLabel + " (" + unit + ")";
    var latValue = function (u, v) { return fmt(v) + " " + unit; };
    var targetMark = { axis: "x", value: c.targetLatency, label: c.targetText, color: c4 };
    var boundMark = { axis: "x", value: c.bound, label: c.boundText, color: bad };
    var xMarks = [targetMark].concat(c.bound != null ? [boundMark] : []);
    var xExtra = [c.targetLatency, c.bound];

    plot(c.id + "-hist", {
      scales: {
        x: { time: false, distr: c.logX ? 3 : 1, range: rangeWith(xExtra, c.logX, false) },
        y: { range: rangeWith([0], false, true) }
      },
      axes: [axis(latLabel), axis("samples", { size: 60 })],
      series: [
        { label: c.latencyLabel, value: latValue },
        series("count", c1, { fill: fill, paths: uPlot.paths.stepped({ align: 1 }) })
      ],
      plugins: [markers(xMarks)]
    }, [c.hist.x, c.hist.y], c.legend.hist);

    plot(c.id + "-cdf", {
      scales: {
        x: { time: false, distr: c.logX ? 3 : 1, range: rangeWith(xExtra, c.logX, false) },
        y: { range: [0, 1.02] }
      },
      axes: [axis(latLabel), axis("fraction ≤ latency", { size: 60 })],
      series: [
        { label: c.latencyLabel, value: latValue },
        series(c.cdf.exact ? "CDF" : "CDF (from histogram)", c1, { paths: uPlot.paths.stepped({ align: 1 }) })
      ],
      plugins: [markers(xMarks.concat([{ axis: "y", value: c.targetP, label: c.targetLabel, color: c4 }]))]
    }, [c.cdf.x, c.cdf.y], c.legend.cdf);

    var yMarks = [{ axis: "y", value: c.targetLatency, label: c.targetText, color: c4 }];
    if (c.bound != null) {
      yMarks.push({ axis: "y", value: c.bound, label: c.boundText, color: bad });
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
        series("min", c3, { width: 1, spanGaps: true, value: latValue }),
        series("mean", c1, { width: 2, spanGaps: true, value: latValue }),
        series("max", c2, { width: 1, spanGaps: true, value: latValue })
      ],
      bands: [{ series: [3, 1], fill: band }],
      plugins: [markers(yMarks), windows(c.windows || [])]
    }, [c.time.x, c.time.min, c.time.mean, c.time.max], c.legend.latency);

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
      series: tSeries,
      plugins: [windows(c.windows || [])]
    }, tValues, c.legend.throughput);
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
