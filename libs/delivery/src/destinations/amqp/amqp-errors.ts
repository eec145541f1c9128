// What an AMQP broker answered, as a sentence a subscriber's operator can act on. amqplib reports a broker's
// close as `<code> (<NAME>) with message "<NAME> - <text>"`; the code and the text are what matter.

/** The reply code, the constant's name (underscored, as RabbitMQ writes it) and the broker's text. */
export function parseClose(message: string): { code: number; name: string; text: string } | null {
  const m = /(\d{3}) \(([A-Z-]+)\) with message "(.*)"$/s.exec(message);
  if (!m) return null;
  const name = m[2].replace(/-/g, '_');
  return { code: Number(m[1]), name, text: m[3].replace(new RegExp(`^${name} - `), '') };
}

const exchangeName = (exchange: string) => (exchange === '' ? 'the default exchange' : `exchange "${exchange}"`);

/** A message the broker returned (mandatory): nothing would have received it. */
export function returnSentence(replyCode: number, replyText: string, exchange: string, routingKey: string): string {
  if (replyCode === 312 && exchange === '')
    return `amqp: no queue is named "${routingKey}" (the default exchange routes by queue name) (${replyText})`;
  if (replyCode === 312)
    return `amqp: no queue is bound to exchange "${exchange}" with routing key "${routingKey}" (${replyText})`;
  return `amqp: the broker returned the message: ${replyText} (${replyCode})`;
}

/** The broker closed the channel, most often because of the publish: an exchange that is not there, say. */
export function channelCloseSentence(message: string, exchange: string): string {
  const close = parseClose(message);
  if (!close) return `amqp: the channel closed: ${message}`;
  const { code, name, text } = close;
  const noExchange = /no exchange '(.*)' in vhost '(.*)'/.exec(text);
  if (code === 404 && noExchange)
    return `amqp: the exchange "${noExchange[1]}" does not exist in vhost "${noExchange[2]}" (${name})`;
  if (code === 403) return `amqp: the user may not publish to ${exchangeName(exchange)}: ${text} (${name})`;
  if (code === 406) return `amqp: the broker refused the message: ${text} (${name})`;
  return `amqp: the broker closed the channel: ${text} (${name})`;
}

/** A connection that could not be opened or was lost; `where` is host:port. */
export function connectionSentence(
  err: { message?: string; code?: string | number },
  where: string,
  vhost: string,
): string {
  const message = err.message ?? String(err);
  const close = parseClose(message);
  if (close?.code === 403) return `amqp: ${where} refused the user name or password (${close.name})`;
  if (close?.code === 530) return `amqp: ${where} refused the vhost: ${close.text} (${close.name})`;
  // RabbitMQ refuses an unknown vhost (or one the user may not use) at connection.open, which amqplib reports
  // without the broker's text
  if (message.startsWith('Expected ConnectionOpenOk; got <ConnectionClose'))
    return `amqp: ${where} refused vhost "${vhost}": it does not exist or the user may not use it (NOT_ALLOWED)`;
  if (close) return `amqp: ${where} closed the connection: ${close.text} (${close.name})`;
  if (message === 'connect ETIMEDOUT') return `amqp: ${where} did not answer in time (ETIMEDOUT)`;
  if (message === 'Heartbeat timeout') return `amqp: ${where} stopped answering (heartbeat timeout)`;
  if (message === 'Unexpected close') return `amqp: ${where} closed the connection unexpectedly`;
  const code = typeof err.code === 'string' ? ` (${err.code})` : '';
  return `amqp: could not reach ${where}: ${message}${code}`;
}
