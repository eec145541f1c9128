import { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { validateNewPlant } from '@app/contracts';
import { ProblemException, sendProblem } from '@app/observability';
import { WebhookAuthGuard } from '../auth/bearer.guards';
import { passedBeforeBody } from '../auth/before-body';
import { JsonBodyGuard } from '../http/json-body.guard';
import { requestSpan } from '../http/request-tracing';
import { validBody } from '../http/validated-body.pipe';
import { PlantWebhookService } from './plant-webhook.service';
import { webhookHeaders } from './webhook-headers';

/**
 * POST /plant/webhook, the New Plant webhook of the interface (documented under `webhooks`, not `paths`), and
 * its head-only guards: the bearer token (WEBHOOK_TOKENS, through the Passport strategy every route uses) and
 * the Content-Type. authenticateBeforeBody runs them before the body is read, as for every guarded route.
 */
export const PLANT_WEBHOOK = { method: 'POST', url: '/plant/webhook', guards: [WebhookAuthGuard, JsonBodyGuard] };

/**
 * Serves the webhook from a route of Nest's own Fastify instance rather than a Nest controller: the hot path of
 * the gateway, and Nest's per-request machinery (its router proxy, the guards run a second time, the pipe and
 * filter contexts) cost more than everything else the route does (bench:gateway). Everything around it is the
 * same as for the other routes, since it is the same Fastify instance: the hooks (framing, tracing, request id,
 * drain, decoding, misplaced credentials, the guards before the body, security headers, metrics and the log
 * line), the JSON parser, and the server's close on shutdown. Validation is the OpenAPI schema's (as the pipe
 * of every other body), and an error is answered as problem+json by the same function as Nest's filter.
 * Registered after authenticateBeforeBody, which checks at start-up that the route it guards exists.
 */
export function servePlantWebhook(app: NestFastifyApplication, logger: Logger): void {
  const webhooks = app.get(PlantWebhookService);
  app
    .getHttpAdapter()
    .getInstance()
    .route({
      method: PLANT_WEBHOOK.method,
      url: PLANT_WEBHOOK.url,
      errorHandler: (err: unknown, req: FastifyRequest, reply: FastifyReply) => sendProblem(reply, req, err, logger),
      handler: (req: FastifyRequest) => {
        // Never without its guards: a route missing from authenticateBeforeBody's table fails closed.
        if (!passedBeforeBody(req))
          throw ProblemException.of('internal', 'The webhook route was reached without its authentication');
        const plant = validBody(validateNewPlant, req.body);
        const header = (name: string) => {
          const v = req.headers[name];
          return typeof v === 'string' && v.length > 0 ? v : undefined;
        };
        const { traceparent, ...headers } = webhookHeaders(header);
        return webhooks.accept(plant, {
          trace: requestSpan(req) ?? traceparent,
          requestId: String(req.id),
          ...headers,
        });
      },
    });
}
