import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, GatewayConfig } from '@app/config';
import {
  OPERATIONAL_EVENT_TYPES,
  operationalExample,
  SubscriptionCreateBody,
  SubscriptionFilter,
  SubscriptionTestBody,
  SubscriptionUpdateBody,
} from '@app/contracts';
import {
  customHeaderProblems,
  generateKeyPair,
  generateSecret,
  isValidSecret,
  mergeCustomHeaders,
  SignatureScheme,
  SUBSCRIBERS_CONFIRM_WINDOW_MS,
  urlOriginAndPath,
  withoutCredentials,
} from '@app/delivery';
import { invalidField, invalidFields, ProblemException } from '@app/observability';
import {
  AuditRepository,
  CustomHeaders,
  SendableSubscription,
  SubscriptionChange,
  SubscriptionKind,
  SubscriptionRepository,
  SubscriptionRow,
} from '@app/persistence';
import {
  mapIssued,
  mapSubscription,
  SubscriptionDto,
  SubscriptionWithSecretDto,
  updateAudit,
} from './subscription.dto';
import { assertPortalMayChange, LeftBehind, leftBehindByPortal, operatorDisabled } from './portal-changes';
import { SubscriptionTester, SubscriptionTestResultDto } from './subscription-tester';
import { CheckedDestination, checkDestination, DestinationRules, destinationWithoutUrl } from './destination-check';
import { topicNamesFrom } from '@app/kafka';

/** What a test send carries when the operator gives no plant. */
export const SAMPLE_PLANT = { id: 0, name: 'Test plant from Plant Store', tag: 'test' };

/** How long a rotated-out secret (or key pair) keeps signing next to the new one. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

/** A new signing credential: a `whsec_` secret, or an Ed25519 key pair whose public half is published. */
function newCredential(scheme: SignatureScheme, given?: string): { secret: string; publicKey: string | null } {
  if (scheme === 'symmetric') return { secret: given ?? generateSecret(), publicKey: null };
  const pair = generateKeyPair();
  return { secret: pair.secretKey, publicKey: pair.publicKey };
}

