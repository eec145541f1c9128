import { isConnectionError, sqsErrorReason } from './sqs-errors';

// The errors as the SDK throws them (name, message, $fault, $metadata), as seen from ElasticMQ and as AWS
// documents its error codes for SendMessage and for every action (common errors).
const service = (name: string, message: string, status = 400) =>
  Object.assign(new Error(message), {
    name,
    $fault: (status >= 500 ? 'server' : 'client') as 'server' | 'client',
    $metadata: { httpStatusCode: status },
  });
const network = (code: string, message = `connect ${code} 10.0.0.1:443`) =>
  Object.assign(new Error(message), { code, $metadata: {} });
const where = 'sqs.eu-west-1.amazonaws.com:443';

describe(sqsErrorReason.name, () => {
  it('names a queue that is not there, and what to check', () => {
    expect(sqsErrorReason(service('QueueDoesNotExist', 'The specified queue does not exist.'), 'plants', where)).toBe(
      'no queue "plants" at sqs.eu-west-1.amazonaws.com:443: check the account id and queue name in the URL (QueueDoesNotExist)',
    );
  });

  it('tells a refused key id from a wrong secret or region, and from a key that may not send', () => {
    const tokenId = service('InvalidClientTokenId', 'The security token included in the request is invalid.', 403);
    expect(sqsErrorReason(tokenId, 'q', where)).toBe(
      'the access key id was refused: it does not exist or is not active (InvalidClientTokenId)',
    );
    const signature = service('SignatureDoesNotMatch', 'Credential should be scoped to a valid region.', 403);
    expect(sqsErrorReason(signature, 'q', where)).toBe(
      'the signature was refused: the secret access key does not match the key id, or the region is wrong ' +
        '(SignatureDoesNotMatch: Credential should be scoped to a valid region.)',
    );
    const denied = service('AccessDenied', 'Access to the resource https://sqs… is denied.', 403);
    expect(sqsErrorReason(denied, 'plants', where)).toBe(
      'the key may not send to queue "plants" (sqs:SendMessage): Access to the resource https://sqs… is denied. (AccessDenied)',
    );
  });

  it("says what the queue refused in the message: a FIFO's missing group, a size, the KMS key, throttling", () => {
    expect(
      sqsErrorReason(service('MissingParameter', 'The request must contain the parameter MessageGroupId.'), 'q', where),
    ).toBe('the queue refused the message: The request must contain the parameter MessageGroupId. (MissingParameter)');
    expect(sqsErrorReason(service('InvalidAttributeValue', 'MessageTooLong'), 'q', where)).toBe(
      "the message is larger than the queue's MaximumMessageSize (InvalidAttributeValue: MessageTooLong)",
    );
    expect(
      sqsErrorReason(service('KmsAccessDenied', 'The ciphertext refers to a key that does not exist.'), 'q', where),
    ).toBe(
      "the queue's KMS key refused the message: The ciphertext refers to a key that does not exist. (KmsAccessDenied)",
    );
    expect(sqsErrorReason(service('RequestThrottled', 'Rate exceeded'), 'q', where)).toBe(
      "SQS is throttling the queue's sender: Rate exceeded (RequestThrottled)",
    );
  });

  it('says when SQS failed, and when the host did not answer as SQS does', () => {
    expect(sqsErrorReason(service('InternalError', 'We encountered an internal error.', 500), 'q', where)).toBe(
      'sqs.eu-west-1.amazonaws.com:443 failed to take the message: We encountered an internal error. (InternalError, HTTP 500)',
    );
    expect(sqsErrorReason(service('Unknown', 'UnknownError', 404), 'q', 'example.com:443')).toBe(
      "example.com:443 answered HTTP 404, not as SQS does: is the URL's host an SQS endpoint?",
    );
  });

  it('says why no answer came: refused, closed, timed out, blocked by the SSRF guard', () => {
    expect(sqsErrorReason(network('ECONNREFUSED'), 'q', 'mq:9324')).toBe(
      'could not reach mq:9324: the connection was refused (ECONNREFUSED)',
    );
    // As the SDK throws a reset connection: named TimeoutError, with the socket's code.
    const reset = Object.assign(network('ECONNRESET', 'socket hang up'), { name: 'TimeoutError' });
    expect(sqsErrorReason(reset, 'q', 'mq:9324')).toBe(
      'could not reach mq:9324: the connection was closed (ECONNRESET)',
    );
    // A Node error from another realm (a VM context: jest), as the SDK wraps it, its code dropped.
    const wrapped = new Error('AWS SDK error wrapper for Error: connect ECONNREFUSED 127.0.0.1:9324');
    expect(sqsErrorReason(wrapped, 'q', 'mq:9324')).toBe(
      'could not reach mq:9324: the connection was refused (ECONNREFUSED)',
    );
    expect(isConnectionError(wrapped)).toBe(true);
    const timeout = Object.assign(new Error('Connection timed out after 3000 ms'), { name: 'TimeoutError' });
    expect(sqsErrorReason(timeout, 'q', 'mq:9324')).toBe('mq:9324 did not answer in time');
    const blocked = Object.assign(new Error('mq resolves to 10.0.0.1, a private address'), { code: 'ESSRFBLOCKED' });
    expect(sqsErrorReason(blocked, 'q', 'mq:9324')).toBe(
      'refused by the SSRF guard: mq resolves to 10.0.0.1, a private address',
    );
  });
});

describe(isConnectionError.name, () => {
  it('is true when no answer came (the connection is replaced), false for an answer of SQS', () => {
    expect(isConnectionError(network('ECONNREFUSED'))).toBe(true);
    expect(isConnectionError({ name: 'TimeoutError' })).toBe(true);
    expect(isConnectionError(service('QueueDoesNotExist', 'x'))).toBe(false);
    expect(isConnectionError(service('InternalError', 'x', 500))).toBe(false);
  });
});
