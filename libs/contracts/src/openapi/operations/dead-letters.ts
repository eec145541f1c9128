// The dead letters (plant.created.dlq): inspect them, redrive them to plant.created, or discard them.
import {
  adminRead,
  adminWrite,
  badParameter,
  cursorParams,
  forbidden,
  idParam,
  invalidBody,
  json,
  notFound,
  ok,
  problem,
  ref,
  unauthorized,
} from './common';

const deadLetterId = idParam('id', { type: 'string', pattern: '^[1-9][0-9]{0,17}$' }, 'Dead-letter id');
const idsBody = { required: true, ...json(ref('DeadLetterIds')) };

export const deadLetters = {
  get: {
    operationId: 'listDeadLetters',
    summary: 'List dead letters, newest first',
    description:
      'Records of plant.created.dlq: events the worker could not store, with the reason and where they came from. ' +
      'The worker copies each one into the database, so this survives restarts and works with any number of replicas.',
    tags: ['Dead letters'],
    security: adminRead,
    parameters: [
      {
        name: 'status',
        in: 'query',
        schema: { type: 'string', enum: ['dead', 'redriving', 'redriven', 'discarded'] },
      },
      ...cursorParams,
    ],
    responses: {
      '200': ok('A page of dead letters', ref('DeadLetterPage')),
      '401': unauthorized,
      '403': forbidden,
      '422': badParameter,
    },
  },
};

export const deadLetter = {
  get: {
    operationId: 'getDeadLetter',
    summary: 'Get a dead letter with its original value and headers',
    tags: ['Dead letters'],
    security: adminRead,
    parameters: [deadLetterId],
    responses: {
      '200': ok('The dead letter', ref('DeadLetterWithValue')),
      '401': unauthorized,
      '403': forbidden,
      '404': notFound,
      '422': badParameter,
    },
  },
};

export const redriveDeadLetter = {
  post: {
    operationId: 'redriveDeadLetter',
    summary: 'Republish a dead letter to plant.created',
    description:
      'The original key, value and headers go back to plant.created, with `x-redriven-from` naming the dead ' +
      'letter. Answered once Kafka has it. A redrive sent twice publishes once (the second gets 409); the worker ' +
      'applies an event id once in any case.',
    tags: ['Dead letters'],
    security: adminWrite,
    parameters: [deadLetterId],
    responses: {
      '202': ok('Republished', ref('DeadLetter')),
      '401': unauthorized,
      '403': forbidden,
      '404': notFound,
      '409': problem('Not dead: already redriven, being redriven, or discarded'),
      '422': badParameter,
      '503': problem('Kafka did not take it in time: it is still dead; retry'),
    },
  },
};

export const discardDeadLetter = {
  post: {
    operationId: 'discardDeadLetter',
    summary: 'Mark a dead letter discarded (it stays listed, with who discarded it)',
    tags: ['Dead letters'],
    security: adminWrite,
    parameters: [deadLetterId],
    responses: {
      '200': ok('Discarded', ref('DeadLetter')),
      '401': unauthorized,
      '403': forbidden,
      '404': notFound,
      '409': problem('Not dead: already redriven or discarded'),
      '422': badParameter,
    },
  },
};

export const redriveDeadLetters = {
  post: {
    operationId: 'redriveDeadLetters',
    summary: 'Republish many dead letters to plant.created',
    tags: ['Dead letters'],
    security: adminWrite,
    requestBody: idsBody,
    responses: {
      '200': ok('What was redriven and what was left', ref('DeadLetterBulkResult')),
      '401': unauthorized,
      '403': forbidden,
      '422': invalidBody,
      '503': problem('Kafka did not take them in time: they are still dead; retry'),
    },
  },
};

export const discardDeadLetters = {
  post: {
    operationId: 'discardDeadLetters',
    summary: 'Mark many dead letters discarded',
    tags: ['Dead letters'],
    security: adminWrite,
    requestBody: idsBody,
    responses: {
      '200': ok('What was discarded and what was left', ref('DeadLetterBulkResult')),
      '401': unauthorized,
      '403': forbidden,
      '422': invalidBody,
    },
  },
};
