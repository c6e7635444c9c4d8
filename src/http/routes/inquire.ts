/** POST /inquire. */
import { Elysia } from 'elysia';
import type { Service } from '../../service';
import { tokenOf } from '../auth';
import { ErrorBody, InquireBody, InquireResponse } from '../models';

export function inquireRoutes(s: Service) {
  return new Elysia({ name: 'routes/inquire' }).post(
    '/inquire',
    ({ body, request }) => {
      const user = s.accounts.authenticate(tokenOf(body.token, request));
      return s.answering.inquire(user, body);
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
