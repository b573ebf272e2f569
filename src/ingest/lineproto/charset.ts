/**
 * Character classes and escapes of the line protocol, byte for byte as the reference decoder
 * (influxdata/line-protocol v2.1.0) defines them; see parse.ts for the rules in words.
 */

// Character classes of the reference decoder, for code units below 128. Everything from 128 up
// (all bytes of multi-byte UTF-8 sequences there) belongs to every class.
export const MEASUREMENT = 1;
export const KEY = 2; // tag keys and field keys
export const TAG_VALUE = 4;
export const FIELD_VALUE = 8; // unquoted field values
export const COMMENT = 16;
export const CLASS = new Uint8Array(128);
// Escapable characters per token kind (a backslash before anything else stays literal).
export const ESC_MEASUREMENT = 1;
export const ESC_KEY = 2; // tag keys, tag values, field keys
export const ESCAPE = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const control = c < 32 || c === 127;
  const lineBreakOrSpace = c === 32 || c === 10 || c === 13;
  let cls = 0;
  if (!control && c !== 44 && c !== 32) cls |= MEASUREMENT;
  if (!control && c !== 44 && c !== 61 && c !== 32) cls |= KEY;
  if (c !== 44 && c !== 61 && !lineBreakOrSpace) cls |= TAG_VALUE;
  if (c !== 44 && !lineBreakOrSpace) cls |= FIELD_VALUE;
  if (!control) cls |= COMMENT;
  CLASS[c] = cls;
}
ESCAPE[32] = ESC_MEASUREMENT | ESC_KEY;
ESCAPE[44] = ESC_MEASUREMENT | ESC_KEY;
ESCAPE[61] = ESC_KEY;

export const SPACE = 32;
export const LF = 10;
export const CR = 13;
export const COMMA = 44;
export const EQUALS = 61;
export const QUOTE = 34;
export const BACKSLASH = 92;

export const isSeparator = (c: number) => c === SPACE || c === LF || c === CR;
/** A character or token for an error message. */
export const show = (s: string | undefined) => (s === undefined ? "end of input" : JSON.stringify(s));
