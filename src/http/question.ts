/**
 * The question of /inquire and /inquire-stream in the service's terms: the spec's fields, or the
 * hosted API's (`project_id`, a numeric `target`, `subindex`, `json`), made into one request.
 */
import type { InquireRequest } from '../answering/service';
import { badRequest } from '../errors';
import type { Service } from '../service';
import type { User } from '../storage/rows';
import { userAndIndex } from './project';

export interface QuestionBody {
  token?: string;
  index?: string;
  project_id?: string;
  prompt: string;
  guidance?: string;
  target?: string | number;
  target_video?: string;
  subindex?: string[];
  json?: unknown;
}

export async function questionOf(
  s: Service,
  body: QuestionBody,
  request: Request,
): Promise<{ user: User; req: InquireRequest }> {
  const { user, index } = await userAndIndex(s, body, request);
  const json: unknown = body.json;
  if (
    json !== undefined &&
    typeof json !== 'string' &&
    (json === null || typeof json !== 'object' || Array.isArray(json))
  )
    throw badRequest('field "json" must be an object, or a JSON-encoded object, of field name → description');
  if (typeof json === 'string') {
    if (json.length > 8000) throw badRequest('field "json" must be at most 8000 characters');
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      throw badRequest('field "json" must be an object, or a JSON-encoded object, of field name → description');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw badRequest('field "json" must be an object, or a JSON-encoded object, of field name → description');
  }
  return {
    user,
    req: {
      index: index.id,
      prompt: body.prompt,
      ...(body.guidance !== undefined && { guidance: body.guidance }),
      // A number is seconds (the hosted SDK's form), which the target parser reads as written.
      ...(body.target !== undefined && { target: typeof body.target === 'number' ? String(body.target) : body.target }),
      ...(body.target_video !== undefined && { target_video: body.target_video }),
      ...(body.subindex !== undefined && { subindex: body.subindex }),
      ...(json !== undefined && { json: json as string | Record<string, unknown> }),
    },
  };
}
