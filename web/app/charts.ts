/**
 * The charts, all Chart.js (canvas): the task waterfall (floating horizontal bars, dependency
 * arrows drawn by a small Chart.js plugin on the chart's own scales), sparklines and a bar chart. Only the pieces used are
 * registered, so the bundle keeps what it draws. Every chart's content is also in the DOM as
 * text (the callers build lists and tables beside it); canvases are marked decorative or
 * labelled as images.
 */
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type ChartConfiguration,
  type Plugin,
} from 'chart.js';
import { formatMs, formatUsd } from './format.ts';
import { drawnArrows, STATUS_COLOURS, type Arrow, type TaskModel, type Turn } from './task-model.ts';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, LineController, LineElement, PointElement, Filler, Legend, Tooltip);
Chart.defaults.animation = false;
Chart.defaults.font.family = 'system-ui, sans-serif';

/** Height of one waterfall row in CSS pixels. */
export const ROW_PX = 22;

/** Draws the waterfall of a task into `canvas` (sized by the caller to rows × ROW_PX). */
export function waterfallChart(canvas: HTMLCanvasElement, model: TaskModel, selected: number | null): Chart<'bar', [number, number][], string> {
  const bars = model.bars;
  const config: ChartConfiguration<'bar', [number, number][], string> = {
    type: 'bar',
    data: {
      labels: bars.map((b) => `${b.violations.length ? '⚠ ' : ''}#${b.index + 1} ${b.call.tool_id}`),
      datasets: [
        {
          data: bars.map((b) => [b.start, Math.max(b.end, b.start + 1)] as [number, number]),
          backgroundColor: bars.map((b) => STATUS_COLOURS[b.call.status]),
          borderColor: bars.map((b) => (b.index === selected ? '#000' : 'transparent')),
          borderWidth: 2,
          borderSkipped: false,
          barPercentage: 0.9,
          categoryPercentage: 0.9,
          minBarLength: 2,
        },
      ],
    },
    options: {
      indexAxis: 'y',
      // A fixed size (set by the caller from its box) spares a ResizeObserver round and a second layout.
      responsive: false,
      events: [],
      scales: {
        // Model turns may start before the first call (the turn that asked for it) and end after the last.
        x: {
          type: 'linear',
          position: 'top',
          min: Math.min(0, ...model.turns.map((t) => t.start)),
          max: Math.max(1, model.totals.spanMs, ...model.turns.map((t) => t.end)),
          ticks: { callback: (v) => formatMs(Number(v)) },
        },
        y: { type: 'category', ticks: { autoSkip: false, font: { size: 11 } } },
      },
      plugins: {
        legend: { display: false },
        tooltip: {
          callbacks: {
            title: (items) => bars[items[0]?.dataIndex ?? 0]?.call.tool_id ?? '',
            label: (item) => {
              const b = bars[item.dataIndex];
              if (!b) return '';
              return [`${b.call.status} · ${formatMs(b.call.duration_ms)} · ${formatUsd(b.call.cost_usd)}`, `agent ${b.call.agent_id}`, `starts at +${formatMs(b.start)}`];
            },
          },
        },
      },
    },
    plugins: [turnPlugin(model.turns), arrowPlugin(drawnArrows(model.arrows))],
  };
  return new Chart(canvas, config);
}

/**
 * Model turns behind the bars: a shaded band from each turn's request to its answer across every
 * row, named at the top ("turn 2"), so a turn shows between the calls before and after it.
 */
function turnPlugin(turns: Turn[]): Plugin<'bar'> {
  return {
    id: 'modelTurns',
    beforeDatasetsDraw(chart) {
      const { ctx, chartArea: area } = chart;
      const x = chart.scales.x;
      if (!x || turns.length === 0) return;
      ctx.save();
      ctx.font = '10px sans-serif';
      for (const t of turns) {
        const x0 = x.getPixelForValue(t.start);
        const x1 = Math.max(x.getPixelForValue(t.end), x0 + 2);
        ctx.fillStyle = t.turn.status === 'error' ? 'rgba(198, 40, 40, 0.12)' : 'rgba(21, 101, 192, 0.10)';
        ctx.fillRect(x0, area.top, x1 - x0, area.bottom - area.top);
        ctx.fillStyle = '#1565c0';
        ctx.fillText(`turn ${t.index + 1}`, x0 + 2, area.top + 10);
      }
      ctx.restore();
    },
  };
}

