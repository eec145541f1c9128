import type { Schema } from './api';

/** A webhook as it went out: the exact body, and its headers (the subscriber's token hidden by the API). */
export type SentRequest = Schema<'SentRequest'>;
/** What came back, when anything did. */
export type Received = Schema<'SubscriptionTestResult'>['response'];

/** A request as it was sent and, when there was one, what came back. */
export function Exchange({ request, response }: { request: SentRequest; response?: Received }) {
  return (
    <div className="exchange">
      <section aria-label="Request sent">
        <h3>Sent</h3>
        {request.headers ? (
          <pre>
            {Object.entries(request.headers)
              .map(([k, v]) => `${k}: ${v}`)
              .join('\n')}
          </pre>
        ) : (
          <p>Not sent yet.</p>
        )}
        <pre>{request.body}</pre>
      </section>
      {response && (
        <section aria-label="Response received">
          <h3>Received</h3>
          <p>
            {response.status !== null ? `HTTP ${response.status}` : `No answer: ${response.error}`} after{' '}
            {response.latencyMs} ms
          </p>
          {response.body && <pre>{response.body}</pre>}
        </section>
      )}
    </div>
  );
}
