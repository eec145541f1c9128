// What SQS (or the way to it) answered, as a sentence a subscriber's operator can act on. The SDK throws a
// service error named after SQS's error code (QueueDoesNotExist, AccessDenied, …) with SQS's text and the HTTP
// status in $metadata, or a Node error (a `code` such as ECONNREFUSED) when no answer came, or a TimeoutError.

/** The parts of an SDK or Node error the sentences read. */
export interface SqsErrorLike {
  name?: string;
  message?: string;
  code?: string;
  $fault?: 'client' | 'server';
  $metadata?: { httpStatusCode?: number };
}

const NETWORK: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was closed',
  EPIPE: 'the connection was closed',
  ETIMEDOUT: 'did not answer in time',
  ENOTFOUND: 'its host has no address',
  EAI_AGAIN: 'its host could not be resolved (DNS)',
  EHOSTUNREACH: 'its host is unreachable',
  ENETUNREACH: 'its network is unreachable',
};

/**
 * The SDK wraps what is not an Error of its own realm (a Node error seen from a VM context: under jest) in a plain
 * Error, `AWS SDK error wrapper for Error: connect ECONNREFUSED …`, dropping its code: read them from the text.
 */
const WRAPPED = /^AWS SDK error wrapper for (?:Error: )?/;

function unwrapped(err: SqsErrorLike): SqsErrorLike {
  const message = err.message ?? '';
  if (!WRAPPED.test(message)) return err;
  const text = message.replace(WRAPPED, '');
  const code = Object.keys(NETWORK).find((c) => new RegExp(`\\b${c}\\b`).test(text));
  return { name: 'Error', message: text, code: code ?? 'ESDKWRAPPED' };
}

/** No answer from the endpoint (not one SQS gave): the connection is replaced before the next message. */
export function isConnectionError(error: SqsErrorLike): boolean {
  const err = unwrapped(error);
  if (err.$metadata?.httpStatusCode) return false;
  return err.name === 'TimeoutError' || err.name === 'AbortError' || typeof err.code === 'string';
}

/**
 * The sentence after `sqs: ` for an error of a SendMessage to `queue` (its name) at `where` (host:port). The SDK's
 * own retries are off: this is the one answer of this attempt.
 */
export function sqsErrorReason(err: unknown, queue: string, where: string): string {
  const e = unwrapped((err ?? {}) as SqsErrorLike);
  const name = e.name ?? 'Error';
  const text = (e.message ?? String(err)).trim();
  const status = e.$metadata?.httpStatusCode;
  if (e.code === 'ESSRFBLOCKED') return `refused by the SSRF guard: ${text}`;
  // Before the name: the SDK names a reset connection a TimeoutError too (its own retries would take it as one).
  if (!status && e.code && NETWORK[e.code]) {
    const what = NETWORK[e.code];
    return e.code === 'ETIMEDOUT' ? `${where} ${what} (ETIMEDOUT)` : `could not reach ${where}: ${what} (${e.code})`;
  }
  if (name === 'TimeoutError' || name === 'AbortError') return `${where} did not answer in time`;
  if (!status && e.code && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/.test(e.code))
    return `the TLS certificate of ${where} was not accepted: ${text} (${e.code})`;
  switch (name) {
    case 'QueueDoesNotExist':
    case 'AWS.SimpleQueueService.NonExistentQueue':
      return `no queue "${queue}" at ${where}: check the account id and queue name in the URL (QueueDoesNotExist)`;
    case 'InvalidClientTokenId':
    case 'UnrecognizedClientException':
      return `the access key id was refused: it does not exist or is not active (${name})`;
    case 'SignatureDoesNotMatch':
    case 'IncompleteSignature':
      return `the signature was refused: the secret access key does not match the key id, or the region is wrong (${name}: ${text})`;
    case 'AccessDenied':
    case 'AccessDeniedException':
      return `the key may not send to queue "${queue}" (sqs:SendMessage): ${text} (${name})`;
    case 'RequestExpired':
    case 'ExpiredToken':
      return `the request was refused as expired: is this host's clock right? (${name})`;
    case 'RequestThrottled':
    case 'ThrottlingException':
    case 'KmsThrottled':
      return `SQS is throttling the queue's sender: ${text} (${name})`;
    case 'QueueDeletedRecently':
      return `the queue "${queue}" was deleted and is being recreated; wait a minute (${name})`;
    case 'InvalidMessageContents':
      return `the queue refused the message's characters: ${text} (${name})`;
  }
  if (/^Kms/.test(name)) return `the queue's KMS key refused the message: ${text} (${name})`;
  if (text === 'MessageTooLong' || /MessageTooLong|too long/i.test(text))
    return `the message is larger than the queue's MaximumMessageSize (${name}: ${text})`;
  if (e.$fault === 'client' && status && status < 500 && (name === 'Unknown' || name === 'UnknownError' || !name))
    return `${where} answered HTTP ${status}, not as SQS does: is the URL's host an SQS endpoint?`;
  if (status && status >= 500) return `${where} failed to take the message: ${text} (${name}, HTTP ${status})`;
  if (status) return `the queue refused the message: ${text} (${name})`;
  if (e.code === 'ESDKWRAPPED') return `could not reach ${where}: ${text}`;
  return e.code ? `could not reach ${where}: ${text} (${e.code})` : `${text} (${name})`;
}
