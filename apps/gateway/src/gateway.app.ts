import { NestFactory } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { GatewayConfig, gatewayEnvSchema, loadConfig } from '@app/config';
import type { Logger } from 'pino';
import { routeKafkaLogsTo } from '@app/kafka';
import { createLogger, PinoNestLogger, ProblemFilter, Tracing } from '@app/observability';
import { databaseProblem } from '@app/persistence';
import { authenticateBeforeBody } from './auth/before-body';
import { refuseMisplacedCredentials } from './auth/credential-placement';
import { GatewayModule } from './gateway.module';
import { BodyBudget } from './http/body-budget';
import { decodeRequestBodies } from './http/content-encoding';
import { ConnectionTracker } from './http/http-limits';
import { createHttpAdapter, instrumentHttp } from './http/http-server';
import { parseJsonBodies } from './http/json-parser';
import { refuseOversizedChunks } from './http/chunk-limit';
import { lingerBeforeClose } from './http/lingering-close';
import { refuseAmbiguousFraming } from './http/framing';
import { traceRequests } from './http/request-tracing';
import { addSecurityHeaders } from './http/security-headers';
import { awaitInfrastructure } from './lifecycle/infrastructure-check';
import { ShutdownState } from './lifecycle/shutdown-state';
import { GatewayMetrics } from './metrics/gateway-metrics';
import { PLANT_WEBHOOK, servePlantWebhook } from './plant-webhook/plant-webhook.route';
import { serveConsole } from './console/console';
import { setupDocs } from './openapi/docs';

export interface GatewayApp {
  app: NestFastifyApplication;
  config: GatewayConfig;
  connections: ConnectionTracker;
  logger: Logger;
}

/** Builds the gateway (used by main.ts and by the end-to-end tests); the caller listens. */
export async function createGatewayApp(env: NodeJS.ProcessEnv = process.env): Promise<GatewayApp> {
  const config = loadConfig(gatewayEnvSchema, env); // fails fast, naming the bad variable
  const logger = createLogger('gateway', config.LOG_LEVEL, config.LOG_FORMAT);
  routeKafkaLogsTo(logger);
  await awaitInfrastructure(config, logger); // the worker's migrations and topics
  const metrics = new GatewayMetrics();
  const tracing = Tracing.forApp('gateway', config);
  const app = await NestFactory.create<NestFastifyApplication>(
    GatewayModule.forRoot(config, metrics, tracing),
    createHttpAdapter(config, metrics),
    { bodyParser: false, logger: new PinoNestLogger(logger) },
  );
  app.useGlobalFilters(new ProblemFilter(logger, [databaseProblem]));
  const fastify = app.getHttpAdapter().getInstance();
  const connections = new ConnectionTracker(fastify.server, config.HTTP_MAX_CONNECTIONS, metrics);
  lingerBeforeClose(fastify.server); // a refusal sent before the body arrives whole, not as a reset
  refuseOversizedChunks(fastify.server, config.WEBHOOK_MAX_BYTES, metrics);
  refuseAmbiguousFraming(fastify, metrics); // the first onRequest hook: before tracing, routing or auth
  traceRequests(fastify, tracing);
  instrumentHttp(app, metrics, logger, app.get(ShutdownState));
  // Bodies are read as Buffers within one budget for the process and a share per sender (issue #34).
  const bodies = new BodyBudget(config.HTTP_BODY_BUDGET_BYTES, config.HTTP_BODY_SENDER_SHARE_BYTES);
  metrics.watchBodyBudget(bodies);
  parseJsonBodies(fastify, { maxBytes: config.WEBHOOK_MAX_BYTES, budget: bodies, metrics });
  decodeRequestBodies(fastify, config.WEBHOOK_MAX_BYTES, config.HTTP_MAX_CONCURRENT_DECODES);
  refuseMisplacedCredentials(fastify);
  // After the misplaced-token check: a token in the query is a 400, not a 401.
  authenticateBeforeBody(app, [PLANT_WEBHOOK]);
  servePlantWebhook(app, logger); // after authenticateBeforeBody, which checks that the route exists
  addSecurityHeaders(fastify);
  setupDocs(app);
  await serveConsole(fastify);
  return { app, config, connections, logger };
}
