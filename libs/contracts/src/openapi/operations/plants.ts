// The read API: the stored plants, for a webhook token (bearerAuth) or any admin token.
import {
  badParameter,
  cursorParams,
  idParam,
  notFound,
  ok,
  plantIdSchema,
  ref,
  storeRead,
  unauthorized,
} from './common';

export const plants = {
  get: {
    operationId: 'listPlants',
    summary: 'List stored plants, newest first',
    tags: ['Plants'],
    security: storeRead,
    parameters: cursorParams,
    responses: { '200': ok('A page of plants', ref('PlantPage')), '401': unauthorized, '422': badParameter },
  },
};

export const plant = {
  get: {
    operationId: 'getPlant',
    summary: 'Get a stored plant',
    tags: ['Plants'],
    security: storeRead,
    parameters: [idParam('id', plantIdSchema, 'Plant id')],
    responses: {
      '200': ok('The plant', ref('StoredPlant')),
      '401': unauthorized,
      '404': notFound,
      '422': badParameter,
    },
  },
};
