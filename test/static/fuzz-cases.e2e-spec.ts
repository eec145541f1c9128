// The fuzzer's case generator, run without a stack. A value drawn from fast-check's JSON pool ({"toString": 1})
// made String() throw in a path parameter, and `npm test`'s fuzz profile (a new seed each run) failed with a
// `fuzzer-error` finding (seed 2139517495, which depends on the answers too, so is not replayed here).
import { buildOpenApiDocument } from '@app/contracts';
import { CaseGenerator, Context } from '../../tools/fuzz/generate';
import { OpenApiDocument, operationsOf } from '../../tools/fuzz/routes';
import { asText, pools } from '../../tools/fuzz/values';

function generator(seed: number): CaseGenerator {
  const doc = buildOpenApiDocument() as unknown as OpenApiDocument;
  const ctx: Context = {
    doc,
    ops: operationsOf(doc),
    pools: pools(seed),
    authorization: (_rng, kind) => (kind === 'none' ? null : `Bearer ${kind}`),
    nonce: 'fzstatic',
    limit: 65536,
    host: '127.0.0.1:1',
    receiverUrl: 'http://127.0.0.1:1/receiver',
    harvested: new Map([['subscriptions', ['0b6f1a5e-1f1e-4c53-9d0e-3f2b8f1c1a11']]]),
  };
  return new CaseGenerator(ctx, seed);
}

describe('the fuzzer’s case generator', () => {
  it('writes any drawn value as text, objects whose toString is not a function included', () => {
    expect(asText({ toString: 1 })).toBe('{"toString":1}');
    expect(asText([{ valueOf: 'x', toString: null }])).toBe('[{"valueOf":"x","toString":null}]');
    expect([asText('a b'), asText(12), asText(null), asText([1, 2])]).toEqual(['a b', '12', 'null', '1,2']);
  });

  // Seeds spread over the range `npm test` draws from.
  const seeds = [20261126, 424242, 1337, ...Array.from({ length: 7 }, (_, i) => (i + 1) * 306_783_378)];

  it.each(seeds)('makes 2,000 cases from seed %i', (seed) => {
    const gen = generator(seed);
    expect(() => {
      for (let i = 0; i < 2000; i++) gen.next();
    }).not.toThrow();
  });
});
