// What the schema files share: a reference to a schema of the document, a timestamp, an object whose
// properties are always present, a page of a list.
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const dateTime = { type: 'string', format: 'date-time' };
/**
 * A response object whose every property is always present (null where it has no value). Saying so makes the
 * generated client's types exact: the console and the CLI need not guard against fields that are never missing.
 */
export const always = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  ...extra,
  required: Object.keys(properties),
  properties,
});
export const page = (item: string) => ({
  type: 'object',
  required: ['items', 'nextCursor'],
  properties: {
    items: { type: 'array', items: ref(item) },
    nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last' },
  },
});
