/**
 * The option kit of the configuration: one option (its flag, environment variable, default, parser
 * and help line) and one engine section (a `type` and the options of each type, Frigate-style).
 * The modules that own options declare them with it (an analyzer its flags and engine, the answer
 * generator its engine); config.ts composes them into the one typed configuration.
 */
export class ConfigError extends Error {}

// --- Options: a flag, its environment variable, a default, a parser and a help line ---

/** One option. `id` (the flag, or the variable for options without one) names it wherever it is set. */
export interface Option<T> {
  /** null: no flag (API keys of the model servers: a flag would show in `ps`). */
  readonly flag: string | null;
  readonly env: string;
  readonly default: T;
  readonly help: string;
  readonly arg: 'switch' | 'N' | 'VALUE';
  /** Kept out of JSON and inspection (a non-enumerable property), handed to workers by environment. */
  readonly secret?: boolean;
  /** Set for an engine type that does not take it, it is refused (not ignored). */
  readonly strict?: boolean;
  /** Why an engine type needs it: left empty, loading fails with this explanation. */
  readonly need?: string;
  /** Config-file keys of earlier releases that still name it. */
  readonly aliases?: readonly string[];
  parse(raw: unknown, from: string): T;
}

export type ValueOf<O> = O extends Option<infer T> ? T : never;
export type Values<F> = { readonly [K in keyof F]: ValueOf<F[K]> };
export type Simplify<T> = { [K in keyof T]: T[K] } & {};

export const envOf = (flag: string) => `VIDQ_${flag.toUpperCase().replace(/-/g, '_')}`;
export const idOf = (o: Option<unknown>) => o.flag ?? o.env;
export const nameOf = (o: Option<unknown>) => (o.flag ? `--${o.flag}` : o.env);

export function option<T>(
  flag: string,
  def: T,
  help: string,
  arg: Option<T>['arg'],
  parse: Option<T>['parse'],
): Option<T> {
  return { flag, env: envOf(flag), default: def, help, arg, parse };
}

/** A non-empty string; `check` returns what is wrong with it, if anything. */
export function text(
  flag: string,
  def: string,
  help: string,
  check?: (v: string) => string | undefined,
): Option<string> {
  return option(flag, def, help, 'VALUE', (raw, from) => {
    if (typeof raw !== 'string' || raw === '') throw new ConfigError(`${from} must be a non-empty string`);
    const wrong = check?.(raw);
    if (wrong) throw new ConfigError(`${from} ${wrong}`);
    return raw;
  });
}

export function int(
  flag: string,
  def: number,
  help: string,
  range: { min?: number; max?: number } = {},
): Option<number> {
  return option(flag, def, help, 'N', (raw, from) => {
    const n = typeof raw === 'number' ? raw : Number(String(raw).trim());
    if (!Number.isSafeInteger(n) || n < 0)
      throw new ConfigError(`${from} must be a whole number ≥ 0, got ${JSON.stringify(raw)}`);
    const { min = 0, max } = range;
    if (n < min) throw new ConfigError(`${from} must be at least ${min}`);
    if (max !== undefined && n > max) throw new ConfigError(`${from} must be at most ${max}`);
    return n;
  });
}

export function bool(flag: string, def: boolean, help: string): Option<boolean> {
  return option(flag, def, help, 'switch', (raw, from) => {
    if (typeof raw === 'boolean') return raw;
    const s = String(raw).toLowerCase();
    if (['1', 'true', 'yes', 'on', ''].includes(s)) return true;
    if (['0', 'false', 'no', 'off'].includes(s)) return false;
    throw new ConfigError(`${from} must be true or false, got ${JSON.stringify(raw)}`);
  });
}

export function oneOf<const V extends string>(flag: string, values: readonly V[], def: V, help: string): Option<V> {
  return option(flag, def, help, 'VALUE', (raw, from) => {
    if (!values.includes(raw as V))
      throw new ConfigError(`${from} must be ${values.join(', ')}; got ${JSON.stringify(raw)}`);
    return raw as V;
  });
}

/** A server's base URL: http(s), without credentials (the key has its own option). */
export function serverUrl(flag: string, help: string, keyEnv: string): Option<string> {
  return text(flag, '', help, (v) => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      return `must be the server's base URL (e.g. http://127.0.0.1:11434); got ${JSON.stringify(v)}`;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'must be an http or https URL';
    if (u.username || u.password) return `must not carry credentials; set ${keyEnv} instead`;
  });
}

/** A URL with its password replaced by ***, for messages and logs. */
export function redactUrl(v: string): string {
  return v.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*:)[^@/?#]*@/i, '$1***@');
}

/** A bearer key: never serialised or logged. `flag` null = environment (or config file) only. */
export function apiKey(flag: string | null, env: string, help: string): Option<string> {
  return { flag, env, default: '', help, arg: 'VALUE', secret: true, parse: text('key', '', help).parse };
}

export const needs = <T>(o: Option<T>, why: string): Option<T> => ({ ...o, need: why });
export const strict = <T>(o: Option<T>): Option<T> => ({ ...o, strict: true });
export const alias = <T>(o: Option<T>, ...aliases: string[]): Option<T> => ({ ...o, aliases });

// --- Engines: one section each, told apart by `type`; each type lists the options it takes ---

export type EngineTypes = Record<string, Record<string, Option<unknown>>>;
export interface Engine<Types extends EngineTypes> {
  /** The option that picks the type (`--generator openai`). */
  readonly type: Option<keyof Types & string>;
  readonly types: Types;
}

export function engine<const Types extends EngineTypes>(
  flag: string,
  def: keyof Types & string,
  help: string,
  types: Types,
  aliases: string[] = [],
): Engine<Types> {
  const names = Object.keys(types) as (keyof Types & string)[];
  return { type: alias(oneOf(flag, names, def, help), ...aliases), types };
}

/** An engine's section: `{type}` plus the options of that type, as a discriminated union. */
export type EngineConfig<E> =
  E extends Engine<infer Types>
    ? { [T in keyof Types]: Simplify<{ readonly type: T } & Values<Types[T]>> }[keyof Types]
    : never;

/** An options section: named options (an analyzer's flat flags, an engine type's fields). */
export type OptionSection = Record<string, Option<unknown>>;

export const GiB = 1024 ** 3;
export const MiB = 1024 ** 2;
