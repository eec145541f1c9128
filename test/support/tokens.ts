/** The tokens the end-to-end suites configure their gateways with. */
export const WEBHOOK_TOKEN = 'e2e-webhook-token-0123456789';
export const ADMIN_TOKEN = 'e2e-admin-token-0123456789';
