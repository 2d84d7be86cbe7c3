/**
 * The charts, all Chart.js (canvas): the task waterfall (floating horizontal bars, dependency
 * arrows from chartjs-plugin-annotation), sparklines and a bar chart. Only the pieces used are
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
} from 'chart.js';
import annotationPlugin, { type AnnotationOptions } from 'chartjs-plugin-annotation';
import { formatMs, formatUsd } from './format.ts';
import { drawnArrows, STATUS_COLOURS, type TaskModel } from './task-model.ts';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, LineController, LineElement, PointElement, Filler, Legend, Tooltip, annotationPlugin);
Chart.defaults.animation = false;
Chart.defaults.font.family = 'system-ui, sans-serif';

/** Height of one waterfall row in CSS pixels. */
export const ROW_PX = 22;

/** Draws the waterfall of a task into `canvas` (sized by the caller to rows × ROW_PX). */
export function waterfallChart(canvas: HTMLCanvasElement, model: TaskModel, selected: number | null): Chart<'bar', [number, number][], string> {
  const bars = model.bars;
  const arrows: Record<string, AnnotationOptions> = {};
  drawnArrows(model.arrows).forEach((a, i) => {
    const from = bars[a.from];
    const to = bars[a.to];
    if (!from || !to) return;
    arrows[`dep${i}`] = {
      type: 'line',
      xMin: Math.min(from.end, to.start),
      xMax: to.start,
      yMin: a.from,
      yMax: a.to,
      borderColor: a.dataFlow ? '#1565c0' : '#9e9e9e',
      borderWidth: a.dataFlow ? 1.6 : 1,
      borderDash: a.dataFlow ? [] : [4, 3],
      arrowHeads: { end: { display: true, length: 6, width: 4, fill: true } },
    };
  });
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
      responsive: true,
      maintainAspectRatio: false,
      events: [],
      scales: {
        x: { type: 'linear', position: 'top', min: 0, max: Math.max(1, model.totals.spanMs), ticks: { callback: (v) => formatMs(Number(v)) } },
        y: { type: 'category', ticks: { autoSkip: false, font: { size: 11 } } },
      },
      plugins: {
        legend: { display: false },
        annotation: { annotations: arrows },
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
  };
  return new Chart(canvas, config);
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
