/**
 * Route schemas (TypeBox, as Elysia's `t` builds them) → JSON Schema 2020-12 for OpenAPI 3.1.
 * A schema marked with `named('Index', …)` becomes a component, referenced by `$ref` wherever it
 * is used, so generated clients get a type per resource. Elysia's coercing types (`t.Integer`,
 * `t.Numeric`) are unions with a string branch for query strings; the document shows the type the
 * JSON carries, so `error`/`count` are integers in generated clients, not `string | number`.
 */

const SCHEMA_NAME = Symbol.for('vidq.openapi.name');

/** Marks a schema as the named component `name` of the OpenAPI document. Returns the same schema. */
export function named<T extends object>(name: string, schema: T): T {
  Object.defineProperty(schema, SCHEMA_NAME, { value: name, enumerable: true });
  return schema;
}

export function nameOf(schema: unknown): string | undefined {
  return schema !== null && typeof schema === 'object'
    ? ((schema as Record<symbol, unknown>)[SCHEMA_NAME] as string | undefined)
    : undefined;
}

export type JsonSchema = Record<string, unknown>;

/** Collects the named components met while converting. */
export class SchemaConverter {
  readonly components = new Map<string, JsonSchema>();
  private readonly sources = new Map<string, unknown>();

  /** The JSON Schema of `schema`; named sub-schemas (and `schema` itself, when named) become `$ref`s. */
  convert(schema: unknown): JsonSchema {
    return this.walk(schema, false) as JsonSchema;
  }

  /** As `convert`, but a named schema is expanded at the top (for parameters and their properties). */
  inline(schema: unknown): JsonSchema {
    return this.walk(schema, true) as JsonSchema;
  }

  private ref(name: string, schema: unknown): JsonSchema {
    const seen = this.sources.get(name);
    // The same schema may come as the route's own and as @elysiajs/openapi's rewritten copy: the
    // same once converted (nullable unions and enums folded alike). Elysia marks a response object
    // `additionalProperties: false` when it compiles it, on the copy it compiled: not a difference.
    if (
      seen !== undefined &&
      seen !== schema &&
      sameShape(this.walk(seen, true)) !== sameShape(this.walk(schema, true))
    ) {
      throw new Error(`OpenAPI: two different schemas are named "${name}"`);
    }
    if (seen === undefined) {
      this.sources.set(name, schema);
      this.components.set(name, {}); // placeholder first: a schema may refer to itself
      this.components.set(name, this.walk(schema, true) as JsonSchema);
    }
    return { $ref: `#/components/schemas/${name}` };
  }

  private walk(node: unknown, expand: boolean): unknown {
    if (Array.isArray(node)) return node.map((n) => this.walk(n, false));
    if (node === null || typeof node !== 'object') return node;
    const name = nameOf(node);
    if (name && !expand) return this.ref(name, node);
    let s = folded(node as Record<string, unknown>);
    // OpenAPI 3.0's `nullable` (t.Nullable writes it) is not 3.1, where `type: [T, "null"]` says it.
    if (s.nullable === true && typeof s.type === 'string') s = { ...s, type: [s.type, 'null'] };
    const coerced = coercedType(s);
    if (coerced)
      return this.walk({ ...coerced, ...pick(s, ['description', 'title', 'examples', 'deprecated']) }, false);
    const out: JsonSchema = {};
    for (const [k, v] of Object.entries(s)) {
      if (v === undefined || k === 'nullable') continue;
      // Values of these keywords are data (or maps of names to schemas), not schemas themselves.
      if (k === 'properties' || k === 'patternProperties' || k === '$defs') {
        out[k] = Object.fromEntries(Object.entries(v as object).map(([pk, pv]) => [pk, this.walk(pv, false)]));
      } else if (
        k === 'default' ||
        k === 'examples' ||
        k === 'const' ||
        k === 'enum' ||
        k === 'example' ||
        k === 'required'
      ) {
        out[k] = v;
      } else {
        out[k] = this.walk(v, false);
      }
    }
    return out;
  }
}

/**
 * Elysia's t.Integer / t.Numeric / t.BooleanString: `anyOf` of the JSON type and a string that
 * parses as it (`{type: string, format: integer|numeric|boolean}`): the JSON type. t.Date: a string.
 */
function coercedType(s: Record<string, unknown>): Record<string, unknown> | undefined {
  const branches = s.anyOf;
  if (!Array.isArray(branches)) return undefined;
  // t.Date: a Date object in code, an ISO 8601 string in JSON.
  if (branches.some((b) => b?.type === 'Date')) return { type: 'string', format: 'date-time' };
  if (branches.length !== 2) return undefined;
  const str = branches.find((b) => b?.type === 'string' && ['integer', 'numeric', 'boolean'].includes(b.format));
  const typed = branches.find((b) => ['integer', 'number', 'boolean'].includes(b?.type));
  return str && typed ? (typed as Record<string, unknown>) : undefined;
}

function pick(s: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => s[k] !== undefined).map((k) => [k, s[k]]));
}

/**
 * The forms @elysiajs/openapi gives these (OpenAPI 3.1), so a schema converts the same from the
 * route and from the plugin: `anyOf [T, null]` → `type: [T, "null"]`; `anyOf` of consts → `enum`.
 */
function folded(s: Record<string, unknown>): Record<string, unknown> {
  const branches = s.anyOf;
  if (!Array.isArray(branches) || branches.length === 0) return s;
  const { anyOf: _anyOf, ...rest } = s;
  if (branches.every((b) => b && typeof b === 'object' && b.const !== undefined))
    return { type: 'string', ...rest, enum: branches.map((b) => b.const) };
  const nonNull = branches.filter((b) => b?.type !== 'null');
  if (nonNull.length === 1 && nonNull.length < branches.length && typeof nonNull[0]?.type === 'string')
    return { ...rest, ...nonNull[0], type: [nonNull[0].type, 'null'] };
  return s;
}

/** A converted schema as text, without `additionalProperties` (see `ref`). */
function sameShape(schema: unknown): string {
  return JSON.stringify(schema, (key, value) => (key === 'additionalProperties' ? undefined : value));
}
