/** POST /inquire. */
import { Elysia } from 'elysia';
import type { Service } from '../../service';
import { originOf, tokenOf } from '../auth';
import { ErrorBody, InquireBody, InquireResponse } from '../models';

export function inquireRoutes(s: Service) {
  return new Elysia({ name: 'routes/inquire' }).post(
    '/inquire',
    async ({ body, request }) => {
      const user = s.accounts.authenticate(tokenOf(body.token, request));
      const answer = await s.answering.inquire(user, body);
      const origin = originOf(request);
      return { ...answer, evidence: answer.evidence.map((e) => ({ ...e, frame_url: e.frame_url && origin + e.frame_url })) };
    },
    {
      body: InquireBody,
      response: { 200: InquireResponse, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
      detail: {
        tags: ['inquire'],
        summary: 'Ask a question about the videos of an index',
        description: 'Answers from the indexed videos, narrowed by `target` (a moment or range) and `target_video`. Costs credits (400 when the balance is too low); a failed question is not charged.',
      },
    },
  );
}
