/** POST /inquire (JSON) and POST /inquire-stream (server-sent events). */
import { Elysia } from 'elysia';
import type { PreparedQuestion } from '../../answering/service';
import type { Evidence } from '../../answering/evidence';
import type { Service } from '../../service';
import { originOf, TOKEN_OPTIONAL } from '../auth';
import { ErrorBody, InquireBody, InquireResponse, InquireStreamEvent } from '../models';
import { questionOf } from '../question';

const absolute = (evidence: Evidence[], origin: string) =>
  evidence.map((e) => ({ ...e, frame_url: e.frame_url && origin + e.frame_url }));

export function inquireRoutes(s: Service) {
  return new Elysia({ name: 'routes/inquire' })
    .post(
      '/inquire',
      async ({ body, request }) => {
        const { user, req } = await questionOf(s, body, request);
        // Everything that can fail on the request itself comes before the charge.
        const origin = originOf(request);
        const answer = await s.answering.inquire(user, req, request.signal);
        try {
          return { ...answer, evidence: absolute(answer.evidence, origin) };
        } catch (e) {
          await s.answering.refund(user, answer.credits_used);
          throw e;
        }
      },
      {
        body: InquireBody,
        response: { 200: InquireResponse, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
        detail: {
          security: TOKEN_OPTIONAL,
          operationId: 'inquire',
          tags: ['inquire'],
          summary: 'Ask a question about the videos of an index',
          description:
            "Answers from the indexed videos, narrowed by `target` (a moment or range, or a number of seconds), `target_video` and `subindex` (file ids). The index is an index_id or a name, or the hosted API's `project_id` (token + index name) replaces `token` and `index`. Costs credits (400 when the balance is too low); a failed question is not charged. " +
            '`model` names the backend that wrote `output`: the extractive composer, or the configured generative model (`--generator`), with "(fallback: reason)" when the model failed, timed out or cited a time that is not in `evidence` and the composed answer was used instead.',
        },
      },
    )
    .post(
      '/inquire-stream',
      async ({ body, request }): Promise<any> => {
        const { user, req } = await questionOf(s, body, request);
        const origin = originOf(request);
        // Validation, authentication, credits and retrieval fail here, as plain HTTP errors.
        const prepared = await s.answering.prepare(user, req);
        return answerAsEvents(s, prepared, origin, request.signal);
      },
      {
        body: InquireBody,
        // No `response` hook: the answer is a stream the handler builds itself; `detail.responses` documents it.
        detail: {
          security: TOKEN_OPTIONAL,
          operationId: 'inquireStream',
          tags: ['inquire'],
          summary: 'Ask a question; the answer streams as server-sent events',
          description: [
            'The same request, validation, authentication and credits as POST /inquire (one charge per question), answered as `text/event-stream`.',
            'Each event has an `event:` name and a `data:` JSON object whose `type` repeats that name, in this order:',
            '',
            '1. `evidence` — `{type, evidence}`: the evidence list, as in /inquire (absolute `frame_url`s).',
            "2. `token` — `{type, text}`, repeated: the next chunk of the answer (the generative model's stream, or the composed answer word by word). The chunks concatenated are `output`. Each is followed by a `chunk` event — `{type, chunk}` — with the same text: the hosted API's form.",
            '   A `reset` event — `{type, reason}` — may come between tokens: the model failed or cited a time that is not in the evidence after some tokens were sent; discard those, the composed answer follows as new tokens.',
            '3. `complete` — `{type, status: "complete", output, model, credits_used}`: the final answer (every time in it is in `evidence`), who wrote it, and the charge.',
            '',
            'Errors before the stream starts (400, 401, 404, insufficient credits) are ordinary JSON error responses. An error after it started ends the stream with `error` — `{type, error, message}` — and the question is refunded.',
          ].join('\n'),
          responses: {
            200: {
              description:
                'A stream of server-sent events: `evidence`, then `token`s (perhaps a `reset`), then `complete` (or `error`).',
              content: {
                'text/event-stream': {
                  schema: {
                    type: 'string',
                    description: 'server-sent events; each `data:` is a JSON `InquireStreamEvent`',
                  },
                  'x-event-data': InquireStreamEvent,
                  example:
                    'event: evidence\ndata: {"type":"evidence","evidence":[...]}\n\nevent: token\ndata: {"type":"token","text":"A "}\n\nevent: complete\ndata: {"type":"complete","status":"complete","output":"A dog is visible from 0:01 to 0:05.","model":"openai:llama3.1 via http://127.0.0.1:11434","credits_used":1}\n\n',
                },
              },
            },
            400: {
              description: 'validation failed, bad `target`, or insufficient credits',
              content: { 'application/json': { schema: ErrorBody } },
            },
            401: { description: 'missing or invalid token', content: { 'application/json': { schema: ErrorBody } } },
            404: {
              description: 'unknown index or `target_video`',
              content: { 'application/json': { schema: ErrorBody } },
            },
          } as never,
        },
      },
    );
}

/** Streams one answer as server-sent events; the client going away stops the model. */
function answerAsEvents(s: Service, p: PreparedQuestion, origin: string, requestSignal: AbortSignal): Response {
  const enc = new TextEncoder();
  const gone = new AbortController();
  let open = true;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (type: string, data: Record<string, unknown>) => {
        if (!open) return;
        try {
          controller.enqueue(enc.encode(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`));
        } catch {
          open = false;
        }
      };
      const run = async () => {
        send('evidence', { evidence: absolute(p.composed.evidence, origin) });
        const written = await s.answering.writeStreaming(p, AbortSignal.any([gone.signal, requestSignal]), (e) => {
          send(e.type, e.type === 'token' ? { text: e.text } : { reason: e.reason });
          // The hosted API's clients read `{"chunk": …}` events (moonshine-sdk.md).
          if (e.type === 'token') send('chunk', { chunk: e.text });
        });
        send('complete', { status: 'complete', output: written.output, model: written.model, credits_used: p.cost });
      };
      run()
        .catch(async (e) => {
          await s.answering.refund(p.user, p.cost).catch(() => {});
          s.log.error('inquire-stream failed', { reason: (e as Error).message });
          send('error', { error: 500, message: `answering failed: ${(e as Error).message}` });
        })
        .finally(() => {
          if (open) controller.close();
          open = false;
        });
    },
    cancel() {
      open = false;
      gone.abort(new Error('the client went away'));
    },
  });
  return new Response(stream, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    },
  });
}
