/**
 * An RFC 3339 query or body value as a Date; absent stays absent. Its schema's `date-time` format (see the
 * schema registry) already refused what is no real instant (a leap second): an Invalid Date here is a bug,
 * and fails loudly rather than reaching SQL as 'Invalid Date'.
 */
export const optionalDate = (v: string | undefined): Date | undefined => {
  if (v === undefined) return undefined;
  const date = new Date(v);
  if (Number.isNaN(date.getTime())) throw new Error(`"${v}" passed its date-time schema but is no instant`);
  return date;
};
