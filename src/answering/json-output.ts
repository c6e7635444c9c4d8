/**
 * JSON output (`json` of /inquire, "structured output" in the API): an object of field name → description, or that object
 * encoded as a JSON string (the hosted API's clients send a string). The answer's `output` is then
 * a JSON string of an object with exactly those keys: filled by the generator in its JSON mode when
 * one is configured, else from the facts and evidence (each description asked as a question of its
 * own), with `null` where nothing supports a value.
 */
import { badRequest } from '../errors';
import type { Composed } from './compose';
import type { Evidence } from './evidence';
import type { GenerateRequest } from './generate/contracts';
import { ungroundedTimes } from './generate/times';
import { NUMBER_WORDS } from './vocabulary';

export type JsonFields = Record<string, string>;

/** Most fields one question may ask for (each is answered from the index). */
export const MAX_FIELDS = 20;

/** The fields asked for, or null when `json` is absent or empty; 400 when it is not an object of strings. */
export function parseJsonFields(raw: unknown): JsonFields | null {
  if (raw === undefined || raw === null || raw === '') return null;
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw badRequest(
        'json: not valid JSON; expected an object of field name → description, e.g. {"count": "how many people appear"}',
      );
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw badRequest('json: expected an object of field name → description');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return null;
  if (entries.length > MAX_FIELDS) throw badRequest(`json: at most ${MAX_FIELDS} fields`);
  const out: JsonFields = {};
  for (const [k, v] of entries) {
    if (!k.trim() || k.length > 100) throw badRequest('json: field names are 1 to 100 characters');
    if (typeof v !== 'string')
      throw badRequest(`json: the description of ${JSON.stringify(k.slice(0, 40))} is not a string`);
    out[k] = v.slice(0, 500);
  }
  return out;
}

/** The question a field's description asks, in the context of the main prompt. */
export function fieldQuestion(description: string, key: string): string {
  const d = description.trim() || key.replace(/[_-]+/g, ' ');
  return /\?\s*$/.test(d) || /^(how|what|which|who|when|where|is|are|does|do|did|can|list|describe)\b/i.test(d)
    ? d
    : `What is ${/^(the|a|an)\b/i.test(d) ? '' : 'the '}${d}?`;
}

/** A value from a composed answer: a number, a yes/no, or the answer's text; null when nothing was found. */
export function fieldValue(description: string, a: Composed): string | number | boolean | null {
  if (!a.found) return null;
  if (/\b(how many|number of|count)\b/i.test(description)) {
    const m = new RegExp(`\\b(\\d+(?:\\.\\d+)?|${Object.keys(NUMBER_WORDS).join('|')})\\b`, 'i').exec(
      a.output.replace(/\b\d+:\d\d\b/g, ' '),
    );
    if (m) return /^\d/.test(m[1]!) ? Number(m[1]) : NUMBER_WORDS[m[1]!.toLowerCase()]!;
  }
  if (/^(is|are|does|do|did|can|whether)\b/i.test(description.trim())) {
    if (/^yes\b/i.test(a.output)) return true;
    if (/^no\b/i.test(a.output)) return false;
  }
  return a.output;
}

/** Fills every field from the composed answer to its own question. */
export async function fillFields(
  fields: JsonFields,
  ask: (question: string) => Promise<Composed>,
): Promise<{ output: string; evidence: Evidence[]; found: boolean }> {
  const obj: Record<string, unknown> = {};
  const evidence: Evidence[] = [];
  const seen = new Set<string>();
  for (const [key, description] of Object.entries(fields)) {
    const a = await ask(fieldQuestion(description, key));
    obj[key] = fieldValue(description, a);
    if (!a.found) continue;
    for (const e of a.evidence) {
      const id = `${e.video_id}/${e.kind}/${e.start}/${e.end}/${e.text}`;
      if (!seen.has(id)) evidence.push(e);
      seen.add(id);
    }
  }
  return { output: JSON.stringify(obj), evidence, found: Object.values(obj).some((v) => v !== null) };
}

/** The generator's request in JSON mode: the same evidence, and the keys to fill. */
export function jsonModeRequest(base: GenerateRequest, fields: JsonFields): GenerateRequest {
  const keys = Object.entries(fields)
    .map(([k, d]) => `- ${JSON.stringify(k)}: ${d}`)
    .join('\n');
  const last = base.messages.at(-1)!;
  return {
    ...base,
    json: true,
    messages: [
      ...base.messages.slice(0, -1),
      {
        role: last.role,
        content: `${last.content}\n\nReply with one JSON object and nothing else. It has exactly these keys:\n${keys}\nUse only the evidence; a key the evidence does not support is null.`,
      },
    ],
  };
}

/** The model's reply as the output JSON (exactly the keys, times only from the evidence), or null when it is not. */
export function checkModelJson(text: string, fields: JsonFields, evidence: Evidence[]): string | null {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^```(?:json)?\s*|\s*```$/g, ''));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const obj: Record<string, unknown> = {};
  for (const k of Object.keys(fields)) {
    const v = (value as Record<string, unknown>)[k];
    obj[k] = v === undefined ? null : v;
  }
  const out = JSON.stringify(obj);
  return ungroundedTimes(out, evidence).length ? null : out;
}
