/**
 * Escaping of a login name before it goes into an LDAP filter or DN (docs/AUTH.md, LDAP). Without
 * it a name such as `*)(uid=*` would change the filter instead of being matched literally.
 */

/** RFC 4515 section 3: `\`, `*`, `(`, `)` and NUL become `\5c`, `\2a`, `\28`, `\29`, `\00`. */
export function escapeFilterValue(value: string): string {
  return value.replace(/[\\*()\0]/g, (ch) => `\\${ch.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/**
 * RFC 4514 section 2.4: an attribute value inside a DN. `"+,;<>\` and NUL are escaped everywhere,
 * `#` and a space at the start, a space at the end; `=` is escaped too (allowed, and it keeps the
 * value from reading as another RDN to a lenient parser).
 */
export function escapeDnValue(value: string): string {
  let out = value.replace(/[\\",+;<>=\0]/g, (ch) => (ch === "\0" ? "\\00" : `\\${ch}`));
  if (out.startsWith(" ") || out.startsWith("#")) out = `\\${out}`;
  if (out.endsWith(" ") && !out.endsWith("\\ ")) out = `${out.slice(0, -1)}\\ `;
  return out;
}

/** `template` with every `%s` replaced by `value` (already escaped for where it goes). */
export const fillTemplate = (template: string, value: string): string => template.split("%s").join(value);
