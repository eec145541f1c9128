// Node's error codes for a server certificate it does not trust (self-signed, an unknown or missing issuer, a bad
// signature). Kafka's and PostgreSQL's TLS settings both turn these into "the CA file does not sign this server":
// one list, so both say so for the same causes.
export const UNTRUSTED_CERTIFICATE_CODES: ReadonlySet<string> = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
]);
