/**
 * A minimal Prometheus registry: labelled counters, gauges and latency summaries rendered in
 * the text exposition format. One registry per process, passed to whoever records metrics.
 */

type Labels = Record<string, string>;

interface Series {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'summary';
  values: Map<string, number>;
  samples?: Map<string, number[]>;
}

const labelKey = (labels: Labels): string =>
  Object.keys(labels)
    .sort()
    .map((k) => `${k}="${String(labels[k]).replace(/["\\\n]/g, '_')}"`)
    .join(',');

const SUMMARY_WINDOW = 1024;

/** Holds every metric of a process. */
export class MetricsRegistry {
  private readonly series = new Map<string, Series>();

  private get(name: string, help: string, type: Series['type']): Series {
    let s = this.series.get(name);
    if (!s) {
      s = { name, help, type, values: new Map(), samples: type === 'summary' ? new Map() : undefined };
      this.series.set(name, s);
    }
    return s;
  }

  /** Adds n to a counter. */
  inc(name: string, help: string, labels: Labels = {}, n = 1): void {
    const s = this.get(name, help, 'counter');
    const k = labelKey(labels);
    s.values.set(k, (s.values.get(k) ?? 0) + n);
  }

  /** Sets a gauge. */
  set(name: string, help: string, value: number, labels: Labels = {}): void {
    this.get(name, help, 'gauge').values.set(labelKey(labels), value);
  }

  /** Records one observation (seconds) of a latency summary over a sliding window. */
  observe(name: string, help: string, value: number, labels: Labels = {}): void {
    const s = this.get(name, help, 'summary');
    const k = labelKey(labels);
    const window = s.samples?.get(k) ?? [];
    window.push(value);
    if (window.length > SUMMARY_WINDOW) window.shift();
    s.samples?.set(k, window);
    s.values.set(k, (s.values.get(k) ?? 0) + 1);
  }

  /** Current value of a counter or gauge (0 when never set); for tests and readiness. */
  value(name: string, labels: Labels = {}): number {
    return this.series.get(name)?.values.get(labelKey(labels)) ?? 0;
  }

  /** Renders the Prometheus text exposition format. */
  render(): string {
    const lines: string[] = [];
    for (const s of this.series.values()) {
      lines.push(`# HELP ${s.name} ${s.help}`, `# TYPE ${s.name} ${s.type}`);
      for (const [k, v] of s.values) {
        const lbl = (extra: string) => `{${[k, extra].filter(Boolean).join(',')}}`.replace('{}', '');
        if (s.type !== 'summary') {
          lines.push(`${s.name}${lbl('')} ${v}`);
          continue;
        }
        const sorted = [...(s.samples?.get(k) ?? [])].sort((a, b) => a - b);
        for (const q of [0.5, 0.95, 0.99]) {
          const at = sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
          lines.push(`${s.name}${lbl(`quantile="${q}"`)} ${at}`);
        }
        lines.push(`${s.name}_count${lbl('')} ${v}`);
      }
    }
    return `${lines.join('\n')}\n`;
  }
}
