/**
 * /manifests: the tool manifest in force (GET /v1/manifests: each tool's promises — idempotent,
 * timeout, retries, approval, cache TTL, capability tags — and who applied it), one tool's version
 * history with what changed between consecutive versions (`?tool=`, GET
 * /v1/manifests/{tool_id}/history), and the MCP servers the gateway reported with their tools and
 * definition changes (GET /v1/mcp/servers).
 */
import type { ManifestAnswer, ManifestHistoryAnswer, McpServers } from '../../../schemas/answers.ts';
import { getJson } from '../api.ts';
import { el, facts, link, table, toolHref } from '../dom.ts';
import { formatCount, formatMs, formatTime, short } from '../format.ts';
import { entryDiff, promises, violationsHref } from '../finding-model.ts';

type Entry = ManifestAnswer['tools'][string];

function historySection(h: ManifestHistoryAnswer): HTMLElement {
  // Newest first: each version against the one below it (the first declaring it against nothing).
  const rows = h.versions.map((v, i) => ({ v, changes: entryDiff(h.versions[i + 1]?.entry ?? null, v.entry) }));
  return el(
    'section',
    { 'aria-label': `Versions of ${h.tool_id}` },
    el('h2', {}, `Versions of ${h.tool_id}`),
    table<(typeof rows)[number]>(
      `${h.versions.length} versions since the first that declares ${h.tool_id}, newest first, each with what changed from the one before`,
      [
        { title: 'version', cell: (r) => r.v.version, numeric: true },
        { title: 'in force from (UTC)', cell: (r) => formatTime(r.v.effective_at) },
        { title: 'applied by', cell: (r) => r.v.applied_by || '–' },
        {
          title: 'changes',
          cell: (r) =>
            r.changes.length
              ? el('ul', { class: 'changes' }, ...r.changes.map((c) => el('li', {}, el('code', {}, c.field), ': ', el('del', {}, c.before), ' → ', el('ins', {}, c.after))))
              : 'no change',
        },
      ],
      rows,
      { testId: 'version-table' },
    ),
  );
}

function serversSection(s: McpServers): HTMLElement {
  return el(
    'section',
    { 'aria-label': 'MCP servers' },
    el('h2', {}, 'MCP servers'),
    s.servers.length
      ? el(
          'div',
          {},
          ...s.servers.map((srv) =>
            table<McpServers['servers'][number]['tools'][number]>(
              `${srv.server}: ${srv.tools.length} tools, ${formatCount(srv.definition_changes)} definition changes, last report ${formatTime(srv.last_seen)}`,
              [
                { title: 'tool', cell: (t) => link(toolHref(t.tool_id), t.tool_id), sort: (t) => t.tool_id },
                { title: 'definitions seen', cell: (t) => t.versions, sort: (t) => t.versions, numeric: true },
                { title: 'last changed (UTC)', cell: (t) => formatTime(t.last_changed), sort: (t) => t.last_changed },
                { title: 'definition', cell: (t) => el('code', { title: t.definition_hash }, short(t.definition_hash, 12)) },
                { title: 'state', cell: (t) => (t.removed ? 'removed' : 'listed') },
              ],
              srv.tools,
              { testId: `mcp-${srv.server}` },
            ),
          ),
          el('p', {}, link(violationsHref({ hours: 720, invariant: 'MCP' }), 'Definition changes found (last 30 days) →')),
        )
      : el('p', { role: 'status' }, 'No MCP server reported by `tool-audit mcp` yet.'),
    s.truncated ? el('p', { class: 'hint' }, 'More (server, tool) pairs than shown.') : '',
  );
}

/** Renders the manifests page; `tool`: the tool whose version history is shown. */
export async function manifestsPage(root: HTMLElement, tool: string): Promise<void> {
  const [current, servers, history] = await Promise.all([
    getJson<ManifestAnswer>('/v1/manifests'),
    getJson<McpServers>('/v1/mcp/servers'),
    tool ? getJson<ManifestHistoryAnswer>(`/v1/manifests/${encodeURIComponent(tool)}/history`) : Promise.resolve(undefined),
  ]);
  const entries = Object.values(current.tools);
  root.replaceChildren(
    el('h1', {}, 'Manifests'),
    current.version === null
      ? el('p', { role: 'status' }, 'No manifest applied yet (PUT /v1/manifests, or `tool-audit manifests apply FILE`).')
      : el(
          'div',
          {},
          facts('Manifest in force', [
            ['version', String(current.version)],
            ['in force from (UTC)', current.effective_at ? formatTime(current.effective_at) : '–'],
            ['applied by', current.applied_by || '–'],
            ['tools', formatCount(entries.length)],
          ]),
          current.warnings.length ? el('ul', { class: 'warnings', 'aria-label': 'Warnings of this version' }, ...current.warnings.map((w) => el('li', {}, w))) : '',
          table<Entry>(
            `The ${entries.length} tools of version ${current.version}; a tool's name opens its version history`,
            [
              { title: 'tool', cell: (e) => link(`/manifests?tool=${encodeURIComponent(e.tool_id)}`, e.tool_id), sort: (e) => e.tool_id },
              { title: 'promises', cell: promises },
              { title: 'timeout', cell: (e) => (e.timeout_ms === null ? '–' : formatMs(e.timeout_ms)), sort: (e) => e.timeout_ms ?? -1, numeric: true },
              { title: 'max retries', cell: (e) => e.max_retries ?? '–', sort: (e) => e.max_retries ?? -1, numeric: true },
              { title: 'cache TTL', cell: (e) => (e.cache_ttl_ms ? formatMs(e.cache_ttl_ms) : '–'), sort: (e) => e.cache_ttl_ms ?? 0, numeric: true },
              { title: 'MCP server', cell: (e) => e.mcp?.server ?? '–', sort: (e) => e.mcp?.server ?? '' },
            ],
            entries,
            { testId: 'manifest-table', initialSort: 0, descending: false },
          ),
        ),
    history ? historySection(history) : '',
    serversSection(servers),
  );
}
