/**
 * JSON values as block-style YAML, for showing stored plans the way they are usually written.
 * Strings are quoted whenever plain YAML would read them as something else (numbers, booleans,
 * null, or text with YAML syntax), so the output parses back to the same value.
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// Plain (unquoted) in block context: no leading indicator, no ': ' or ' #', no trailing ':' or space.
const PLAIN = /^[A-Za-z_/.][A-Za-z0-9_ ./()+:@=-]*$/;
const RESERVED = /^(true|false|yes|no|on|off|null|y|n|~|\.inf|\.nan|\.[0-9][0-9_]*([eE][-+]?[0-9]+)?)$/i;

function scalar(value: null | boolean | number | string): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : value > 0 ? '.inf' : value < 0 ? '-.inf' : '.nan';
  if (value !== '' && PLAIN.test(value) && !RESERVED.test(value) && !/[\s:]$/.test(value) && !/: |\s#/.test(value)) {
    return value;
  }
  return JSON.stringify(value);
}

function key(k: string): string {
  return PLAIN.test(k) && !RESERVED.test(k) && !/[\s:]$/.test(k) && !/: /.test(k) ? k : JSON.stringify(k);
}

function isEmptyContainer(v: Json): boolean {
  return (Array.isArray(v) && v.length === 0) || (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);
}

function emit(value: Json, indent: string): string[] {
  if (Array.isArray(value)) {
    return value.flatMap((item) => {
      if (item !== null && typeof item === 'object' && !isEmptyContainer(item)) {
        const [first, ...rest] = emit(item, `${indent}  `);
        return [`${indent}- ${first.trimStart()}`, ...rest];
      }
      return [`${indent}- ${inline(item)}`];
    });
  }
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => {
      if (v !== null && typeof v === 'object' && !isEmptyContainer(v)) {
        return [`${indent}${key(k)}:`, ...emit(v, `${indent}  `)];
      }
      return [`${indent}${key(k)}: ${inline(v)}`];
    });
  }
  return [`${indent}${scalar(value)}`];
}

function inline(v: Json): string {
  if (Array.isArray(v)) return '[]';
  if (v !== null && typeof v === 'object') return '{}';
  return scalar(v);
}

export function toYaml(value: unknown): string {
  return emit(value as Json, '').join('\n') + '\n';
}
