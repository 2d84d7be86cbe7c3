/**
 * The field numbers of the OTLP trace request that span-reader.ts reads, looked up by name in
 * the vendored opentelemetry-proto definitions: a renamed or renumbered field fails at start-up,
 * not as silently misread spans.
 */
import type protobuf from 'protobufjs';

/** The types of the request, as the vendored definitions declare them. */
export interface TraceTypes {
  request: protobuf.Type;
  span: protobuf.Type;
}

/** The field numbers this reader uses, looked up by name in the definitions. */
export function fieldNumbers(types: TraceTypes) {
  const ns = types.request.root;
  const id = (type: string, field: string): number => {
    const f = ns.lookupType(type).fields[field];
    if (!f) throw new Error(`opentelemetry-proto: ${type} has no field ${field}`);
    return f.id;
  };
  const P = 'opentelemetry.proto.';
  return {
    resourceSpans: id(`${P}collector.trace.v1.ExportTraceServiceRequest`, 'resourceSpans'),
    rsResource: id(`${P}trace.v1.ResourceSpans`, 'resource'),
    rsScopeSpans: id(`${P}trace.v1.ResourceSpans`, 'scopeSpans'),
    resourceAttributes: id(`${P}resource.v1.Resource`, 'attributes'),
    ssScope: id(`${P}trace.v1.ScopeSpans`, 'scope'),
    ssSpans: id(`${P}trace.v1.ScopeSpans`, 'spans'),
    scopeName: id(`${P}common.v1.InstrumentationScope`, 'name'),
    scopeVersion: id(`${P}common.v1.InstrumentationScope`, 'version'),
    traceId: id(`${P}trace.v1.Span`, 'traceId'),
    spanId: id(`${P}trace.v1.Span`, 'spanId'),
    parentSpanId: id(`${P}trace.v1.Span`, 'parentSpanId'),
    name: id(`${P}trace.v1.Span`, 'name'),
    kind: id(`${P}trace.v1.Span`, 'kind'),
    start: id(`${P}trace.v1.Span`, 'startTimeUnixNano'),
    end: id(`${P}trace.v1.Span`, 'endTimeUnixNano'),
    attributes: id(`${P}trace.v1.Span`, 'attributes'),
    events: id(`${P}trace.v1.Span`, 'events'),
    status: id(`${P}trace.v1.Span`, 'status'),
    eventName: id(`${P}trace.v1.Span.Event`, 'name'),
    eventAttributes: id(`${P}trace.v1.Span.Event`, 'attributes'),
    statusMessage: id(`${P}trace.v1.Status`, 'message'),
    statusCode: id(`${P}trace.v1.Status`, 'code'),
    kvKey: id(`${P}common.v1.KeyValue`, 'key'),
    kvValue: id(`${P}common.v1.KeyValue`, 'value'),
    string: id(`${P}common.v1.AnyValue`, 'stringValue'),
    bool: id(`${P}common.v1.AnyValue`, 'boolValue'),
    int: id(`${P}common.v1.AnyValue`, 'intValue'),
    double: id(`${P}common.v1.AnyValue`, 'doubleValue'),
    array: id(`${P}common.v1.AnyValue`, 'arrayValue'),
    kvlist: id(`${P}common.v1.AnyValue`, 'kvlistValue'),
    bytes: id(`${P}common.v1.AnyValue`, 'bytesValue'),
    arrayValues: id(`${P}common.v1.ArrayValue`, 'values'),
    kvlistValues: id(`${P}common.v1.KeyValueList`, 'values'),
  };
}
/** Field numbers by the names span-reader.ts uses. */
export type Fields = ReturnType<typeof fieldNumbers>;
