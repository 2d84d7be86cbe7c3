/**
 * The read API as data: each route's path, input and output schemas and how it calls its query,
 * one file per kind of question under read-routes/. Registration (routes/read.ts), the OpenAPI
 * document (openapi.ts) and the HTTP client (read-client.ts) all read this table, so the
 * documentation cannot drift from what is served.
 */
import { ACTIVITY_ROUTES } from './read-routes/activity.ts';
import { AUDIT_LOG_ROUTES } from './read-routes/audit-log.ts';
import { FINDINGS_ROUTES } from './read-routes/findings.ts';
import { RECORDS_ROUTES } from './read-routes/records.ts';
import type { ReadRoute } from './read-routes/route.ts';

export type { ReadRoute, RequestQuery } from './read-routes/route.ts';
export { quarantineFilter } from './read-routes/records.ts';

/** Every read route. */
export const READ_ROUTES: ReadRoute[] = [...ACTIVITY_ROUTES, ...FINDINGS_ROUTES, ...RECORDS_ROUTES, ...AUDIT_LOG_ROUTES];
