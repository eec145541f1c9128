import { randomUUID } from 'node:crypto';
import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { createPlantStoreClient, ok, PlantStoreClient } from '@app/api-client';
import { buildOpenApiDocument } from '@app/contracts';
import * as e2e from '../../tools/harness/stack';
import { OwnStack, startOwnStack } from '../../tools/harness/own-stack';
import { Receiver } from '../../tools/harness/receiver';
import { waitFor } from '../../tools/harness/wait';

// Every answer the API really gives, read through the generated client the console and the CLI use, matches the
// schema the served document declares for its operation, status and content type (problems included). On a
// database and topics of its own: its worker sends this suite's deliveries alone.
const doc = buildOpenApiDocument() as unknown as {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>
  >;
  components: { schemas: Record<string, unknown> };
};
const DOC_ID = 'https://plant.store/openapi-conformance.json';
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addFormat('int64', true);
ajv.addSchema({ $id: DOC_ID, components: doc.components });
const compiled = new Map<string, ValidateFunction>();

/** The declared schema of one answer, with its refs pointing into the document; undefined when undeclared. */
function validatorFor(path: string, method: string, status: number, contentType: string): ValidateFunction | null {
  const key = `${method} ${path} ${status} ${contentType}`;
  if (compiled.has(key)) return compiled.get(key)!;
  const response = doc.paths[path]?.[method]?.responses[String(status)];
  const schema = response?.content?.[contentType]?.schema;
  if (!schema) return null;
  const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`));
  const validate = ajv.compile(rebased);
  compiled.set(key, validate);
  return validate;
}

describe('API responses conform to the served document', () => {
  let stack: OwnStack;
  let gateway: e2e.RunningGateway;
  const receiver = new Receiver();
  let client: PlantStoreClient;
  const seen: string[] = [];
  const mismatches: string[] = [];
  const nextId = e2e.plantIds();

  beforeAll(async () => {
    await receiver.start();
    stack = await startOwnStack('conformance');
    gateway = stack.gateway;
    client = createPlantStoreClient(gateway.url, () => e2e.ADMIN_TOKEN);
    client.use({
      async onResponse({ request, response, schemaPath }) {
        const method = request.method.toLowerCase();
        const what = `${request.method} ${schemaPath} → ${response.status}`;
        seen.push(what);
        if (response.status === 204) return;
        const contentType = (response.headers.get('content-type') ?? '').split(';')[0].trim();
        const validate = validatorFor(schemaPath, method, response.status, contentType);
        if (!validate) return void mismatches.push(`${what}: ${contentType} is not declared for it`);
        if (!validate(await response.clone().json())) mismatches.push(`${what}: ${ajv.errorsText(validate.errors)}`);
      },
    });
  });

  afterAll(async () => {
    await stack?.close();
    await receiver.stop();
  });

  it('for every operation the console and the CLI use, successes and problems alike', async () => {
    const created = await ok(client.POST('/subscriptions', { body: { url: `${receiver.url}/conformance` } }));
    const path = { params: { path: { id: created.id } } };
    await ok(client.GET('/subscriptions'));
    await ok(client.GET('/subscriptions/{id}', path));
    await ok(client.PATCH('/subscriptions/{id}', { ...path, body: { description: 'conformance' } }));
    await ok(client.POST('/subscriptions/{id}/rotate-secret', path));
    await ok(client.POST('/subscriptions/{id}/test', path));

    const plantId = nextId();
    expect((await e2e.postPlant(gateway.url, { id: plantId, name: 'Conformance fern', tag: 'api' })).status).toBe(200);
    const delivery = await waitFor(
      'the delivery to succeed',
      async () => {
        const page = await ok(client.GET('/deliveries', { params: { query: { subscriptionId: created.id } } }));
        return page.items.find((d) => d.plantId === plantId && d.status === 'succeeded');
      },
      90_000,
    );
    await ok(client.GET('/deliveries/{id}', { params: { path: { id: delivery.id } } }));
    await ok(client.GET('/plants', { params: { query: { limit: 5 } } }));
    await ok(client.GET('/plants/{id}', { params: { path: { id: plantId } } }));
    await ok(client.GET('/overview'));
    await ok(client.GET('/dead-letters'));
    await ok(client.GET('/audit', { params: { query: { subscriptionId: created.id } } }));
    // A backfill of nothing (no plant changed since now): it completes at once, so its cancel is a 200 or a 409.
    const since = new Date().toISOString();
    const backfill = await ok(client.POST('/subscriptions/{id}/backfills', { ...path, body: { since } }));
    const backfillPath = { params: { path: { id: created.id, backfillId: backfill.id } } };
    await ok(client.GET('/subscriptions/{id}/backfills', path));
    await ok(client.GET('/subscriptions/{id}/backfills/{backfillId}', backfillPath));
    await client.POST('/subscriptions/{id}/backfills/{backfillId}/cancel', backfillPath);

    // Problems: each is application/problem+json with the Problem schema.
    await client.GET('/subscriptions/{id}', { params: { path: { id: randomUUID() } } }); // 404
    await client.POST('/subscriptions', { body: { url: 'not a url' } }); // 422
    await client.GET('/deliveries', { params: { query: { limit: 0 } } }); // 422
    await createPlantStoreClient(gateway.url, () => 'wrong-token').GET('/overview'); // 401, outside the check

    expect(mismatches).toEqual([]);
    expect(seen).toEqual(
      expect.arrayContaining([
        'GET /subscriptions/{id} → 404',
        'POST /subscriptions → 422',
        'GET /deliveries → 422',
        'GET /deliveries/{id} → 200',
      ]),
    );
  }, 150_000);
});
