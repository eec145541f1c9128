/** An RFC 3339 query or body value (already checked by its schema) as a Date; absent stays absent. */
export const optionalDate = (v: string | undefined): Date | undefined => (v === undefined ? undefined : new Date(v));
