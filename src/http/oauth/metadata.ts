/**
 * The discovery documents: RFC 9728 protected-resource metadata (what /mcp is and which
 * authorization server issues its tokens) and RFC 8414 authorization-server metadata. Both are
 * built per request from its issuer (options.ts), so each names the URL it was served from.
 */
import { buildOAuthProtectedResourceMetadata, getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/server';
import { SCOPES_SUPPORTED, resourceOf } from './options.js';

const CLIENT_AUTH_METHODS = ['none', 'client_secret_post', 'client_secret_basic'];

export function authorizationServerMetadata(issuer: string): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    registration_endpoint: `${issuer}/register`,
    revocation_endpoint: `${issuer}/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    scopes_supported: SCOPES_SUPPORTED,
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

export function protectedResourceMetadata(issuer: string): Record<string, unknown> {
  const document = buildOAuthProtectedResourceMetadata({
    oauthMetadata: { ...authorizationServerMetadata(issuer) } as Parameters<typeof buildOAuthProtectedResourceMetadata>[0]['oauthMetadata'],
    resourceServerUrl: new URL(resourceOf(issuer)),
    scopesSupported: [...SCOPES_SUPPORTED],
    resourceName: 'Limbic',
    // The issuer is the URL clients reach this server by: plain http on a LAN name is the user's
    // choice (docs/oauth.md says to put https in front with --public-url for anything else).
    dangerouslyAllowInsecureIssuerUrl: true,
  });
  return { ...document, bearer_methods_supported: ['header'] };
}

/** Where the resource metadata of this issuer's /mcp is (what the 401's challenge names). */
export const resourceMetadataUrl = (issuer: string): string => getOAuthProtectedResourceMetadataUrl(new URL(resourceOf(issuer)));
