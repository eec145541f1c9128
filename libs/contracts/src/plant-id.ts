/** Largest id a JSON number carries exactly; ids above it are refused rather than silently rounded. */
export const MAX_PLANT_ID = Number.MAX_SAFE_INTEGER;
