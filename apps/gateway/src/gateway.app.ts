import { NestFactory } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { GatewayConfig, gatewayEnvSchema, loadConfig } from '@app/config';
import { createLogger, PinoNestLogger, ProblemFilter } from '@app/observability';
import { GatewayModule } from './gateway.module';
import { createHttpAdapter, instrumentHttp } from './http/http-server';
import { ShutdownState } from './health/shutdown-state';
import { GatewayMetrics } from './metrics/gateway-metrics';
import { setupDocs } from './openapi/docs';

/** Builds the gateway (used by main.ts and by the end-to-end tests); the caller listens. */
export async function createGatewayApp(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ app: NestFastifyApplication; config: GatewayConfig }> {
  const config = loadConfig(gatewayEnvSchema, env); // fails fast, naming the bad variable
  const logger = createLogger('gateway', config.LOG_LEVEL);
  const app = await NestFactory.create<NestFastifyApplication>(
    GatewayModule.forRoot(env),
    createHttpAdapter(config.WEBHOOK_MAX_BYTES),
    { bodyParser: false, logger: new PinoNestLogger(logger) },
  );
  app.useGlobalFilters(new ProblemFilter(logger));
  instrumentHttp(app, app.get(GatewayMetrics), logger, app.get(ShutdownState));
  setupDocs(app);
  return { app, config };
}
