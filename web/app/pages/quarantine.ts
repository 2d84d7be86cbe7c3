/**
 * /quarantine: the packets ingest refused (GET /v1/quarantine), newest first, by reason, with the
 * count of each; `?id=` opens one (GET /v1/quarantine/{id}): its exact bytes, where it came from,
 * its replays, and a replay of it as it is or corrected (POST /v1/quarantine/replay: a key with
 * the ingest scope; a read-only key is told so, nothing else happens).
 */
import type { QuarantineList, QuarantineRecord, QuarantineShow } from '../../../queries/quarantine-schemas.ts';
import { ApiError, getJson, postJson } from '../api.ts';
import { el, facts, link, olderLink, table, windowPicker } from '../dom.ts';
import { formatCount, formatTime } from '../format.ts';
import { lastHours } from '../window.ts';
import { quarantineHref, sourceText } from '../finding-model.ts';



interface ReplayAnswer {
  accepted: number;
  duplicates: number;
  rejected: number;
  results: Array<{ status: string; reason?: { code: string; message: string } }>;
}

/** What the last replay answered, shown above the form once the packet is read again. */
interface Note {
  text: string;
  error: boolean;
}

/** The replay form of one packet: as stored, or the text in the box; `done` shows the packet again with the answer. */
function replayForm(r: QuarantineRecord, note: Note | undefined, done: (note: Note) => Promise<void>): HTMLElement {
  const box = el('textarea', { id: 'corrected', rows: 10, spellcheck: false }, r.raw_encoding === 'utf8' ? r.raw : '');
  const answer = el('p', { role: 'status', 'aria-live': 'polite', class: note?.error ? 'error' : null }, note?.text ?? '');
  const replay = async (corrected: boolean) => {
    answer.textContent = 'Replaying…';
    try {
      const a = await postJson<ReplayAnswer>('/v1/quarantine/replay', { ids: [r.quarantine_id], ...(corrected ? { packets: [box.value] } : {}) });
      const one = a.results[0];
      const rejected = one?.status === 'rejected';
      // Read again: its replays now list this one.
      await done({ text: rejected ? `Still rejected: ${one.reason?.code ?? ''} ${one.reason?.message ?? ''}` : `Replayed: ${one?.status ?? 'no answer'}.`, error: rejected });
    } catch (err) {
      const status = err instanceof ApiError ? err.status : 0;
      answer.textContent = status === 401 || status === 403 ? 'This key cannot replay: a replay needs a key with the ingest scope.' : (err as Error).message;
      answer.className = 'error';
    }
  };
  return el(
    'section',
    { 'aria-label': 'Replay' },
    el('h2', {}, 'Replay'),
    el('p', { class: 'hint' }, 'What lands is stored once; what still fails is answered, not quarantined again. Every replay is recorded with the key that asked.'),
    el('button', { type: 'button', onclick: () => void replay(false) }, 'Replay as it is'),
    el('label', { for: 'corrected' }, 'The producer’s corrected packet'),
    box,
    el('button', { type: 'button', onclick: () => void replay(true) }, 'Replay corrected'),
    answer,
  );
}

/** One packet: its bytes, where it came from, its replays, and the replay form. */
async function recordView(root: HTMLElement, id: string, note?: Note): Promise<void> {
  const { record: r } = await getJson<QuarantineShow>(`/v1/quarantine/${encodeURIComponent(id)}`);
  root.replaceChildren(
    el('p', {}, link('/quarantine', '← Quarantine')),
    el('h1', {}, `Quarantined ${r.packet_type ?? 'packet'}`),
    facts('Quarantined packet', [
      ['reason', `${r.reason.code}: ${r.reason.message}`],
      ['received (UTC)', formatTime(r.received_at)],
      ['from', sourceText(r)],
      ['ids', r.ids.join(', ') || '–'],
      ['bytes', r.raw_encoding === 'utf8' ? 'UTF-8 text' : r.raw_encoding === 'base64' ? 'not UTF-8 (base64 below)' : 'none (a record without a value)'],
    ]),
    el('pre', { class: 'raw', 'data-testid': 'raw', 'aria-label': 'The packet as received' }, r.raw),
    r.replays.length
      ? table<QuarantineRecord['replays'][number]>(
          'Replays of this packet, oldest first',
          [
            { title: 'when (UTC)', cell: (x) => formatTime(x.replayed_at) },
            { title: 'by', cell: (x) => x.key_id },
            { title: 'what', cell: (x) => (x.corrected ? 'corrected' : 'as stored') },
            { title: 'outcome', cell: (x) => (x.reason ? `${x.outcome}: ${x.reason.code}` : x.outcome) },
          ],
          r.replays,
          { testId: 'replay-table' },
        )
      : el('p', { class: 'hint' }, 'Never replayed.'),
    replayForm(r, note, (n) => recordView(root, id, n)),
  );
}

/** Renders the quarantine list, or one packet with `id`. */
export async function quarantinePage(root: HTMLElement, f: { hours: number; reason: string; cursor: string; id: string }, go: (href: string) => void): Promise<void> {
  if (f.id) return recordView(root, f.id);
  const list = await getJson<QuarantineList>('/v1/quarantine', { ...lastHours(f.hours), limit: 100, reason: f.reason || undefined, cursor: f.cursor || undefined });
  const counts = Object.entries(list.counts).sort(([, a], [, b]) => b - a);
  const reason = el(
    'select',
    { id: 'reason', onchange: (e: Event) => go(quarantineHref({ hours: f.hours, reason: (e.target as HTMLSelectElement).value })) },
    el('option', { value: '' }, 'every reason'),
    ...counts.map(([k, n]) => el('option', { value: k, selected: k === f.reason }, `${k} (${formatCount(n)})`)),
  );
  root.replaceChildren(
    el('h1', {}, 'Quarantine'),
    windowPicker(f.hours, (h) => go(quarantineHref({ hours: h, reason: f.reason }))),
    el('div', { class: 'filters' }, el('label', { for: 'reason' }, 'Reason '), reason),
    facts('Quarantined packets per reason', counts.map(([k, n]) => [k, link(quarantineHref({ hours: f.hours, reason: k }), formatCount(n))])),
    list.records.length
      ? table<QuarantineRecord>(
          'Quarantined packets in the window, newest first; open one for its bytes and to replay it',
          [
            { title: 'received (UTC)', cell: (r) => link(quarantineHref({ id: r.quarantine_id }), formatTime(r.received_at)), sort: (r) => r.received_at },
            { title: 'reason', cell: (r) => r.reason.code, sort: (r) => r.reason.code },
            { title: 'why', cell: (r) => r.reason.message },
            { title: 'packet', cell: (r) => r.packet_type ?? '–', sort: (r) => r.packet_type ?? '' },
            { title: 'from', cell: sourceText },
            { title: 'replays', cell: (r) => (r.replays.length ? `${r.replays.length} (last ${r.replays[r.replays.length - 1]?.outcome})` : '–'), sort: (r) => r.replays.length, numeric: true },
          ],
          list.records,
          { testId: 'quarantine-table' },
        )
      : el('p', { role: 'status' }, 'Nothing quarantined in this window.'),
    olderLink(list.next_cursor && quarantineHref({ ...f, cursor: list.next_cursor }), 'Older packets →'),
  );
}
