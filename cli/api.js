// @ts-check
// The admin API over HTTP, as the CLI uses it: problem+json errors become ApiError with the server's own words.

/** Exit codes a script can rely on. */
const EXIT = {
  ok: 0,
  /** The API refused the request (4xx): its problem detail is printed. */
  refused: 1,
  /** The command line itself was wrong (unknown command or option, missing argument, bad value). */
  usage: 2,
  /** The service could not be reached, answered 5xx, or is not configured (no URL or token). */
  unavailable: 3,
};

class ApiError extends Error {
  /**
   * @param {string} message
   * @param {number} exitCode
   * @param {unknown} [problem]
   */
  constructor(message, exitCode, problem) {
    super(message);
    this.exitCode = exitCode;
    this.problem = problem;
  }
}

/**
 * @param {{ url: string, token: string | undefined, tokenVariable: string }} options
 */
function client({ url, token, tokenVariable }) {
  /**
   * @param {string} method
   * @param {string} path
   * @param {unknown} [body]
   * @param {Record<string, string>} [extraHeaders]
   */
  return async function call(method, path, body, extraHeaders = {}) {
    if (!token) throw new ApiError(`set ${tokenVariable}`, EXIT.unavailable);
    let res;
    try {
      res = await fetch(new URL(path, url), {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json, application/problem+json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...extraHeaders,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      const cause =
        /** @type {{ cause?: { code?: string } }} */ (err).cause?.code ?? /** @type {Error} */ (err).message;
      throw new ApiError(
        `cannot reach Plant Store at ${url} (${cause}): is it running? (PLANT_STORE_URL)`,
        EXIT.unavailable,
      );
    }
    const text = await res.text();
    const parsed = text ? safeJson(text) : undefined;
    if (res.ok) return parsed;
    const p = /** @type {{ title?: string, detail?: string, errors?: { field: string, message: string }[] }} */ (
      parsed ?? {}
    );
    const fields = (p.errors ?? []).map((e) => `\n  ${e.field}: ${e.message}`).join('');
    throw new ApiError(
      `${res.status} ${p.title ?? res.statusText}${p.detail ? `: ${p.detail}` : ''}${fields}`,
      res.status >= 500 ? EXIT.unavailable : EXIT.refused,
      parsed,
    );
  };
}

/** @param {string} text */
function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

module.exports = { client, ApiError, EXIT };
