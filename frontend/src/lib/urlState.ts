/**
 * Codecs between view state and the query string. The URL owns view state so every view is a
 * permalink; defaults are omitted from the URL to keep links short and stable.
 */
export interface Codec<T> {
  parse(raw: string | null): T;
  serialize(value: T): string | null;
}

export function listCodec(): Codec<string[]> {
  return {
    // Only ',' (the separator) and '%' are escaped: URLSearchParams encodes the rest itself.
    parse: (raw) =>
      raw
        ? raw
            .split(',')
            .filter((s) => s.length > 0)
            .map((s) => s.replace(/%2C/gi, ',').replace(/%25/g, '%'))
        : [],
    serialize: (value) =>
      value.length ? value.map((v) => v.replace(/%/g, '%25').replace(/,/g, '%2C')).join(',') : null,
  };
}

export function enumCodec<T extends string>(allowed: readonly T[], fallback: T): Codec<T> {
  return {
    parse: (raw) => (raw !== null && (allowed as readonly string[]).includes(raw) ? (raw as T) : fallback),
    serialize: (value) => (value === fallback ? null : value),
  };
}

export function stringCodec(fallback = ''): Codec<string> {
  return {
    parse: (raw) => raw ?? fallback,
    serialize: (value) => (value === fallback ? null : value),
  };
}

export type Range = readonly [number, number];

export function rangeCodec(): Codec<Range | null> {
  return {
    parse: (raw) => {
      if (!raw) return null;
      const parts = raw.split(',').map(Number);
      if (parts.length !== 2 || parts.some((n) => !Number.isFinite(n)) || parts[0] >= parts[1]) return null;
      return [parts[0], parts[1]];
    },
    serialize: (value) => (value ? `${+value[0].toFixed(3)},${+value[1].toFixed(3)}` : null),
  };
}

export type Schema<S> = { [K in keyof S]: Codec<S[K]> };

export function readState<S>(params: URLSearchParams, schema: Schema<S>): S {
  const out = {} as S;
  for (const key of Object.keys(schema) as (keyof S & string)[]) {
    out[key] = schema[key].parse(params.get(key));
  }
  return out;
}

/** A new query string with `patch` applied; parameters outside the schema are kept. */
export function writeState<S>(params: URLSearchParams, schema: Schema<S>, patch: Partial<S>): URLSearchParams {
  const next = new URLSearchParams(params);
  for (const key of Object.keys(patch) as (keyof S & string)[]) {
    const serialized = schema[key].serialize(patch[key] as S[typeof key]);
    if (serialized === null) next.delete(key);
    else next.set(key, serialized);
  }
  return next;
}
