import { messageAttributes } from './sqs-connection';

describe(messageAttributes.name, () => {
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'PlantStore-Webhooks/1.0',
    'webhook-id': 'msg_1',
    'webhook-timestamp': '1795410540',
    'webhook-signature': 'v1,abc= v1,def=',
    'plant-store-hops': '1',
    'X-Tenant': 'acme',
  };

  it('sends the three Standard Webhooks headers as attributes, every other header in one JSON attribute', () => {
    const attributes = messageAttributes({ key: '42', messageId: 'msg_1', body: '{}', headers });
    expect(Object.keys(attributes)).toEqual([
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'webhook-headers',
    ]);
    expect(attributes['webhook-signature']).toEqual({ DataType: 'String', StringValue: 'v1,abc= v1,def=' });
    expect(JSON.parse(attributes['webhook-headers'].StringValue!)).toEqual({
      'content-type': 'application/json',
      'user-agent': 'PlantStore-Webhooks/1.0',
      'plant-store-hops': '1',
      'X-Tenant': 'acme',
    });
  });

  it("stays within SQS's 10 attributes however many headers there are, and sends no empty one", () => {
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`x-h${i}`, 'v']));
    const attributes = messageAttributes({
      key: '1',
      messageId: 'msg_2',
      body: '{}',
      headers: { ...many, 'x-empty': '' },
    });
    expect(Object.keys(attributes).length).toBeLessThanOrEqual(10);
    expect(Object.values(attributes).every((a) => a.StringValue !== '')).toBe(true);
    expect(attributes['webhook-id'].StringValue).toBe('msg_2');
    expect(attributes['webhook-timestamp']).toBeUndefined(); // none given: left out, not sent empty
  });
});
