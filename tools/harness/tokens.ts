/** The tokens the end-to-end suites configure their gateways with. */
export const WEBHOOK_TOKEN = 'e2e-webhook-token-0123456789';
export const ADMIN_TOKEN = 'e2e-admin-token-0123456789';

/** The key every suite seals subscriber secrets with (SECRETS_KEY): one shared database, one key. */
export const TEST_SECRETS_KEY = 'dGVzdC1zZWNyZXRzLWtleS0zMi1ieXRlcy1sb25nISE=';
