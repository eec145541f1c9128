// The Plant Store interface exactly as the seed declares it (OpenAPI 3.1.0): title, licence, server, global
// bearerAuth, the New Plant webhook and the Plant/NewPlant/Error schemas. Do not edit: tests compare the
// served document against this, and the request validator and the event contract compile NewPlant from it.
export const seedDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Plant Store',
    description:
      'A sample API that uses a plant store as an example to demonstrate features in the OpenAPI specification',
    license: { name: 'MIT' },
    version: '1.0.0',
  },
  servers: [{ url: 'http://{baseUrl}', variables: { baseUrl: { default: 'localhost:3000' } } }],
  security: [{ bearerAuth: [] as string[] }],
  paths: {} as Record<string, unknown>,
  webhooks: {
    '/plant/webhook': {
      post: {
        description: 'Information about a new plant added to the store',
        requestBody: {
          description: 'Plant added to the store',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPlant' } } },
        },
        responses: {
          '200': { description: 'Return a 200 status to indicate that the data was received successfully' },
        },
      },
    },
  },
  components: {
    schemas: {
      Plant: {
        required: ['name'],
        type: 'object',
        properties: {
          name: { description: 'The name of the plant', type: 'string' },
          tag: { description: 'Tag to specify the type', type: 'string' },
        },
      },
      NewPlant: {
        allOf: [
          { $ref: '#/components/schemas/Plant' },
          {
            required: ['id'],
            type: 'object',
            properties: {
              id: { description: 'Identification number of the plant', type: 'integer', format: 'int64' },
            },
          },
        ],
      },
      Error: {
        required: ['error', 'message'],
        type: 'object',
        properties: {
          error: { type: 'integer', format: 'int32' },
          message: { type: 'string' },
        },
      },
    } as Record<string, unknown>,
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } as Record<string, unknown>,
  },
};
