/**
 * A few DOM helpers instead of a framework: the pages are rendered once per navigation from
 * API answers, so a function that builds elements is all they need (no state to diff).
 */
import { HOUR_CHOICES } from './window.ts';

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | ((e: Event) => void)>;

/** Creates an element: `el('a', { href: '/x', class: 'y' }, 'text')`; `on*` attributes are listeners. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === 'function') e.addEventListener(k.slice(2).toLowerCase(), v);
    else if (v === true) e.setAttribute(k, '');
    else e.setAttribute(k, String(v));
  }
  append(e, ...children);
  return e;
}

/** A filter form (role search): each control after its label, then the submit button. */
export function filterForm(ariaLabel: string, fields: Array<[id: string, label: string, control: HTMLElement]>, submit: string, onsubmit: (e: Event) => void): HTMLFormElement {
  const labelled = fields.flatMap(([id, label, control], i) => [el('label', { for: id }, i ? ` ${label} ` : `${label} `), control]);
  return el('form', { class: 'filters', role: 'search', 'aria-label': ariaLabel, onsubmit }, ...labelled, el('button', { type: 'submit' }, submit));
}

/** Appends children, skipping the empty ones. */
export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    parent.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
}

/** A link handled by the app's router (a plain <a href>, so it can be opened in a new tab). */
export function link(href: string, ...children: Child[]): HTMLAnchorElement {
  return el('a', { href, 'data-nav': '' }, ...children);
}

/** The page URL of a task and of a tool. */
export const taskHref = (id: string) => `/tasks/${encodeURIComponent(id)}`;
export const toolHref = (id: string) => `/tools/${encodeURIComponent(id)}`;
/** The page URL of a call: its task's page with the call selected. */
export const callHref = (taskId: string, callId: string) => `${taskHref(taskId)}?call=${encodeURIComponent(callId)}`;

/** The link to a list's next (older) page, or nothing on its last page. */
export function olderLink(href: string | null, text: string): HTMLElement | '' {
  return href ? el('p', {}, link(href, text)) : '';
}

/** A column of {@link table}. */
export interface Column<T> {
  title: string;
  cell(row: T): Child;
  /** Sort key; a column without one is not sortable. */
  sort?(row: T): number | string;
  numeric?: boolean;
}

/**
 * A real <table> (rows and cells a screen reader announces), sortable by clicking a header
 * button (aria-sort tells the current order).
 */
export function table<T>(caption: string, columns: Column<T>[], rows: T[], opts: { testId?: string; initialSort?: number; descending?: boolean } = {}): HTMLElement {
  const tbody = el('tbody');
  const headers: HTMLTableCellElement[] = [];
  let sortIndex = opts.initialSort ?? -1;
  let descending = opts.descending ?? true;
  const render = () => {
    const col = columns[sortIndex];
    const sorted = col?.sort ? [...rows].sort((a, b) => compare(col.sort!(a), col.sort!(b)) * (descending ? -1 : 1)) : rows;
    tbody.replaceChildren(...sorted.map((r) => el('tr', {}, ...columns.map((c) => el('td', { class: c.numeric ? 'num' : null }, c.cell(r))))));
    headers.forEach((h, i) => {
      if (i === sortIndex) h.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
      else h.removeAttribute('aria-sort');
      // The arrow is for the eye; aria-sort tells assistive technology (and keeps the name "cost").
      const mark = h.querySelector('.sort-mark');
      if (mark) mark.textContent = i === sortIndex ? (descending ? ' ▼' : ' ▲') : '';
    });
  };
  columns.forEach((c, i) => {
    const th = el('th', { scope: 'col', class: c.numeric ? 'num' : null });
    if (c.sort) {
      const onclick = () => {
        descending = sortIndex === i ? !descending : true;
        sortIndex = i;
        render();
      };
      th.append(el('button', { type: 'button', class: 'sort', onclick }, c.title, el('span', { class: 'sort-mark', 'aria-hidden': 'true' })));
    } else th.append(c.title);
    headers.push(th);
  });
  render();
  const t = el('table', { 'data-testid': opts.testId ?? null }, el('caption', {}, caption), el('thead', {}, el('tr', {}, ...headers)), tbody);
  return el('div', { class: 'table-wrap' }, t);
}

function compare(a: number | string, b: number | string): number {
  return typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b));
}

/** A labelled figure: `<dl>` of name → value pairs (totals, stats). */
export function facts(label: string, pairs: Array<[string, Child]>): HTMLElement {
  const dl = el('dl', { class: 'facts', 'aria-label': label });
  for (const [k, v] of pairs) dl.append(el('div', {}, el('dt', {}, k), el('dd', {}, v)));
  return dl;
}

/** Pretty JSON in a <pre>. */
export function json(value: unknown): HTMLElement {
  return el('pre', { class: 'json' }, JSON.stringify(value, null, 2));
}

/** A labelled select that reloads the page with another window. */
export function windowPicker(hours: number, go: (hours: number) => void): HTMLElement {
  const select = el('select', { id: 'window', onchange: (e: Event) => go(Number((e.target as HTMLSelectElement).value)) });
  for (const h of HOUR_CHOICES) select.append(el('option', { value: h, selected: h === hours }, h < 48 ? `last ${h} h` : `last ${h / 24} days`));
  return el('div', { class: 'window' }, el('label', { for: 'window' }, 'Window '), select);
}
