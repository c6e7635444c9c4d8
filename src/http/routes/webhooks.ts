/** PUT /indexes/{index_id}/webhook: where an index's video.ready/failed/removed events go. */
import { Elysia, t } from 'elysia';
import type { Service } from '../../service';
import { authentication } from '../auth';
import { ErrorBody, TOKEN_PLACEHOLDER } from '../models';

export const WebhookBody = t.Object(
  {
    token: t.Optional(t.String({ description: 'user authentication token (or an Authorization: Bearer header)' })),
    url: t.Union([t.String({ maxLength: 2048 }), t.Null()], {
      description:
        'http(s) URL that receives the events (checked like a download URL: private addresses are refused unless --allow-private-urls); null or "" removes it',
    }),
    rotate_secret: t.Optional(
      t.Boolean({ description: 'make a new signing secret (the old one stops working) and show it once' }),
    ),
  },
  { examples: [{ token: TOKEN_PLACEHOLDER, url: 'https://example.com/hooks/vidq', rotate_secret: false }] },
);

export const WebhookResponse = t.Object({
  index_id: t.String(),
  url: t.Union([t.String(), t.Null()]),
  secret: t.Optional(
    t.String({
      description:
        "the user's signing secret, present only when this call created or rotated it (shown once): the `X-Vidq-Signature` header of each delivery is `sha256=` + the hex HMAC-SHA256 of the raw body with it",
    }),
  ),
});

export function webhookRoutes(s: Service) {
  return new Elysia({ name: 'routes/webhooks' }).use(authentication(s.accounts)).put(
    '/indexes/:index_id/webhook',
    async ({ params, body, user }) => {
      return s.webhooks.setIndexWebhook(user, params.index_id, body.url, body.rotate_secret === true);
    },
    {
      auth: true,
      params: t.Object({ index_id: t.String({ description: 'index_id of the index' }) }),
      body: WebhookBody,
      response: {
        200: WebhookResponse,
        400: ErrorBody,
        401: ErrorBody,
        403: ErrorBody,
        404: ErrorBody,
        413: ErrorBody,
      },
      detail: {
        operationId: 'setIndexWebhook',
        tags: ['indexes'],
        summary: "Set or remove an index's webhook URL (video.ready, video.failed, video.removed)",
        description:
          'Each event is POSTed as JSON (`type`, `delivery_id`, `created`, `index_id`, `video_id`, `file_id`, `file_name`, `status`, `error`) with `X-Vidq-Event`, `X-Vidq-Delivery` and `X-Vidq-Signature: sha256=<hex HMAC-SHA256 of the body>`. A delivery that fails (no 2xx within 10 s) is retried with a doubling delay (--webhook-retry-ms, at most an hour) for 24 hours; deliveries are at least once (deduplicate by `delivery_id`) and in order per video, and survive a restart. Without an index URL, events go to --webhook-url when set.',
      },
    },
  );
}
