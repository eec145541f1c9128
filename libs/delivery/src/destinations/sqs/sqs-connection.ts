import http from 'node:http';
import https from 'node:https';
import { isIP, connect as netConnect } from 'node:net';
import {
  MessageAttributeValue,
  SendMessageBatchCommand,
  SendMessageBatchRequestEntry,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { resolveBroker } from '../connect-guard';
import { BrokerConnection, BrokerMessage, BrokerTarget, ConnectBroker, ConnectGuard } from '../destination';
import { sqsCredentialsProblem } from '../destination-url';
import { PublishBatcher } from '../publish-batcher';
import { isConnectionError, sqsErrorReason } from './sqs-errors';

/** The headers sent as message attributes of their own; every other one is in `webhook-headers` (JSON). */
export const OWN_ATTRIBUTES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
export const HEADERS_ATTRIBUTE = 'webhook-headers';

/**
 * SendMessageBatch's bounds: 10 messages a request, and 256 KiB of bodies and attributes together (AWS takes 1 MiB
 * since 2025; ElasticMQ and older SQS-compatible servers 256 KiB). Several requests on the wire at once: SQS
 * answers each on its own, over the pool's keep-alive sockets.
 */
export const SQS_BATCH = { maxMessages: 10, maxBytes: 256 * 1024, maxInFlight: 8 };

/**
 * An SQS destination sends each New Plant in a SendMessageBatch with the others waiting for the same queue
 * (../publish-batcher.ts): SQS's answer for its entry (a message id, and for a FIFO queue a sequence number) is the
 * message stored, redundantly, by SQS; an entry SQS refuses fails alone. The "connection" is a keep-alive pool of HTTP(S)
 * sockets to the endpoint, opened through the SSRF guard, and an SDK client per region signing with the URL's key.
 */
export const connectSqs: ConnectBroker = async (target: BrokerTarget, guard: ConnectGuard) => {
  const credentials = sqsCredentialsProblem(target.secrets);
  if (credentials) throw new Error(`sqs: the URL ${credentials}`);
  const { host, port, where } = await resolveBroker(target, guard);
  // A TCP connect first, through the guard: an endpoint that is down fails the connect, so the pool's backoff
  // applies (a SendMessage would only fail after the pool had taken the connection as open).
  await reachable(host, port, guard, where);
  const { ca, cert, rejectUnauthorized } = target.settings.tls ?? {};
  // Every socket resolves its host through the guard's lookup (the address connected to is the one checked); an
  // IP literal was checked by resolveBroker. SNI and the certificate check use the host the URL names.
  const agent = target.tls
    ? new https.Agent({ keepAlive: true, lookup: guard.lookup, ca, cert, key: target.secrets.key, rejectUnauthorized })
    : new http.Agent({ keepAlive: true, lookup: guard.lookup });
  const endpoint = `${target.tls ? 'https' : 'http'}://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  return new SqsBrokerConnection(agent, endpoint, where, target, guard.timeoutMs);
};

/** A TCP connection to host:port through the guard's lookup, closed at once; rejects with why it failed. */
function reachable(host: string, port: number, guard: ConnectGuard, where: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host, port, lookup: guard.lookup, timeout: guard.timeoutMs });
    const fail = (err: NodeJS.ErrnoException) => {
      socket.destroy();
      reject(new Error(`sqs: ${sqsErrorReason(err, '', where)}`, { cause: err }));
    };
    socket.once('connect', () => (socket.destroy(), resolve()));
    socket.once('timeout', () => fail(Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' })));
    socket.once('error', fail);
  });
}

class SqsBrokerConnection implements BrokerConnection {
  private lost = false;
  /** One client per region (SigV4 signs for one), sharing the agent: one pooled endpoint and key serve them all. */
  private readonly clients = new Map<string, SQSClient>();
  private readonly handler: NodeHttpHandler;
  /** One batcher per queue (and region) with messages waiting or on the wire. */
  private readonly batchers = new Map<string, PublishBatcher<SendMessageBatchRequestEntry, string>>();

  constructor(
    private readonly agent: http.Agent,
    private readonly endpoint: string,
    private readonly where: string,
    private readonly target: BrokerTarget,
    private readonly timeoutMs: number,
  ) {
    this.handler = new NodeHttpHandler({
      [target.tls ? 'httpsAgent' : 'httpAgent']: agent,
      connectionTimeout: timeoutMs,
      requestTimeout: timeoutMs,
      throwOnRequestTimeout: true,
    });
  }

  get broken(): boolean {
    return this.lost;
  }

  private client(region: string): SQSClient {
    let client = this.clients.get(region);
    if (!client) {
      client = new SQSClient({
        region,
        endpoint: this.endpoint,
        // The endpoint is the URL's, checked by the guard: never one the SDK derives from QueueUrl or from
        // AWS_ENDPOINT_URL* variables and shared config files of the worker's own environment.
        useQueueUrlAsEndpoint: false,
        ignoreConfiguredEndpointUrls: true,
        credentials: {
          accessKeyId: this.target.secrets.username!,
          secretAccessKey: this.target.secrets.password!,
        },
        maxAttempts: 1, // the delivery core retries, on its own schedule
        requestHandler: this.handler,
      });
      this.clients.set(region, client);
    }
    return client;
  }

  async publish(message: BrokerMessage, to: BrokerTarget): Promise<string> {
    if (this.lost) throw new Error(`sqs: the connection to ${this.where} is closed`);
    const queueUrl = `${this.endpoint}/${to.path}`;
    const batchKey = `${to.options.region} ${queueUrl}`;
    let batcher = this.batchers.get(batchKey);
    if (!batcher) {
      const queue = to.path.slice(to.path.indexOf('/') + 1);
      const send = (entries: SendMessageBatchRequestEntry[]) =>
        this.together(this.client(to.options.region), queueUrl, queue, entries);
      // A batch SQS refused whole for anything but the way to it (a batch too long, say) goes again one by one.
      batcher = new PublishBatcher(send, { ...SQS_BATCH, splitOnFailure: () => !this.lost });
      this.batchers.set(batchKey, batcher);
    }
    const fifo = to.path.endsWith('.fifo');
    const entry: SendMessageBatchRequestEntry = {
      Id: '',
      MessageBody: message.body,
      MessageAttributes: messageAttributes(message),
      // FIFO: one plant's messages in order (its group), and SQS drops a webhook-id it had in 5 minutes.
      ...(fifo ? { MessageGroupId: message.key, MessageDeduplicationId: message.messageId } : {}),
    };
    try {
      return await batcher.publish(entry, entryBytes(entry));
    } finally {
      // Bounded by what is in use: a queue with nothing waiting nor on the wire is forgotten.
      if (batcher.idle) this.batchers.delete(batchKey);
    }
  }

  /** One SendMessageBatch: each entry's answer, or an Error for one SQS refused. */
  private async together(
    client: SQSClient,
    queueUrl: string,
    queue: string,
    entries: SendMessageBatchRequestEntry[],
  ): Promise<(string | Error)[]> {
    const numbered = entries.map((e, i) => ({ ...e, Id: String(i) }));
    try {
      const answer = await client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: numbered }), {
        abortSignal: AbortSignal.timeout(this.timeoutMs),
      });
      const ok = new Map((answer.Successful ?? []).map((s) => [s.Id, s]));
      const failed = new Map((answer.Failed ?? []).map((f) => [f.Id, f]));
      return numbered.map((e) => {
        const sent = ok.get(e.Id);
        if (sent) {
          const sequence = sent.SequenceNumber ? ` sequence ${sent.SequenceNumber}` : '';
          return `sqs accepted: queue ${queue} message id ${sent.MessageId}${sequence}`;
        }
        const f = failed.get(e.Id);
        const refused = {
          name: f?.Code ?? 'Unknown',
          message: f?.Message ?? 'SQS answered nothing for this message',
          $fault: f?.SenderFault === false ? ('server' as const) : ('client' as const),
          $metadata: { httpStatusCode: f?.SenderFault === false ? 500 : 400 },
        };
        return new Error(`sqs: ${sqsErrorReason(refused, queue, this.where)}`);
      });
    } catch (err) {
      if (isConnectionError(err as object)) this.lost = true; // the pool reconnects (and backs off) first
      throw new Error(`sqs: ${sqsErrorReason(err, queue, this.where)}`, { cause: err });
    }
  }

  async close(): Promise<void> {
    this.lost = true;
    for (const client of this.clients.values()) client.destroy();
    this.handler.destroy();
    this.agent.destroy();
  }
}

/**
 * SQS takes at most 10 attributes a message, named by letters, digits, "-", "_" and ".": the Standard Webhooks
 * headers a consumer verifies with each have one, and every other header (custom ones included, whatever their
 * names) is in one JSON object, `webhook-headers`. An empty value is left out (SQS refuses one).
 */
export function messageAttributes(message: BrokerMessage): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {};
  const rest: Record<string, string> = {};
  const own = new Set<string>(OWN_ATTRIBUTES);
  for (const [name, value] of Object.entries(message.headers)) {
    if (own.has(name.toLowerCase())) continue;
    rest[name] = value;
  }
  const values: Record<string, string | undefined> = {
    'webhook-id': message.messageId,
    'webhook-timestamp': message.headers['webhook-timestamp'],
    'webhook-signature': message.headers['webhook-signature'],
    [HEADERS_ATTRIBUTE]: Object.keys(rest).length > 0 ? JSON.stringify(rest) : undefined,
  };
  for (const [name, value] of Object.entries(values))
    if (value) attributes[name] = { DataType: 'String', StringValue: value };
  return attributes;
}

/** An entry's bytes as SQS counts them against a batch's bound: its body and its attributes' names and values. */
export function entryBytes(e: SendMessageBatchRequestEntry): number {
  let bytes = Buffer.byteLength(e.MessageBody ?? '');
  for (const [name, v] of Object.entries(e.MessageAttributes ?? {}))
    bytes += Buffer.byteLength(name) + Buffer.byteLength(v.DataType ?? '') + Buffer.byteLength(v.StringValue ?? '');
  return bytes;
}
