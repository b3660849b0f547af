// A real OpenID Connect / OAuth 2 authorization server (oidc-provider) for the harness's
// authorization tests, started by internal/oauthtest. Configuration comes as JSON in
// $OIDC_CONFIG: {clients, resources: {<url>: {scope}}, accessTokenTTL}. It listens on a
// free loopback port and prints one line, "READY <issuer>", when it accepts requests.
// Every token request is reported on stdout as "TOKEN <grant_type> <refresh_token>" so the
// tests can prove a rotated refresh token is never sent twice.
import http from 'node:http';
import { parse } from 'node:querystring';
import Provider, { errors } from 'oidc-provider';

const cfg = JSON.parse(process.env.OIDC_CONFIG || '{}');
const ttl = cfg.accessTokenTTL || 60;
const resources = cfg.resources || {};

const server = http.createServer();
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
          return { scope: rs.scope, audience: indicator, accessTokenTTL: ttl, accessTokenFormat: 'opaque' };
        },
      },
    },
    scopes: ['openid', 'offline_access'],
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
  const callback = provider.callback();
  server.on('request', (req, res) => {
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
