import { NotFoundException } from '@nestjs/common';
import { ProblemException } from './problem';
import { toProblem } from './problem.filter';

describe('toProblem', () => {
  it('keeps a ProblemException as thrown, with its headers', () => {
    const err = ProblemException.of('unavailable', 'Kafka did not answer', {}, { 'retry-after': '5' });
    expect(toProblem(err)).toEqual({
      problem: {
        type: 'https://plant.store/problems/unavailable',
        title: 'Service unavailable',
        status: 503,
        detail: 'Kafka did not answer',
      },
      headers: { 'retry-after': '5' },
    });
  });

  it.each([
    ['FST_ERR_CTP_BODY_TOO_LARGE', 413],
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415],
    ['FST_ERR_CTP_INVALID_JSON_BODY', 400],
    ['FST_ERR_CTP_EMPTY_JSON_BODY', 400],
  ])('maps Fastify %s to %i', (code, status) => {
    expect(toProblem(Object.assign(new Error('x'), { code })).problem.status).toBe(status);
  });

  it('maps Nest HTTP exceptions and hides unknown errors', () => {
    expect(toProblem(new NotFoundException()).problem.type).toMatch(/not-found$/);
    const internal = toProblem(new Error('secret stack detail')).problem;
    expect(internal).toEqual({ type: 'https://plant.store/problems/internal', title: 'Internal error', status: 500 });
  });
});
