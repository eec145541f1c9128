// The portal links: a subscriber's own credential for one subscription, made and revoked by an admin, and the
// session it opens.
import {
  adminRead,
  adminWrite,
  badParameter,
  forbidden,
  idParam,
  invalidBody,
  json,
  notFound,
  ok,
  problem,
  ref,
  subscriptionId,
  unauthorized,
} from './common';

export const portalLinks = {
  get: {
    operationId: 'listPortalLinks',
    summary: "List a subscription's portal links (never their tokens), newest first",
    tags: ['Portal links'],
    security: adminRead,
    parameters: [subscriptionId],
    responses: {
      '200': ok('Its portal links, revoked and expired ones included', {
        type: 'array',
        items: ref('PortalLink'),
      }),
      '401': unauthorized,
      '403': forbidden,
      '404': notFound,
      '422': badParameter,
    },
  },
  post: {
    operationId: 'createPortalLink',
    summary: 'Make a portal link: the subscriber sees and manages this subscription alone, until it expires',
    description:
      'The token (and the `url` that carries it, in its fragment) is returned once, in this response only: only ' +
      'its SHA-256 is stored. It is a bearer credential for the operations whose `security` lists `portalAuth`, ' +
      'on this subscription only. Audited (`portal_link.created`).',
    tags: ['Portal links'],
    security: adminWrite,
    parameters: [subscriptionId],
    requestBody: { required: false, ...json(ref('PortalLinkCreate')) },
    responses: {
      '201': ok('Created; `token` and `url` are shown only now', ref('PortalLinkWithToken')),
      '401': unauthorized,
      '403': forbidden,
      '404': notFound,
      '409': problem(
        "An operational subscription (Plant Store's own events, the operator's): it has no portal link; manage it " +
          'with an admin token',
      ),
      '422': invalidBody,
    },
  },
};

export const portalLink = {
  delete: {
    operationId: 'revokePortalLink',
    summary: 'Revoke a portal link: its token is refused (401) from now on',
    description: 'The link stays listed, revoked. Revoking twice keeps the first revocation. Audited.',
    tags: ['Portal links'],
    security: adminWrite,
    parameters: [subscriptionId, idParam('linkId', { type: 'string', format: 'uuid' }, 'Portal link id')],
    responses: {
      '200': ok('Revoked', ref('PortalLink')),
      '401': unauthorized,
      '403': forbidden,
      '404': notFound,
      '422': badParameter,
    },
  },
};

export const portalSession = {
  get: {
    operationId: 'getPortalSession',
    summary: 'Which subscription a portal link opens, and until when',
    description: "A portal link's token only: the console's portal page asks it first.",
    tags: ['Portal links'],
    security: [{ portalAuth: [] }],
    responses: {
      '200': ok('The portal session', ref('PortalSession')),
      '401': unauthorized,
    },
  },
};
