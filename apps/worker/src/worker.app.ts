import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig, WorkerConfig, workerEnvSchema } from '@app/config';
import { PLANT_CREATED } from '@app/contracts';
import {
  durableProducerConfig,
  explainKafkaError,
  kafkaClientConfig,
  routeKafkaLogsTo,
  topicNamesFrom,
} from '@app/kafka';
import { createLogger, PinoNestLogger, ProblemFilter, Tracing } from '@app/observability';
import { databaseProblem } from '@app/persistence';
import { ConsumerState } from './health/consumer-state';
import { IngestServer } from './ingest/ingest.server';
import { prepareInfrastructure } from './setup/prepare';
import { WorkerModule } from './worker.module';

/**
 * The worker: a Nest hybrid app whose microservice is the Kafka consumer (IngestServer) and whose small
 * HTTP server answers health checks and metrics. The caller listens.
 */
export async function createWorkerApp(env: NodeJS.ProcessEnv = process.env) {
  const config: WorkerConfig = loadConfig(workerEnvSchema, env);
  const logger = createLogger('worker', config.LOG_LEVEL, config.LOG_FORMAT);
  routeKafkaLogsTo(logger);
  await prepareInfrastructure(config, logger); // migrations and topics, before the consumer takes a batch

  const consumerState = new ConsumerState();
  const topics = topicNamesFrom(config);
  const group = `${config.WORKER_GROUP_ID}-server`;
  const app = await NestFactory.create<NestFastifyApplication>(
    WorkerModule.forRoot(config, consumerState, Tracing.forApp('worker', config)),
    new FastifyAdapter({ logger: false }),
    { logger: new PinoNestLogger(logger) },
  );
  app.useGlobalFilters(new ProblemFilter(logger, [databaseProblem]));
  app.connectMicroservice(
    {
      strategy: new IngestServer(
        {
          client: kafkaClientConfig(config, 'plant-store-worker'),
          // Nest appends "-server": the group is `${WORKER_GROUP_ID}-server`.
          consumer: {
            groupId: config.WORKER_GROUP_ID,
            maxBytes: config.WORKER_MAX_BATCH_BYTES,
            sessionTimeout: 30000,
            heartbeatInterval: 3000,
          },
          producer: durableProducerConfig,
        },
        consumerState,
        config.PLANT_CREATED_PARTITIONS,
        config.KAFKA_CONSUMER_STALL_MS,
        {
          topics: { [PLANT_CREATED]: topics.plantCreated },
          deadLetterTopic: topics.deadLetters,
          explain: (err, topic) => {
            const type = String((err as { type?: string }).type);
            const need = type.startsWith('GROUP_')
              ? { operation: 'READ' as const, resource: 'GROUP' as const, name: group }
              : { operation: 'READ' as const, resource: 'TOPIC' as const, name: topic };
            return explainKafkaError(err, config, need).message;
          },
        },
      ),
    },
    { inheritAppConfig: true },
  );
  return { app, config, logger };
}
