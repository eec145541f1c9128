import {
  CanActivate,
  ForbiddenException,
  HttpException,
  HttpStatus,
  NotFoundException,
  RequestMethod,
  Type,
} from '@nestjs/common';
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { sendProblem } from '@app/observability';

/**
 * A guard that decides from the request line and headers alone (a bearer token, a Content-Type), so it can run
 * before a byte of the body is read. Guards that would need the body must not set it.
 */
export interface HeadOnlyGuard extends CanActivate {
  readonly decidesFromHead: true;
}
const isHeadOnly = (guard: unknown): guard is HeadOnlyGuard => (guard as HeadOnlyGuard)?.decidesFromHead === true;

interface GuardedRoute {
  /** The controller and handler, for a Nest route; none for a route registered on Fastify directly. */
  controller?: Type;
  handler?: (...args: unknown[]) => unknown;
  guards: HeadOnlyGuard[];
}

/** A route registered on the Fastify instance directly (not a Nest controller's), with its head-only guards. */
export interface FastifyGuardedRoute {
  method: string;
  url: string;
  guards: Type<HeadOnlyGuard>[];
}

const checked = new WeakSet<FastifyRequest>();

/** Whether the route's guards already let this request through before its body was read. */
export const passedBeforeBody = (req: FastifyRequest): boolean => checked.has(req);

/** Whether the request says a body follows (Content-Length above 0, or any Transfer-Encoding). */
export const announcesBody = (req: FastifyRequest): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/**
 * Runs each route's head-only guards (the bearer-token check with its Passport strategy, and the Content-Type
 * check) in a Fastify onRequest hook, before the body is read, parsed or decoded: an unauthenticated request
 * costs a 401 and nothing more. Nest runs the same guards again before the handler (cheap: a hash compare);
 * this only moves the refusal earlier. A request that reaches no route is answered 404 here when it carries a
 * body, since Fastify would otherwise read (and decode) that body before its not-found handler. `direct`: routes
 * registered on Fastify itself (the webhook's hot path), whose guards run here only: their handler checks
 * passedBeforeBody, so one missing from this list fails closed.
 * A refusal of a request with a body closes the connection, so the unread body is never read either (but for a
 * small one past a share: dropsBodyToKeepConnection).
 */
export function authenticateBeforeBody(app: NestFastifyApplication, direct: FastifyGuardedRoute[] = []): void {
  const fastify = app.getHttpAdapter().getInstance();
  const routes = guardedRoutes(app);
  for (const { method, url, guards } of direct)
    routes.set(`${method} ${url}`, { guards: guards.map((g) => app.get(g, { strict: false })) });
  const registered = new Set<string>();
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) registered.add(`${method} ${route.url}`);
  });
  // A route this table names that Fastify never registered means the two compute paths differently: the
  // check would silently not run for it. Refuse to start instead.
  fastify.addHook('onReady', async () => {
    const missing = [...routes.keys()].filter((key) => !registered.has(key));
    if (missing.length > 0) throw new Error(`authenticateBeforeBody: no Fastify route for ${missing.join(', ')}`);
  });

  // Callback-style (see framing.ts): a route without guards, or a request refused at once, costs no promise.
  fastify.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const url = req.routeOptions.url;
    if (url === undefined) {
      if (announcesBody(req))
        refuse(req, reply, new NotFoundException(`Cannot ${req.method} ${req.url.split('?')[0]}`));
      return done();
    }
    const route = routes.get(`${req.method} ${url}`);
    if (!route) return done();
    runGuards(route, req, reply).then(() => done(), done);
  });
}

async function runGuards(route: GuardedRoute, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const context = new ExecutionContextHost([req, reply, undefined], route.controller ?? null, route.handler ?? null);
  context.setType('http');
  try {
    for (const guard of route.guards) {
      if (!(await guard.canActivate(context))) throw new ForbiddenException(); // as Nest answers a false guard
    }
  } catch (err) {
    refuse(req, reply, err);
    return;
  }
  checked.add(req);
}

function refuse(req: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  if (announcesBody(req) && !dropsBodyToKeepConnection(req, err)) reply.header('connection', 'close');
  sendProblem(reply, req, err);
  return reply;
}

/** The largest body a refusal past a share reads and drops so that its connection is kept. */
export const DROPPED_BODY_MAX_BYTES = 16 * 1024;

/**
 * Whether a refusal keeps the connection, reading the unread body and dropping it (Node's server does that for a
 * body nobody read once the response has ended): only for a caller past its share (429: its credentials were
 * found; a client looping on a rate it was told) whose body is small and of a known length. Closing made each
 * call of such a loop a new TCP connection, a cost of its own to the gateway and to every process on the machine
 * beyond the refusal (npm run bench:noisy-neighbour, docs/api.md "Shares"). Any other refusal before the body (no
 * credentials, not in scope, a large or chunked body) still closes it: that body is never read.
 */
export function dropsBodyToKeepConnection(req: Pick<FastifyRequest, 'headers'>, err: unknown): boolean {
  const length = req.headers['content-length'];
  return (
    err instanceof HttpException &&
    err.getStatus() === HttpStatus.TOO_MANY_REQUESTS &&
    req.headers['transfer-encoding'] === undefined &&
    typeof length === 'string' &&
    /^\d{1,9}$/.test(length) &&
    Number(length) <= DROPPED_BODY_MAX_BYTES
  );
}

/** `METHOD /path` (as Fastify names the route) → the controller's and the handler's head-only guards, in order. */
function guardedRoutes(app: NestFastifyApplication): Map<string, GuardedRoute> {
  const routes = new Map<string, GuardedRoute>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Type | null;
      if (!controller) continue;
      const prefixes = [Reflect.getMetadata(PATH_METADATA, controller) ?? ''].flat() as string[];
      const classGuards = (Reflect.getMetadata(GUARDS_METADATA, controller) ?? []) as Type[];
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = controller.prototype[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const paths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (paths === undefined || method === undefined) continue;
        const classes = [...classGuards, ...((Reflect.getMetadata(GUARDS_METADATA, handler) ?? []) as Type[])];
        const guards = classes.map((g) => app.get<unknown>(g, { strict: false })).filter(isHeadOnly);
        if (guards.length === 0) continue;
        for (const prefix of prefixes)
          for (const path of [paths].flat())
            routes.set(`${RequestMethod[method]} ${joinPath(prefix, path)}`, { controller, handler, guards });
      }
    }
  }
  return routes;
}

/** As Nest joins a controller's and a handler's path: one leading slash, none trailing, '/' for neither. */
const joinPath = (...parts: string[]) =>
  '/' +
  parts
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/');
