import http from 'node:http';
import { AddressInfo } from 'node:net';

/** A span as OTLP/JSON carries it, with the service that sent it. */
export interface CollectedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number; // 1 internal, 2 server, 3 client, 4 producer, 5 consumer
  attributes: Record<string, string | number | boolean>;
  status: { code?: number };
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

/** An OTLP/HTTP receiver on loopback (`POST /v1/traces`, JSON), as a collector would be: real HTTP, real exports. */
export class OtlpCollector {
  readonly spans: CollectedSpan[] = [];
  readonly requests: { contentType: string | undefined; path: string }[] = [];
  private server!: http.Server;
  url = '';

  async start() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        this.requests.push({ contentType: req.headers['content-type'], path: req.url ?? '' });
        if (req.url === '/v1/traces') this.collect(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private collect(body: {
    resourceSpans?: {
      resource?: { attributes?: OtlpAttribute[] };
      scopeSpans?: { spans?: (Omit<CollectedSpan, 'attributes' | 'service'> & { attributes?: OtlpAttribute[] })[] }[];
    }[];
  }) {
    for (const rs of body.resourceSpans ?? []) {
      const service = String(attributes(rs.resource?.attributes)['service.name']);
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? [])
          this.spans.push({ ...s, parentSpanId: s.parentSpanId ?? '', service, attributes: attributes(s.attributes) });
    }
  }
}

function attributes(list: OtlpAttribute[] = []): Record<string, string | number | boolean> {
  return Object.fromEntries(
    list.map(({ key, value }) => [
      key,
      value.stringValue ??
        (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue ?? '')),
    ]),
  );
}
