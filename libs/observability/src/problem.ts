import { HttpException } from '@nestjs/common';

/** RFC 9457 problem details. `type` is stable per kind of error, so clients can switch on it. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  errors?: { field: string; message: string }[];
  [extension: string]: unknown;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
const BASE = 'https://plant.store/problems/';

/** Every kind of error the HTTP APIs answer with, and its status. */
export const ProblemKind = {
  malformedJson: { slug: 'malformed-json', title: 'Malformed JSON body', status: 400 },
  badRequest: { slug: 'bad-request', title: 'Bad request', status: 400 },
  nestingTooDeep: { slug: 'nesting-too-deep', title: 'The JSON body nests too deeply', status: 400 },
  unauthorized: { slug: 'unauthorized', title: 'Missing or invalid bearer token', status: 401 },
  forbidden: { slug: 'forbidden', title: 'Forbidden', status: 403 },
  notFound: { slug: 'not-found', title: 'Not found', status: 404 },
  methodNotAllowed: { slug: 'method-not-allowed', title: 'Method not allowed', status: 405 },
  conflict: { slug: 'conflict', title: 'Conflict', status: 409 },
  payloadTooLarge: { slug: 'payload-too-large', title: 'Payload too large', status: 413 },
  unsupportedMediaType: { slug: 'unsupported-media-type', title: 'Unsupported media type', status: 415 },
  validation: { slug: 'validation-failed', title: 'The request does not match the schema', status: 422 },
  tooManyRequests: { slug: 'too-many-requests', title: 'Too many requests', status: 429 },
  unavailable: { slug: 'unavailable', title: 'Service unavailable', status: 503 },
  internal: { slug: 'internal', title: 'Internal error', status: 500 },
  notImplemented: { slug: 'not-implemented', title: 'Not implemented', status: 501 },
  versionNotSupported: { slug: 'http-version-not-supported', title: 'HTTP version not supported', status: 505 },
} as const;
export type ProblemKindName = keyof typeof ProblemKind;

export function problemOf(kind: ProblemKindName, detail?: string, extra: Partial<Problem> = {}): Problem {
  const k = ProblemKind[kind];
  return { type: BASE + k.slug, title: k.title, status: k.status, ...(detail ? { detail } : {}), ...extra };
}

/** Throw from anywhere in a request; the filter renders it as application/problem+json. */
export class ProblemException extends HttpException {
  constructor(
    readonly problem: Problem,
    readonly headers: Record<string, string> = {},
  ) {
    super(problem, problem.status);
  }

  static of(kind: ProblemKindName, detail?: string, extra?: Partial<Problem>, headers?: Record<string, string>) {
    return new ProblemException(problemOf(kind, detail, extra), headers);
  }
}

const byStatus = new Map<number, ProblemKindName>(
  (Object.keys(ProblemKind) as ProblemKindName[]).map((name) => [ProblemKind[name].status, name]),
);
byStatus.set(400, 'badRequest');

/** Any status as a problem, for errors that did not come from our own code (framework, parser). */
export function problemForStatus(status: number, detail?: string): Problem {
  const kind = byStatus.get(status);
  if (kind) return problemOf(kind, detail);
  return { type: 'about:blank', title: 'HTTP ' + status, status, ...(detail ? { detail } : {}) };
}

/** 422 naming each offending field: bodies, path and query parameters alike. */
export function invalidFields(errors: { field: string; message: string }[]): ProblemException {
  return ProblemException.of('validation', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors });
}

/** 422 naming one field. */
export const invalidField = (field: string, message: string) => invalidFields([{ field, message }]);
