import { Body, Controller, HttpCode, Post, Req, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { LoopHeaders, NewPlant } from '@app/contracts';
import { ProblemException } from '@app/observability';
import { WebhookAuthGuard } from '../auth/bearer.guards';
import { JsonBodyGuard } from '../http/json-body.guard';
import { NewPlantPipe } from './new-plant.pipe';
import { requestSpan } from '../http/request-tracing';
import { PlantWebhookService } from './plant-webhook.service';

/** POST /plant/webhook: the New Plant webhook of the interface (documented under `webhooks`, not `paths`). */
@ApiExcludeController()
@Controller('plant')
export class PlantWebhookController {
  constructor(private readonly webhooks: PlantWebhookService) {}

  @Post('webhook')
  @HttpCode(200)
  @UseGuards(WebhookAuthGuard, JsonBodyGuard)
  receive(@Req() req: FastifyRequest, @Body(NewPlantPipe) plant: NewPlant): Promise<{ eventId: string }> {
    const header = (name: string) => {
      const v = req.headers[name];
      return typeof v === 'string' && v.length > 0 ? v : undefined;
    };
    return this.webhooks.accept(plant, {
      idempotencyKey: header('webhook-id') ?? header('idempotency-key'),
      trace: requestSpan(req) ?? header('traceparent'),
      requestId: String(req.id),
      ...loopHeaders(header),
    });
  }
}

/** The hop count and origin a forwarding Plant Store sent (see LoopHeaders); malformed ones are refused. */
function loopHeaders(header: (name: string) => string | undefined): { hops?: number; origin?: string } {
  const hops = header(LoopHeaders.hops);
  const origin = header(LoopHeaders.origin);
  if (hops !== undefined && !/^\d{1,6}$/.test(hops)) {
    throw ProblemException.of(
      'badRequest',
      `${LoopHeaders.hops} must be a whole number (the deliveries this plant went through); forward it as you received it or drop it`,
    );
  }
  if (origin !== undefined && !/^[\w.:-]{1,128}$/.test(origin)) {
    throw ProblemException.of(
      'badRequest',
      `${LoopHeaders.origin} must be an event id (letters, digits, . _ : -, at most 128); forward it as you received it or drop it`,
    );
  }
  return { ...(hops !== undefined ? { hops: Number(hops) } : {}), ...(origin !== undefined ? { origin } : {}) };
}
