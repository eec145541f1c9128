import { hasPortalTokenShape } from '@app/contracts';
import { newPortalToken } from './portal-link.repository';

describe('newPortalToken', () => {
  it('makes tokens of the shape the gateway looks up (and the OpenAPI document declares)', () => {
    for (let i = 0; i < 200; i++) expect(hasPortalTokenShape(newPortalToken())).toBe(true);
  });
});
