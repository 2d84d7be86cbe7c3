/**
 * The web app's entry: a router over the page URLs (each page can be opened directly and
 * shared), the header with navigation and the task search, and error display. Links marked
 * data-nav are followed without a reload; the server answers every page URL with the same
 * index.html, and the pages read only the read API.
 */
import { ApiError, forgetKey, storedKey } from './api.ts';
import { el } from './dom.ts';
import { taskListPage, searchForm } from './pages/task-list.ts';
import { taskPage } from './pages/task.ts';
import { toolPage } from './pages/tool.ts';
import { toolsPage } from './pages/tools.ts';
import { hintsPage } from './pages/hints.ts';
import { manifestsPage } from './pages/manifests.ts';
import { quarantinePage } from './pages/quarantine.ts';
import { searchPage, siteSearchForm } from './pages/search.ts';
import { violationsPage } from './pages/violations.ts';
import { wastePage } from './pages/waste.ts';
import { hoursOf } from './window.ts';

const main = document.getElementById('main') as HTMLElement;

/** Navigates to an app URL (pushState) and renders it. */
function go(href: string): void {
  history.pushState(null, '', href);
  void render();
}

async function render(): Promise<void> {
  const { pathname, search } = location;
  const q = new URLSearchParams(search);
  const hours = hoursOf(q);
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const [section, id] = parts;
  markNav(section ?? 'tasks');
  main.setAttribute('aria-busy', 'true');
  main.replaceChildren(el('p', { role: 'status', class: 'hint' }, 'Loading…'));
  try {
    if ((section === undefined || section === 'tasks') && id === undefined) await taskListPage(main, hours, go);
    else if (section === 'tasks' && id !== undefined) await taskPage(main, id, q.get('call'));
    else if (section === 'tools' && id === undefined) await toolsPage(main, hours, go);
    else if (section === 'tools' && id !== undefined) await toolPage(main, id, hours, go);
    else if (section === 'waste') await wastePage(main, hours, go);
    else if (section === 'search' && id === undefined) await searchPage(main, { q: q.get('q') ?? '', hours, tool: q.get('tool') ?? '', status: q.get('status') ?? '', task: q.get('task') ?? '', field: q.get('field') ?? '', cursor: q.get('cursor') ?? '' }, go);
    else if (section === 'quarantine' && id === undefined) await quarantinePage(main, { hours, reason: q.get('reason') ?? '', cursor: q.get('cursor') ?? '', id: q.get('id') ?? '' }, go);
    else if (section === 'manifests' && id === undefined) await manifestsPage(main, q.get('tool') ?? '');
    else if (section === 'hints' && id === undefined) await hintsPage(main, { hours, kind: q.get('kind') ?? '', cursor: q.get('cursor') ?? '' }, go);
    else if (section === 'violations' && id === undefined) await violationsPage(main, { hours, invariant: q.get('invariant') ?? '', task: q.get('task') ?? '', tool: q.get('tool') ?? '', cursor: q.get('cursor') ?? '' }, go);
    else main.replaceChildren(el('h1', {}, 'Not found'), el('p', {}, `No page at ${pathname}.`));
    document.title = `${main.querySelector('h1')?.textContent ?? 'tool-audit'} · tool-audit`;
  } catch (err) {
    const message = err instanceof ApiError || err instanceof Error ? err.message : String(err);
    main.replaceChildren(el('h1', {}, 'Could not load this page'), el('p', { role: 'alert', class: 'error' }, message));
  } finally {
    main.setAttribute('aria-busy', 'false');
    keyButton();
  }
}

function markNav(section: string): void {
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav.top a')) {
    if (a.dataset.section === section) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

/** "Forget key" appears once a key is in use. */
function keyButton(): void {
  const slot = document.getElementById('key-slot') as HTMLElement;
  slot.replaceChildren(
    storedKey()
      ? el('button', { type: 'button', class: 'linkish', onclick: () => { forgetKey(); location.reload(); } }, 'Forget API key')
      : '',
  );
}

document.addEventListener('click', (e) => {
  const a = (e.target as Element | null)?.closest?.('a[data-nav]') as HTMLAnchorElement | null;
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  go(a.getAttribute('href') ?? '/');
});
window.addEventListener('popstate', () => void render());
document.getElementById('search-slot')?.append(siteSearchForm(go), searchForm(go, 'header-search'));
void render();
