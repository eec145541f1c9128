import { connect, ConnectionOptions } from 'nats';

/** A message as the destination suites compare them: its webhook-id and body. */
export interface ReadMessage {
  id: string;
  body: string;
}

/**
 * A JetStream stream capturing `<name>.>` on the NATS at `servers` (file storage, the default), read whole by
 * sequence: what a destination `nats://…/<name>.new` published, each message once per publish (a duplicate
 * shows twice). `close` deletes the stream.
 */
export async function jetStreamReader(name: string, options: ConnectionOptions) {
  const nc = await connect(options);
  const jsm = await nc.jetstreamManager();
  const stream = name.replace(/-/g, '_').toUpperCase();
  await jsm.streams.add({ name: stream, subjects: [`${name}.>`] });
  const read = async () => {
    const out: ReadMessage[] = [];
    const last = (await jsm.streams.info(stream)).state.last_seq;
    for (let seq = 1; seq <= last; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq });
      out.push({ id: m.header.get('webhook-id'), body: m.string() });
    }
    return out;
  };
  return { subject: `${name}.new`, read, close: async () => (await jsm.streams.delete(stream), nc.close()) };
}
