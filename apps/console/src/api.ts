// The admin API, called with the operator's token, kept for this tab only (sessionStorage): no cookie, no
// session the API would have to trust, no new privileged path.
const KEY = 'plant-store-admin-token';

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (t: string) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

export interface Problem {
  title?: string;
  detail?: string;
  errors?: { field: string; message: string }[];
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(
      [
        problem.detail ?? problem.title ?? `HTTP ${status}`,
        ...(problem.errors ?? []).map((e) => `${e.field}: ${e.message}`),
      ].join('; '),
    );
  }
}

export async function api<T>(method: string, path: string, body?: unknown, as = token.get()): Promise<T> {
  const res = await fetch(path, {
    method,
    headers: {
      authorization: `Bearer ${as ?? ''}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : undefined;
  if (!res.ok) throw new ApiError(res.status, parsed ?? {});
  return parsed as T;
}

export const query = (q: Record<string, string | undefined>) => {
  const s = new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => Boolean(e[1]))).toString();
  return s ? `?${s}` : '';
};

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
