import { DeadLetterHeaders } from '@app/contracts';
import { toArchivedDeadLetter } from './dead-letter-record';

describe('toArchivedDeadLetter', () => {
  it('stores header text PostgreSQL refuses by its escape, so one dead letter cannot stop the archive', () => {
    const row = toArchivedDeadLetter(0, {
      key: Buffer.from('k\u0000'),
      value: Buffer.from('{"a\u0000":1}'),
      timestamp: '1700000000000',
      offset: '7',
      headers: {
        [DeadLetterHeaders.reason]: Buffer.from('not a valid plant.created event: data.a\u0000 is a property name'),
        [DeadLetterHeaders.topic]: Buffer.from('plant.\u0000created'),
        [DeadLetterHeaders.partition]: Buffer.from('3'),
      },
    } as never);
    expect(row.reason).toBe('not a valid plant.created event: data.a\\u0000 is a property name');
    expect(row.origin_topic).toBe('plant.\\u0000created');
    expect(row.origin_partition).toBe(3);
    expect(row.key).toEqual(Buffer.from('k\u0000')); // bytea: kept as it was
  });
});
