// The typed client of Plant Store's read and admin API, used by the console and the CLI. Its types are
// generated from the document the gateway serves (libs/contracts/src/openapi/schema.generated.ts); requests go
// through openapi-fetch, so a path, a parameter or a body that the document does not declare is a type error,
// not a 404 at run time.
import createClient, { type Client } from 'openapi-fetch';
import type { paths, Schema } from '@app/contracts/openapi/shapes';

export type { paths, Schema };
/** The operational event types an operational subscription may take (`eventTypes`). */
export { OPERATIONAL_EVENT_TYPES } from '@app/contracts/operational-events';
export type Problem = Schema<'Problem'>;
export type PlantStoreClient = Client<paths>;

/** An answer that was not 2xx, with the problem+json the API sent (it says what to do). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Partial<Problem>,
  ) {
    super(
      [
        problem.detail ?? problem.title ?? `HTTP ${status}`,
        ...(problem.errors ?? []).map((e) => `${e.field}: ${e.message}`),
      ].join('; '),
    );
  }
}

/**
 * A client for the API at `baseUrl` ('' in a page: the page's own origin). `token` is asked on every request, so a
 * sign-in or sign-out takes effect at once; a request that sets its own `authorization` keeps it.
 */
export function createPlantStoreClient(
  baseUrl: string,
  token: () => string | null | undefined,
  fetchImpl?: typeof fetch,
): PlantStoreClient {
  const client = createClient<paths>({ baseUrl, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
  client.use({
    onRequest({ request }) {
      const t = token();
      if (t && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${t}`);
      return request;
    },
  });
  return client;
}

/** The data of a 2xx answer; any other answer throws an ApiError carrying its problem+json. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) {
    const problem = error && typeof error === 'object' ? (error as Partial<Problem>) : {};
    throw new ApiError(response.status, problem);
  }
  return data as T;
}
