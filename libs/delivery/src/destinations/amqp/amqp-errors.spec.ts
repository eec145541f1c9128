import { channelCloseSentence, connectionSentence, parseClose, returnSentence } from './amqp-errors';

describe(parseClose.name, () => {
  it("reads amqplib's close message", () => {
    expect(
      parseClose(`Channel closed by server: 404 (NOT-FOUND) with message "NOT_FOUND - no exchange 'x' in vhost '/'"`),
    ).toEqual({ code: 404, name: 'NOT_FOUND', text: "no exchange 'x' in vhost '/'" });
    expect(parseClose('connect ECONNREFUSED 127.0.0.1:5672')).toBeNull();
  });
});

describe(returnSentence.name, () => {
  it('names the exchange and routing key nothing is bound to', () => {
    expect(returnSentence(312, 'NO_ROUTE', 'x', 'k')).toBe(
      'amqp: no queue is bound to exchange "x" with routing key "k" (NO_ROUTE)',
    );
  });

  it('says the default exchange routes by queue name', () => {
    expect(returnSentence(312, 'NO_ROUTE', '', 'plants')).toBe(
      'amqp: no queue is named "plants" (the default exchange routes by queue name) (NO_ROUTE)',
    );
  });
});

describe(channelCloseSentence.name, () => {
  it('names an exchange that does not exist', () => {
    const message = `Channel closed by server: 404 (NOT-FOUND) with message "NOT_FOUND - no exchange 'orders' in vhost 'shop'"`;
    expect(channelCloseSentence(message, 'orders')).toBe(
      'amqp: the exchange "orders" does not exist in vhost "shop" (NOT_FOUND)',
    );
  });

  it('says when the user may not publish', () => {
    const message = `Channel closed by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - write access to exchange 'x' in vhost '/' refused for user 'u'"`;
    expect(channelCloseSentence(message, 'x')).toBe(
      `amqp: the user may not publish to exchange "x": write access to exchange 'x' in vhost '/' refused for user 'u' (ACCESS_REFUSED)`,
    );
  });
});

describe(connectionSentence.name, () => {
  it('tells a refused login from a refused vhost and an unreachable host', () => {
    const login = `Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile."`;
    expect(connectionSentence(new Error(login), 'mq:5672', '/')).toBe(
      'amqp: mq:5672 refused the user name or password (ACCESS_REFUSED)',
    );
    expect(
      connectionSentence(new Error('Expected ConnectionOpenOk; got <ConnectionClose channel:0>'), 'mq:5672', 'v'),
    ).toBe('amqp: mq:5672 refused vhost "v": it does not exist or the user may not use it (NOT_ALLOWED)');
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:5672'), { code: 'ECONNREFUSED' });
    expect(connectionSentence(refused, 'mq:5672', '/')).toBe(
      'amqp: could not reach mq:5672: connect ECONNREFUSED 10.0.0.1:5672 (ECONNREFUSED)',
    );
  });

  it('says when the broker closed an open connection', () => {
    const forced = `Connection closed: 320 (CONNECTION-FORCED) with message "CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'"`;
    expect(connectionSentence(new Error(forced), 'mq:5672', '/')).toBe(
      `amqp: mq:5672 closed the connection: broker forced connection closure with reason 'shutdown' (CONNECTION_FORCED)`,
    );
  });
});
