/**
 * A grafana-clickhouse-datasource target as a foundation-SDK builder (the SDK ships builders for
 * the core datasources only): `{ refId, datasource, rawSql, format, queryType, editorType: 'sql' }`.
 */
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import type * as common from '@grafana/grafana-foundation-sdk/common';

/** Plugin id of the official ClickHouse datasource. */
export const CLICKHOUSE_PLUGIN_ID = 'grafana-clickhouse-datasource';
/** uid given to the datasource by deploy/grafana/provisioning/datasources/clickhouse.yaml. */
export const CLICKHOUSE_DATASOURCE_UID = 'tool-audit-clickhouse';

/** The datasource reference every panel and target carries. */
export const CLICKHOUSE_DATASOURCE: common.DataSourceRef = { type: CLICKHOUSE_PLUGIN_ID, uid: CLICKHOUSE_DATASOURCE_UID };

/**
 * sqlutil.FormatQueryOption of the plugin's backend: 0 = time series (a long frame with string
 * columns becomes one series per label value), 1 = table.
 */
export enum QueryFormat {
  TimeSeries = 0,
  Table = 1,
}

/** The target as it is serialized into the dashboard. */
export interface ClickHouseQuery extends cog.Dataquery {
  refId: string;
  datasource: common.DataSourceRef;
  editorType: 'sql';
  queryType: 'table' | 'timeseries';
  format: QueryFormat;
  rawSql: string;
}

/** Builds one ClickHouse SQL target. */
export class ClickHouseQueryBuilder implements cog.Builder<cog.Dataquery> {
  protected readonly internal: ClickHouseQuery;

  constructor(rawSql = '') {
    this.internal = {
      _implementsDataqueryVariant: () => {},
      refId: 'A',
      datasource: CLICKHOUSE_DATASOURCE,
      editorType: 'sql',
      queryType: 'table',
      format: QueryFormat.Table,
      rawSql,
    };
  }

  build(): ClickHouseQuery {
    return this.internal;
  }

  refId(refId: string): this {
    this.internal.refId = refId;
    return this;
  }

  datasource(ref: common.DataSourceRef): this {
    this.internal.datasource = ref;
    return this;
  }

  rawSql(sql: string): this {
    this.internal.rawSql = sql;
    return this;
  }

  /** A time-series target: format 0 and query type `timeseries`. */
  timeSeries(): this {
    this.internal.format = QueryFormat.TimeSeries;
    this.internal.queryType = 'timeseries';
    return this;
  }

  /** A table target: format 1 and query type `table` (the default). */
  table(): this {
    this.internal.format = QueryFormat.Table;
    this.internal.queryType = 'table';
    return this;
  }
}