@Injectable()
export class SubscriptionsService {
  constructor(
    private readonly subscriptions: SubscriptionRepository,
    private readonly audit: AuditRepository,
    private readonly tester: SubscriptionTester,
    @Inject(APP_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async create(body: SubscriptionCreateBody, actor: string): Promise<SubscriptionWithSecretDto> {
    const where = await checkDestination(body.url, body.destination, body.token !== undefined, this.rules);
    const signature = body.signature ?? 'symmetric';
    if (body.secret !== undefined && signature === 'asymmetric')
      throw invalidField('secret', 'is for symmetric signatures only: an asymmetric key pair is generated for you');
    if (body.secret !== undefined && !isValidSecret(body.secret))
      throw invalidField('secret', 'must be whsec_ followed by 24 to 64 base64-encoded bytes');
    const kind = body.kind ?? 'plants';
    checkKind(kind, body);
    if (body.filter) checkFilter(body.filter);
    const headers = { plain: body.headers ?? {}, secret: body.secretHeaders ?? {} };
    checkHeaders(headers, body.token !== undefined);
    const credential = newCredential(signature, body.secret);
    const issued = await this.subscriptions.create({
      url: where.url,
      destination: where.destination,
      token: body.token ?? null,
      secret: credential.secret,
      signature,
      publicKey: credential.publicKey,
      description: body.description ?? null,
      filter: body.filter ?? {},
      kind,
      eventTypes: body.eventTypes ?? null,
      maxDeliveriesPerSecond: body.maxDeliveriesPerSecond ?? null,
      maxConcurrency: body.maxConcurrency ?? null,
      headers,
    });
    await this.audit.record({
      actor,
      action: 'subscription.created',
      subscription_id: issued.row.id,
      details: {
        url: urlOriginAndPath(body.url),
        signature,
        token: body.token !== undefined ? 'set' : 'none',
        ...(body.filter ? { filter: body.filter } : {}),
        ...(kind === 'operational' ? { kind, eventTypes: body.eventTypes ?? 'all' } : {}),
        ...(body.maxDeliveriesPerSecond != null ? { maxDeliveriesPerSecond: body.maxDeliveriesPerSecond } : {}),
        ...(body.maxConcurrency != null ? { maxConcurrency: body.maxConcurrency } : {}),
        // Names only: a header's value may be a credential.
        ...(body.headers ? { headers: Object.keys(body.headers).sort() } : {}),
        ...(body.secretHeaders ? { secretHeaders: Object.keys(body.secretHeaders).sort() } : {}),
      },
    });
    return mapIssued(issued);
  }

  async list(wholeUrls: boolean): Promise<SubscriptionDto[]> {
    return (await this.subscriptions.list()).map((row) => mapSubscription(row, wholeUrls));
  }

  async get(id: string, wholeUrls: boolean): Promise<SubscriptionDto> {
    return mapSubscription(found(await this.subscriptions.findById(id), id), wholeUrls);
  }

  /** `byPortal`: a subscriber through its portal link, within what the operator allowed (portal-changes.ts). */
  async update(id: string, body: SubscriptionUpdateBody, actor: string, byPortal = false): Promise<SubscriptionDto> {
    if (byPortal) assertPortalMayChange(body);
    const where = body.url !== undefined ? await this.destinationChange(id, body) : undefined;
    if (body.destination !== undefined && !where) throw destinationWithoutUrl();
    if (body.filter || body.eventTypes !== undefined)
      checkKind(found(await this.subscriptions.findById(id), id).kind, body);
    if (body.filter) checkFilter(body.filter);
    const { headers: _plain, secretHeaders: _secret, destination: _destination, ...rest } = body;
    const { credentials, leftBehind } = await this.credentialsChange(id, body, byPortal);
    const change: SubscriptionChange = { ...rest, ...credentials, ...where, byPortal };
    const updated = await this.subscriptions.update(id, change);
    if (!updated) throw whyUnchanged(found(await this.subscriptions.findById(id), id), byPortal);
    const audit = updateAudit(body);
    if (leftBehind) audit.details = { ...audit.details, leftBehindWithTheOldUrl: leftBehind };
    await this.audit.record({ actor, subscription_id: id, ...audit });
    return mapSubscription(updated);
  }

  /**
   * The headers and token a change writes: whole, as it leaves them, checked together, for the URL read here (if it
   * changes meanwhile, the statement changes nothing: credentialsFor). A portal link's change of the URL leaves the
   * operator's secret headers and token behind (portal-changes.ts).
   */
  private async credentialsChange(
    id: string,
    body: SubscriptionUpdateBody,
    byPortal: boolean,
  ): Promise<{
    credentials: Pick<SubscriptionChange, 'headers' | 'token' | 'credentialsFor'>;
    leftBehind: LeftBehind | null;
  }> {
    const { headers: plain, secretHeaders: secret } = body;
    if (plain === undefined && secret === undefined && body.token === undefined && !(byPortal && body.url))
      return { credentials: {}, leftBehind: null };
    const current = found(await this.subscriptions.findById(id), id);
    const headers = this.subscriptions.headersOf(current);
    const leftBehind = byPortal ? leftBehindByPortal(current, body) : null;
    const credentials: Pick<SubscriptionChange, 'headers' | 'token' | 'credentialsFor'> = {};
    if (body.token !== undefined || leftBehind) credentials.token = body.token ?? null;
    if (leftBehind) headers.secret = {};
    const next = mergeCustomHeaders(headers, { plain, secret });
    checkHeaders(next, credentials.token !== undefined ? credentials.token !== null : current.token !== null);
    if (plain !== undefined || secret !== undefined || leftBehind) credentials.headers = next; // else: a token, checked
    if (credentials.headers || credentials.token !== undefined) credentials.credentialsFor = current.url;
    return { credentials, leftBehind };
  }

  async delete(id: string, actor: string): Promise<void> {
    const existing = found(await this.subscriptions.findById(id), id);
    if (!(await this.subscriptions.delete(id))) throw subscriptionNotFound(id);
    // Each worker sends only while its copy of the subscriptions was confirmed current within this window: past
    // it, none can still send to this one (see SubscriberCache), so the 204 means nothing more goes to it.
    await new Promise((r) => setTimeout(r, SUBSCRIBERS_CONFIRM_WINDOW_MS));
    await this.audit.record({
      actor,
      action: 'subscription.deleted',
      subscription_id: id,
      details: { url: urlOriginAndPath(existing.url) },
    });
  }

  async rotateSecret(id: string, actor: string): Promise<SubscriptionWithSecretDto> {
    const current = found(await this.subscriptions.findById(id), id);
    const credential = newCredential(current.signature);
    const issued = await this.subscriptions.rotateSecret(
      id,
      credential.secret,
      credential.publicKey,
      SECRET_OVERLAP_MS,
    );
    if (!issued) throw subscriptionNotFound(id);
    await this.audit.record({
      actor,
      action: 'subscription.secret_rotated',
      subscription_id: id,
      details: { signature: current.signature, overlapHours: SECRET_OVERLAP_MS / 3_600_000 },
    });
    return mapIssued(issued);
  }

  /** Sends whether or not it is enabled: testing a disabled subscriber before enabling it is the point. */
  async test(id: string, body: SubscriptionTestBody, actor: string): Promise<SubscriptionTestResultDto> {
    const subscription = await this.subscriptions.findSendable(id);
    if (!subscription) throw subscriptionNotFound(id);
    const result = await this.tester.send(subscription, testBody(subscription, body));
    await this.audit.record({
      actor,
      action: 'subscription.tested',
      subscription_id: id,
      details: { status: result.response.status, error: result.response.error },
    });
    return result;
  }

  /** A new URL and its destination, checked with the token the subscription will have (none for a broker). */
  /**
   * A new URL and its destination, checked with the token the subscription will have. The URL it has already,
   * given again without credentials or settings (a form saving every field), leaves them as they are: only a new
   * address, or new credentials or settings, replaces them.
   */
  private async destinationChange(
    id: string,
    body: SubscriptionUpdateBody,
  ): Promise<CheckedDestination | { url: string }> {
    const current = found(await this.subscriptions.findById(id), id);
    const hasToken = body.token !== undefined ? body.token !== null : current.token !== null;
    const checked = await checkDestination(body.url!, body.destination, hasToken, this.rules);
    const unchanged =
      checked.url === current.url && body.destination === undefined && withoutCredentials(body.url!) === body.url;
    return unchanged ? { url: checked.url } : checked;
  }

  private get rules(): DestinationRules {
    return {
      allowPrivateNetworks: this.config.DELIVERY_ALLOW_PRIVATE_NETWORKS,
      ownBrokers: this.config.KAFKA_BROKERS,
      ownTopic: topicNamesFrom(this.config).plantCreated,
    };
  }
}

/**
 * A subscription of one kind takes only its own settings: a plant filter means nothing to an operational
 * subscription, nor event types to a plant one. 422 naming the field, rather than a setting silently ignored.
 */
function checkKind(kind: SubscriptionKind, body: { filter?: SubscriptionFilter; eventTypes?: unknown }) {
  if (kind === 'operational' && body.filter && Object.keys(body.filter).length > 0)
    throw invalidField('filter', 'is for plant subscriptions: an operational subscription receives no plants');
  if (kind === 'plants' && body.eventTypes !== undefined && body.eventTypes !== null)
    throw invalidField('eventTypes', 'is for operational subscriptions (kind: operational): this one receives plants');
}

/**
 * What a test send carries: a plant (given, or SAMPLE_PLANT) to a plant subscription; to an operational one, the
 * example of an event type it receives, as `{type, timestamp, data}`.
 */
function testBody(s: SendableSubscription, body: SubscriptionTestBody): object {
  if (s.kind === 'plants') {
    if (body.eventType) throw invalidField('eventType', 'is for operational subscriptions: send a `plant` instead');
    return body.plant ?? SAMPLE_PLANT;
  }
  if (body.plant) throw invalidField('plant', 'an operational subscription receives no plants: send an `eventType`');
  const type = body.eventType ?? s.eventTypes?.[0] ?? OPERATIONAL_EVENT_TYPES[0];
  return { type, timestamp: new Date().toISOString(), data: operationalExample(type) };
}

/** What the schema cannot say: a range must not be empty. */
function checkFilter(filter: SubscriptionFilter) {
  const { min, max } = filter.plantIds ?? {};
  if (min !== undefined && max !== undefined && min > max)
    throw invalidField('filter.plantIds', `min (${min}) is above max (${max}): no plant would ever match`);
}

/** What the schema cannot say of custom headers: reserved names, a CR or LF, the bounds (see custom-headers). */
function checkHeaders(headers: CustomHeaders, hasToken: boolean) {
  const problems = customHeaderProblems(headers, hasToken);
  if (problems.length > 0) throw invalidFields(problems);
}

export const subscriptionNotFound = (id: string) => ProblemException.of('notFound', `No subscription ${id}`);

/**
 * Why an update changed no row of a subscription that is there: a portal link's enable, which the operator's disable
 * holds; else it changed meanwhile (its URL since the headers were read, or the operator enabled it), and the change
 * is to be sent again.
 */
function whyUnchanged(row: SubscriptionRow, byPortal: boolean): ProblemException {
  if (byPortal && !row.enabled && row.disabled_by_operator) return operatorDisabled(row);
  return ProblemException.of(
    'conflict',
    `Subscription ${row.id} changed while this change was being made: read it again and repeat the change`,
  );
}

function found(row: SubscriptionRow | null, id: string): SubscriptionRow {
  if (row === null) throw subscriptionNotFound(id);
  return row;
}
