import { HttpException, UnauthorizedException } from '@nestjs/common';
import { DROPPED_BODY_MAX_BYTES, dropsBodyToKeepConnection } from './before-body';

describe('a refusal before the body: which keep their connection', () => {
  const tooMany = new HttpException('past its share', 429);
  const req = (headers: Record<string, string>) => ({ headers });

  it('keeps it for a caller past its share with a small body of known length', () => {
    expect(dropsBodyToKeepConnection(req({ 'content-length': '27' }), tooMany)).toBe(true);
    expect(dropsBodyToKeepConnection(req({ 'content-length': String(DROPPED_BODY_MAX_BYTES) }), tooMany)).toBe(true);
  });

  it.each([
    ['a 401', { 'content-length': '27' }, new UnauthorizedException()],
    ['a 403', { 'content-length': '27' }, new HttpException('not in scope', 403)],
    ['a body past the bound', { 'content-length': String(DROPPED_BODY_MAX_BYTES + 1) }, tooMany],
    ['a chunked body', { 'transfer-encoding': 'chunked' }, tooMany],
    ['a length and a transfer coding', { 'content-length': '5', 'transfer-encoding': 'chunked' }, tooMany],
    ['a length that is no number', { 'content-length': '1e3' }, tooMany],
    ['something not an HTTP error', { 'content-length': '27' }, new Error('boom')],
  ])('closes it for %s', (_case, headers, err) => {
    expect(dropsBodyToKeepConnection(req(headers), err)).toBe(false);
  });
});
