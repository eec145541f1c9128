// The admin API as the CLI uses it: the typed client generated from the served document (@app/api-client, as the
// console uses it), with the CLI's exit codes; problem+json errors become ApiError with the server's own words.
import { createPlantStoreClient, type PlantStoreClient, type Problem } from '@app/api-client';
import type { operations } from '@app/contracts/openapi/shapes';

/** Exit codes a script can rely on. */
export const EXIT = {
  ok: 0,
  /** The API refused the request (4xx): its problem detail is printed. */
  refused: 1,
  /** The command line itself was wrong (unknown command or option, missing argument, bad value). */
  usage: 2,
  /** The service could not be reached, answered 5xx, or is not configured (no URL or token). */
  unavailable: 3,
} as const;

export class ApiError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    /** What the API answered (its problem+json), printed as it is with --json. */
    readonly problem?: unknown,
  ) {
    super(message);
  }
}

export interface Connection {
  url: string;
  token: string | undefined;
  /** Where the token should come from, to say so when it is missing. */
  tokenVariable: string;
}

const ACCEPT = 'application/json, application/problem+json';
/** Nothing waits without bound: a gateway that accepts the connection and never answers is given up on. */
const TIMEOUT_MS = 30_000;

/** What a call of the typed client resolves to: the data of a 2xx answer, or the error the API sent. */
export type Answer<T> = { data?: T; error?: unknown; response: Response };
/** The query parameters of an operation of the document (`Query<'listDeliveries'>['status']`). */
export type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;
/** Makes one call with the typed client; resolves to its data, or throws an ApiError. */
export type AdminApi = <T>(request: (client: PlantStoreClient) => Promise<Answer<T>>) => Promise<T>;

/** The admin API at `url` with `token`, through the typed client generated from the served document. */
export function adminApi({ url, token, tokenVariable }: Connection): AdminApi {
  let client: PlantStoreClient | undefined;
  return async function call<T>(request: (client: PlantStoreClient) => Promise<Answer<T>>): Promise<T> {
    if (!token) throw new ApiError(`set ${tokenVariable}`, EXIT.unavailable);
    try {
      client ??= typedClient(url, token);
    } catch (err) {
      throw unreachable(url, err); // not a URL
    }
    const { data, error, response } = await request(client);
    if (!response.ok) throw refusal(response, error);
    return data as T;
  };
}

function typedClient(url: string, token: string): PlantStoreClient {
  // Paths are resolved from the root of PLANT_STORE_URL, as they always were (`new URL('/subscriptions', url)`).
  const client = createPlantStoreClient(
    new URL('/', url).href,
    () => token,
    (input, init) =>
      withTimeout(input, init).catch((err) => {
        throw unreachable(url, err);
      }),
  );
  client.use({
    onRequest({ request }) {
      request.headers.set('accept', ACCEPT);
      return request;
    },
  });
  return client;
}

/**
 * POST /plant/webhook, as a sender would. It is a webhook of the document (what Plant Store receives), not one of
 * its paths, so the typed client has no method for it: a plain fetch, with the same errors as the admin calls.
 */
export async function postWebhook(
  { url, token, tokenVariable }: Connection,
  body: unknown,
  headers: Record<string, string>,
): Promise<Record<string, unknown>> {
  if (!token) throw new ApiError(`set ${tokenVariable}`, EXIT.unavailable);
  let res: Response;
  try {
    res = await withTimeout(new URL('/plant/webhook', url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, accept: ACCEPT, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  } catch (err) {
    throw unreachable(url, err);
  }
  const text = await res.text();
  const parsed = text ? safeJson(text) : undefined;
  if (!res.ok) throw refusal(res, parsed);
  return parsed as Record<string, unknown>;
}

const withTimeout = (input: string | URL | Request, init?: RequestInit) =>
  fetch(input, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });

const unreachable = (url: string, err: { cause?: { code?: string }; message?: string }) =>
  new ApiError(
    `cannot reach Plant Store at ${url} (${err.cause?.code ?? err.message}): is it running? (PLANT_STORE_URL)`,
    EXIT.unavailable,
  );

/** `<status> <title>: <detail>`, then one line per field the API named. */
function refusal(res: Response, body: unknown): ApiError {
  const p = (body && typeof body === 'object' ? body : {}) as Partial<Problem>;
  const fields = (p.errors ?? []).map((e) => `\n  ${e.field}: ${e.message}`).join('');
  return new ApiError(
    `${res.status} ${p.title ?? res.statusText}${p.detail ? `: ${p.detail}` : ''}${fields}`,
    res.status >= 500 ? EXIT.unavailable : EXIT.refused,
    body,
  );
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
