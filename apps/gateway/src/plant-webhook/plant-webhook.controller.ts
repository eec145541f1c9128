import { Body, Controller, HttpCode, Post, Req, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { NewPlant } from '@app/contracts';
import { WebhookAuthGuard } from '../auth/bearer.guards';
import { JsonBodyGuard } from '../http/json-body.guard';
import { NewPlantPipe } from './new-plant.pipe';
import { requestSpan } from '../http/request-tracing';
import { PlantWebhookService } from './plant-webhook.service';
import { webhookHeaders } from './webhook-headers';

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
    const { traceparent, ...headers } = webhookHeaders(header);
    return this.webhooks.accept(plant, {
      trace: requestSpan(req) ?? traceparent,
      requestId: String(req.id),
      ...headers,
    });
  }
}
