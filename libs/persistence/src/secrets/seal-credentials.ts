import { Pool } from 'pg';
import { SecretBox, subscriptionContext } from './secret-box';

const COLUMNS = ['token', 'secret', 'previous_secret'] as const;

/**
 * Brings every stored credential under the current SECRETS_KEY: seals a plain one (rows written before
 * migration 6) and re-seals one sealed under a previous key (after a rotation). Idempotent, in one transaction
 * with the rows locked, so replicas starting together do it once. A credential no configured key opens stops
 * it, naming the key: better a worker that does not start than one that signs with garbage.
 */
export async function sealCredentials(pool: Pool, box: SecretBox): Promise<{ sealed: number; resealed: number }> {
  const client = await pool.connect();
  let sealed = 0;
  let resealed = 0;
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<Record<(typeof COLUMNS)[number] | 'id', string | null>>(
      'SELECT id, token, secret, previous_secret FROM subscriptions ORDER BY id FOR UPDATE',
    );
    for (const row of rows) {
      const context = subscriptionContext(row.id!);
      const next: Record<string, string | null> = {};
      for (const column of COLUMNS) {
        const value = row[column];
        if (value === null) continue;
        if (!SecretBox.isSealed(value)) {
          next[column] = box.seal(value, context);
          sealed++;
        } else if (SecretBox.keyIdOf(value) !== box.currentKeyId) {
          next[column] = box.seal(box.open(value, context), context);
          resealed++;
        } else box.open(value, context); // proves the key still opens it
      }
      if (Object.keys(next).length === 0) continue;
      const sets = Object.keys(next).map((c, i) => `${c} = $${i + 2}`);
      await client.query(`UPDATE subscriptions SET ${sets.join(', ')} WHERE id = $1`, [row.id, ...Object.values(next)]);
    }
    await client.query('COMMIT');
    return { sealed, resealed };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
