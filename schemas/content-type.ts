/**
 * Does content look like what its content_type says (I7)? Deliberately tolerant of real-world
 * variety, strict about the obvious mismatches (a chart id with spaces, "json" that does not
 * parse, csv whose rows disagree on column count).
 */
import type { ContentType } from './tool-output.ts';

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:/@+=-]{0,255}$/;
const HTML_TAG_RE = /<\/?[a-zA-Z][^>]*>|<!doctype html/i;

/** Returns null when text fits contentType, else the reason it does not. */
export function contentTypeMismatch(contentType: ContentType, text: string): string | null {
  switch (contentType) {
    case 'json':
      try {
        JSON.parse(text);
        return null;
      } catch {
        return 'content_type is json but the content does not parse as JSON';
      }
    case 'image_id':
    case 'chart_id':
      return ID_RE.test(text) ? null : `content_type is ${contentType} but the content is not a single identifier token`;
    case 'html':
      return HTML_TAG_RE.test(text) ? null : 'content_type is html but the content has no HTML tag';
    case 'csv':
      return csvMismatch(text);
    case 'text':
    case 'code':
      return null;
  }
}

/** RFC 4180 check: balanced quotes, and every non-empty record has the header's field count. */
function csvMismatch(text: string): string | null {
  let fields = 1;
  let expected = -1;
  let inQuotes = false;
  let recordHasData = false;
  let row = 1;
  const endRecord = (): string | null => {
    if (recordHasData || fields > 1) {
      if (expected === -1) expected = fields;
      else if (fields !== expected) return `content_type is csv but row ${row} has ${fields} fields, the header ${expected}`;
    }
    fields = 1;
    recordHasData = false;
    row++;
    return null;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inQuotes) {
      if (c === '"') {
        if (text[i + 1] === '"') i++;
        else inQuotes = false;
      }
      continue;
    }
    if (c === '"') {
      inQuotes = true;
      recordHasData = true;
    } else if (c === ',') fields++;
    else if (c === '\n') {
      const err = endRecord();
      if (err) return err;
    } else if (c !== '\r') recordHasData = true;
  }
  if (inQuotes) return 'content_type is csv but a quoted field is not closed';
  const err = endRecord();
  if (err) return err;
  return expected === -1 ? 'content_type is csv but the content has no rows' : null;
}
