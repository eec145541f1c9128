import { Pool, PoolClient } from 'pg';
import { SUBSCRIPTIONS_SQL } from './subscription.repository';

const SUBSCRIPTIONS_VERSION = SUBSCRIPTIONS_SQL.statement('subscriptions-version');
const LISTEN_SUBSCRIPTIONS = SUBSCRIPTIONS_SQL.statement('listen-subscriptions');

/** The channel migration 23's trigger notifies, with the new version, on every change to a subscription. */
export const SUBSCRIPTIONS_CHANNEL = 'plant_store_subscriptions';

/**
 * A worker's line to the subscriptions' version: one connection of its own that LISTENs for changes and answers
 * polls of the version (so a poll never waits behind the pool's statements). A lost connection is opened again,
 * LISTEN included, by the next poll; a notification missed meanwhile is made up by that poll.
 */
export class SubscriptionChanges {
  private client: PoolClient | null = null;
  private connecting: Promise<PoolClient> | null = null;

  /** `pool`: a pool of one connection for this alone (it is held, never returned). */
  constructor(
    private readonly pool: Pool,
    private readonly onNotification: (version: string) => void,
  ) {}

  /** The stored version (SUBSCRIPTIONS_VERSION). */
  async poll(): Promise<string> {
    const client = await this.connection();
    try {
      const { rows } = await client.query<{ version: string }>(SUBSCRIPTIONS_VERSION.text);
      return rows[0].version;
    } catch (err) {
      this.drop(client, err as Error);
      throw err;
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    client?.release(true);
    await this.pool.end();
  }

  private connection(): Promise<PoolClient> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async open(): Promise<PoolClient> {
    const client = await this.pool.connect();
    client.on('notification', (n) => {
      if (n.channel === SUBSCRIPTIONS_CHANNEL) this.onNotification(n.payload ?? '');
    });
    client.on('error', (err) => this.drop(client, err));
    client.on('end', () => this.drop(client));
    try {
      await client.query(LISTEN_SUBSCRIPTIONS.text);
    } catch (err) {
      client.release(true);
      throw err;
    }
    this.client = client;
    return client;
  }

  private drop(client: PoolClient, err?: Error) {
    if (this.client !== client) return;
    this.client = null;
    client.release(err ?? true);
  }
}
