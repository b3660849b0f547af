// A real OpenID Connect / OAuth 2 authorization server (oidc-provider) for the harness's
// authorization tests, started by internal/oauthtest. Configuration comes as JSON in
// $OIDC_CONFIG: {clients, resources: {<url>: {scope, format}}, accessTokenTTL, assignAuthMethod,
// groups: {<login>: [group, …]}}. It listens on a
// free loopback port and prints one line, "READY <issuer>", when it accepts requests.
// Enterprise-managed authorization, for the extauth path: with "tokenExchange" set the
// provider acts as the identity provider and answers RFC 8693 exchanges of its own ID tokens
// for identity assertion grants (ID-JAG JWTs, signed with a key served at /jag-jwks, whose
// client_id claim is tokenExchange.clientId); with "jwtBearerIssuer" set it acts as the MCP
// server's authorization server and accepts such assertions from that issuer in the RFC 7523
// JWT bearer grant.
// Every token request is reported on stdout as "TOKEN <grant_type> <refresh_token>" so the
// tests can prove a rotated refresh token is never sent twice.
import http from 'node:http';
import { parse } from 'node:querystring';
import Provider, { errors } from 'oidc-provider';
import {
  createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT,
} from 'jose';

const cfg = JSON.parse(process.env.OIDC_CONFIG || '{}');
const ttl = cfg.accessTokenTTL || 60;
const resources = cfg.resources || {};

const server = http.createServer();
const jagKeys = await generateKeyPair('ES256');
const jagJWK = { ...(await exportJWK(jagKeys.publicKey)), kid: 'jag', alg: 'ES256', use: 'sig' };

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: cfg.clients || [],
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator) => {
          const rs = resources[indicator];
          if (!rs) {
            throw new errors.InvalidTarget(`unknown resource ${indicator}`);
          }
          return { scope: rs.scope, audience: indicator, accessTokenTTL: ttl, accessTokenFormat: rs.format || 'opaque' };
        },
      },
    },
    // With "assignAuthMethod" set, dynamic registration assigns that token endpoint
    // authentication method whatever the client asked for (RFC 7591 §3.2.1 lets a server
    // replace requested metadata); static clients (no redirect URIs) are left alone.
    ...(cfg.assignAuthMethod ? {
      extraClientMetadata: {
        properties: ['harness_assigned'],
        validator: (ctx, key, value, metadata) => {
          if (metadata.redirect_uris?.length && metadata.token_endpoint_auth_method !== cfg.assignAuthMethod) {
            metadata.token_endpoint_auth_method = cfg.assignAuthMethod;
            if (cfg.assignAuthMethod.startsWith('client_secret_') && !metadata.client_secret) {
              metadata.client_secret = crypto.randomUUID();
            }
          }
        },
      },
    } : {}),
    // The resources' scopes are scopes of this server too: a client may name them when it
    // registers (the TypeScript SDK does, from the challenge).
    scopes: ['openid', 'offline_access', ...new Set(Object.values(resources).flatMap((r) => (r.scope || '').split(' ').filter(Boolean)))],
    // "groups": each account's groups, in the claim of the same name of its access tokens.
    extraTokenClaims: (ctx, token) => {
      const groups = cfg.groups?.[token.accountId];
      return groups ? { groups } : undefined;
    },
    pkce: { required: () => true },
    rotateRefreshToken: true,
    issueRefreshToken: async (ctx, client, code) => client.grantTypeAllowed('refresh_token')
      && (code.scopes.has('offline_access') || code.scope?.includes('offline_access')),
    ttl: {
      AccessToken: ttl, ClientCredentials: ttl, RefreshToken: 86400, Grant: 86400,
      Session: 86400, Interaction: 600, AuthorizationCode: 60,
    },
    cookies: { keys: ['harness-test-only'] },
    findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  });
  if (cfg.tokenExchange) {
    const ownKeys = createRemoteJWKSet(new URL(`${issuer}/jwks`));
    provider.registerGrantType('urn:ietf:params:oauth:grant-type:token-exchange', async (ctx) => {
      const p = ctx.oidc.params;
      if (p.subject_token_type !== 'urn:ietf:params:oauth:token-type:id_token'
        || p.requested_token_type !== 'urn:ietf:params:oauth:token-type:id-jag') {
        throw new errors.InvalidRequest('only id_token to id-jag exchanges are supported');
      }
      let payload;
      try {
        ({ payload } = await jwtVerify(p.subject_token, ownKeys, { issuer, audience: ctx.oidc.client.clientId }));
      } catch (err) {
        throw new errors.InvalidGrant(`subject_token: ${err.message}`);
      }
      const jag = await new SignJWT({
        sub: payload.sub, client_id: cfg.tokenExchange.clientId, resource: p.resource, scope: p.scope, jti: crypto.randomUUID(),
      }).setProtectedHeader({ alg: 'ES256', typ: 'oauth-id-jag+jwt', kid: 'jag' })
        .setIssuer(issuer).setAudience(p.audience).setIssuedAt().setExpirationTime('5m')
        .sign(jagKeys.privateKey);
      ctx.body = {
        access_token: jag, issued_token_type: 'urn:ietf:params:oauth:token-type:id-jag', token_type: 'N_A', expires_in: 300,
      };
    }, ['subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'resource', 'scope']);
  }
  if (cfg.jwtBearerIssuer) {
    const idpKeys = createRemoteJWKSet(new URL(`${cfg.jwtBearerIssuer}/jag-jwks`));
    provider.registerGrantType('urn:ietf:params:oauth:grant-type:jwt-bearer', async (ctx) => {
      let payload;
      try {
        ({ payload } = await jwtVerify(ctx.oidc.params.assertion, idpKeys, {
          issuer: cfg.jwtBearerIssuer, audience: issuer, typ: 'oauth-id-jag+jwt',
        }));
      } catch (err) {
        throw new errors.InvalidGrant(`assertion: ${err.message}`);
      }
      if (payload.client_id !== ctx.oidc.client.clientId) {
        throw new errors.InvalidGrant('the assertion was issued for another client');
      }
      const rs = resources[payload.resource];
      if (!rs) {
        throw new errors.InvalidTarget(`unknown resource ${payload.resource}`);
      }
      const token = new provider.ClientCredentials({ client: ctx.oidc.client, scope: payload.scope || rs.scope });
      token.resourceServer = new provider.ResourceServer(payload.resource, {
        audience: payload.resource, scope: rs.scope, accessTokenTTL: ttl, accessTokenFormat: 'opaque',
      });
      const value = await token.save();
      ctx.body = {
        access_token: value, token_type: 'Bearer', expires_in: token.expiration, scope: token.scope,
      };
    }, ['assertion', 'scope', 'resource']);
  }
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url === '/jag-jwks') {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ keys: [jagJWK] }));
      return;
    }
    if (req.method === 'POST' && req.url === '/token') {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const form = parse(body.toString());
        process.stdout.write(`TOKEN ${form.grant_type} ${form.refresh_token || '-'} ${form.resource || '-'}\n`);
        // Hand the consumed body to oidc-provider's parser.
        req.body = form;
        callback(req, res);
      });
      return;
    }
    callback(req, res);
  });
  process.stdout.write(`READY ${issuer}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
