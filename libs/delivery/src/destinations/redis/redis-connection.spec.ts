import { redisErrorReason } from './redis-connection';

describe(redisErrorReason.name, () => {
  const where = 'redis.example:6379';

  it('says the key is not a stream on WRONGTYPE', () => {
    const err = new Error('WRONGTYPE Operation against a key holding the wrong kind of value');
    expect(redisErrorReason(err, 'plants', where)).toBe(
      'the key "plants" holds a value that is not a stream; choose another key',
    );
  });

  it('names a refused login, a read-only replica and a full server', () => {
    const wrongpass = new Error('WRONGPASS invalid username-password pair or user is disabled.');
    expect(redisErrorReason(wrongpass, 'plants', where)).toBe('the user name or password was refused');
    expect(redisErrorReason(new Error("READONLY You can't write against a read only replica."), 'k', where)).toBe(
      'redis.example:6379 is a read-only replica; point the URL at the primary',
    );
    expect(redisErrorReason(new Error("OOM command not allowed when used memory > 'maxmemory'."), 'k', where)).toBe(
      'redis.example:6379 is out of memory (maxmemory) and refused the write',
    );
  });

  it("says ioredis's closed connection and timeouts in words", () => {
    expect(redisErrorReason(new Error('Connection is closed.'), 'k', where)).toBe(
      'the connection to redis.example:6379 is closed',
    );
    expect(redisErrorReason(new Error('Command timed out'), 'k', where)).toBe(
      'redis.example:6379 did not answer in time',
    );
    expect(redisErrorReason(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'k')).toBe(
      'the connection was refused',
    );
  });
});