/**
 * Dependency arrows from the end of the preceding bar (or the successor's start, when they
 * overlap) to the start of the succeeding bar: solid blue where data flowed, dashed grey for
 * order only. A plugin that strokes each kind as one path, because chartjs-plugin-annotation
 * (one element with resolved options per line) cost ~150 ms for the ~270 arrows of a 200-call
 * task — half the page's budget.
 */
function arrowPlugin(arrows: Arrow[]): Plugin<'bar'> {
  return {
    id: 'dependencyArrows',
    afterDatasetsDraw(chart) {
      const { ctx } = chart;
      const x = chart.scales.x;
      const y = chart.scales.y;
      const data = chart.data.datasets[0]?.data as [number, number][] | undefined;
      if (!x || !y || !data) return;
      for (const flow of [false, true]) {
        const heads: Array<[number, number, number]> = [];
        ctx.save();
        ctx.beginPath();
        for (const a of arrows) {
          if (a.dataFlow !== flow) continue;
          const from = data[a.from];
          const to = data[a.to];
          if (!from || !to) continue;
          const x0 = x.getPixelForValue(Math.min(from[1], to[0]));
          const y0 = y.getPixelForValue(a.from);
          const x1 = x.getPixelForValue(to[0]);
          const y1 = y.getPixelForValue(a.to);
          ctx.moveTo(x0, y0);
          ctx.lineTo(x1, y1);
          heads.push([x1, y1, Math.atan2(y1 - y0, x1 - x0)]);
        }
        ctx.strokeStyle = flow ? '#1565c0' : '#9e9e9e';
        ctx.lineWidth = flow ? 1.6 : 1;
        ctx.setLineDash(flow ? [] : [4, 3]);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.beginPath();
        for (const [hx, hy, angle] of heads) {
          ctx.moveTo(hx, hy);
          ctx.lineTo(hx - 6 * Math.cos(angle - 0.45), hy - 6 * Math.sin(angle - 0.45));
          ctx.lineTo(hx - 6 * Math.cos(angle + 0.45), hy - 6 * Math.sin(angle + 0.45));
          ctx.closePath();
        }
        ctx.fillStyle = ctx.strokeStyle;
        ctx.fill();
        ctx.restore();
      }
    },
  };
}

/** A sparkline: one line, no axes. */
export function sparkline(canvas: HTMLCanvasElement, values: number[], colour: string): Chart {
  return new Chart(canvas, {
    type: 'line',
    data: { labels: values.map((_, i) => String(i)), datasets: [{ data: values, borderColor: colour, backgroundColor: `${colour}33`, fill: true, borderWidth: 1.2, pointRadius: 0, tension: 0.25 }] },
    options: {
      responsive: false,
      events: [],
      scales: { x: { display: false }, y: { display: false, beginAtZero: true } },
      plugins: { legend: { display: false }, tooltip: { enabled: false } },
    },
  });
}

/** A horizontal bar chart of label → value (error distributions). */
export function barChart(canvas: HTMLCanvasElement, entries: Array<[string, number]>, colour: string): Chart {
  return new Chart(canvas, {
    type: 'bar',
    data: { labels: entries.map(([k]) => (k.length > 48 ? `${k.slice(0, 47)}…` : k)), datasets: [{ data: entries.map(([, v]) => v), backgroundColor: colour }] },
    options: { indexAxis: 'y', responsive: true, maintainAspectRatio: false, scales: { x: { beginAtZero: true, ticks: { precision: 0 } } }, plugins: { legend: { display: false } } },
  });
}

/** A line chart of several series over numeric x values (the cache TTL curve). */
export function lineChart(canvas: HTMLCanvasElement, curve: { x: string; xs: number[]; series: Array<{ name: string; values: number[] }> }): Chart {
  const colours = ['#1565c0', '#2e7d32', '#ef6c00', '#8e24aa'];
  return new Chart(canvas, {
    type: 'line',
    data: { labels: curve.xs.map(String), datasets: curve.series.map((s, i) => ({ label: s.name, data: s.values, borderColor: colours[i % colours.length], pointRadius: 2 })) },
    options: { responsive: true, maintainAspectRatio: false, scales: { x: { title: { display: true, text: curve.x } } }, plugins: { legend: { display: true } } },
  });
}
