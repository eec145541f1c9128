/** The realm of every bearer challenge (`WWW-Authenticate: Bearer realm="plant-store"`) the gateway sends. */
export const REALM = 'plant-store';
