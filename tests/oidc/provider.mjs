// A real OpenID Connect provider for the tests: panva's oidc-provider (OpenID Certified), on 127.0.0.1 over http.
// Started by tests/oidc_provider.py as `node tests/oidc/provider.mjs` with:
//   OIDC_PORT     the port it listens on (127.0.0.1)
//   OIDC_ISSUER   its issuer (default http://127.0.0.1:$OIDC_PORT; a bare origin, no path)
//   OIDC_USERS    a JSON file: [{login, password, sub, name, email, groups, id_token_ttl?}], read again on every
//                 sign-in and every claims lookup, so a test can change a user's groups or name between sign-ins
//   OIDC_CLIENTS  a JSON file: [{client_id, client_secret, redirect_uris, post_logout_redirect_uris, ...}]
// What is ours: the sign-in page (checks the password against the users file), the account lookup, the consent
// every configured client gets without a click (first-party), a `select_account` prompt (what Streamlit's st.login
// asks for by default; answered by the same sign-in page), and a logout confirmation that submits itself.
// Everything else (authorization, PKCE, tokens, ID token signing, discovery, JWKS, end_session) is oidc-provider's.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

import Provider, { interactionPolicy } from 'oidc-provider';

const port = Number(process.env.OIDC_PORT);
if (!Number.isInteger(port) || port <= 0) {
  console.error('provider.mjs: set OIDC_PORT to the port to listen on');
  process.exit(2);
}
const issuer = (process.env.OIDC_ISSUER || `http://127.0.0.1:${port}`).replace(/\/$/, '');
if (new URL(issuer).pathname !== '/') {
  console.error(`provider.mjs: OIDC_ISSUER must be a bare origin, not ${issuer}`);
  process.exit(2);
}
const usersFile = process.env.OIDC_USERS;
const clientsFile = process.env.OIDC_CLIENTS;
if (!usersFile || !clientsFile) {
  console.error('provider.mjs: set OIDC_USERS and OIDC_CLIENTS to the users and clients JSON files');
  process.exit(2);
}

const DEFAULT_ID_TOKEN_TTL = 3600;

function readUsers() {
  const users = JSON.parse(readFileSync(usersFile, 'utf8'));
  if (!Array.isArray(users)) throw new TypeError(`${usersFile}: expected a JSON list of users`);
  return users;
}
const userBySub = (sub) => readUsers().find((u) => String(u.sub) === String(sub));
const userByLogin = (login) => readUsers().find((u) => String(u.login) === String(login));

const clients = JSON.parse(readFileSync(clientsFile, 'utf8')).map((c) => ({
  grant_types: ['authorization_code'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_basic',
  post_logout_redirect_uris: [],
  ...c,
}));

// A fresh signing key per run (not oidc-provider's development key, which it warns about).
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'test-rs256', use: 'sig', alg: 'RS256' };

// Streamlit's st.login sends prompt=select_account unless its secrets set client_kwargs.prompt; oidc-provider
// refuses a prompt its policy does not list. Listed first, it sends the browser to the sign-in page (choosing an
// account is signing in here), which then answers both it and login.
const policy = interactionPolicy.base();
policy.add(new interactionPolicy.Prompt({ name: 'select_account', requestable: true }), 0);

const ALL_SCOPES = 'openid email profile groups';

const html = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({
  '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
}[c]));

function page(title, body) {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${html(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:sans-serif;background:#f4f5f7;margin:0;padding:40px}
main{max-width:340px;margin:0 auto;background:#fff;padding:24px 28px;border-radius:6px;box-shadow:0 1px 3px rgba(0,0,0,.2)}
h1{font-size:1.4em;margin:0 0 4px} p.sub{color:#555;margin:0 0 18px}
label{display:block;margin:10px 0 4px;font-size:.9em} input{width:100%;box-sizing:border-box;padding:8px;font-size:1em}
button{margin-top:18px;width:100%;padding:10px;font-size:1em;background:#2f6fdf;color:#fff;border:0;border-radius:4px;cursor:pointer}
.error{color:#a40000;background:#fde8e8;padding:8px 10px;border-radius:4px;margin:0 0 12px}
</style></head><body><main>${body}</main></body></html>`;
}

function loginPage({ uid, client, login = '', error }) {
  const clientName = client?.clientName || client?.clientId || '';
  return page('Sign in', `
<h1>Sign in</h1>
<p class="sub">to ${html(clientName)} (test identity provider)</p>
${error ? `<p class="error" id="error" role="alert">${html(error)}</p>` : ''}
<form id="login-form" method="post" action="/interaction/${html(uid)}/login" autocomplete="off">
  <label for="login">Login</label>
  <input id="login" name="login" value="${html(login)}" required autofocus>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" required>
  <button id="submit" type="submit">Sign in</button>
</form>
<p><a href="/interaction/${html(uid)}/abort">Cancel</a></p>`);
}

async function readForm(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 64 * 1024) throw new Error('form too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

// Every configured client is first-party: it gets every scope it asks for without a consent page.
async function grantFor(provider, { clientId, accountId, grantId }) {
  let grant = grantId ? await provider.Grant.find(grantId) : undefined;
  if (!grant || grant.accountId !== accountId || grant.clientId !== clientId) {
    grant = new provider.Grant({ clientId, accountId });
  }
  grant.addOIDCScope(ALL_SCOPES);
  await grant.save();
  return grant;
}

const provider = new Provider(issuer, {
  clients,
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name'],
    groups: ['groups'],
  },
  // Put the scopes' claims in the ID token itself (Streamlit reads st.user from the ID token, not from userinfo).
  conformIdTokenClaims: false,
  features: {
    devInteractions: { enabled: false },
    rpInitiatedLogout: {
      enabled: true,
      // The "do you want to sign out" confirmation submits itself (yes), with a button in case scripts are off.
      async logoutSource(ctx, form) {
        ctx.body = page('Signing out', `
<h1>Signing out</h1>
${form.replace('</form>', '<input type="hidden" name="logout" value="yes"/></form>')}
<button id="logout" type="submit" form="op.logoutForm">Sign out</button>
<script>document.getElementById('op.logoutForm').submit()</script>`);
      },
      async postLogoutSuccessSource(ctx) {
        ctx.body = page('Signed out', '<h1>Signed out</h1><p>You have been signed out.</p>');
      },
    },
  },
  interactions: {
    policy,
    url: (ctx, interaction) => `/interaction/${interaction.uid}`,
  },
  loadExistingGrant(ctx) {
    const { oidc } = ctx;
    if (!oidc.session.accountId) return undefined;
    return grantFor(oidc.provider, {
      clientId: oidc.client.clientId,
      accountId: oidc.session.accountId,
      grantId: oidc.result?.consent?.grantId || oidc.session.grantIdFor(oidc.client.clientId),
    });
  },
  async findAccount(ctx, sub) {
    if (!userBySub(sub)) return undefined;
    return {
      accountId: String(sub),
      async claims() {
        const user = userBySub(sub); // read again: the file may have changed since the sign-in
        if (!user) return { sub: String(sub) };
        return {
          sub: String(user.sub),
          name: user.name,
          email: user.email,
          email_verified: user.email_verified ?? user.email !== undefined,
          groups: user.groups ?? [],
        };
      },
    };
  },
  ttl: {
    IdToken(ctx, token) {
      const ttl = userBySub(token.available?.sub)?.id_token_ttl;
      return Number.isInteger(ttl) && ttl > 0 ? ttl : DEFAULT_ID_TOKEN_TTL;
    },
    AccessToken: 3600,
    AuthorizationCode: 600,
    Interaction: 3600,
    Session: 14 * 24 * 3600,
    Grant: 14 * 24 * 3600,
  },
  async renderError(ctx, out) {
    ctx.type = 'html';
    ctx.body = page('Error', `<h1>Error</h1>${Object.entries(out)
      .map(([k, v]) => `<p><strong>${html(k)}</strong>: <span class="${html(k)}">${html(v)}</span></p>`).join('')}`);
  },
});

// The sign-in page, in front of oidc-provider's own routes.
provider.use(async (ctx, next) => {
  const match = /^\/interaction\/([\w-]+)(?:\/(login|abort))?$/.exec(ctx.path);
  if (!match) return next();
  const [, uid, action] = match;
  ctx.set('cache-control', 'no-store');
  try {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (details.uid !== uid) ctx.throw(400, 'interaction does not match its cookie');
    const client = await provider.Client.find(details.params.client_id);
    const { prompt } = details;

    if (action === 'abort' && ctx.method === 'GET') {
      ctx.respond = false;
      return await provider.interactionFinished(ctx.req, ctx.res, {
        error: 'access_denied', error_description: 'End-User aborted interaction',
      }, { mergeWithLastSubmission: false });
    }

    if (!action && ctx.method === 'GET') {
      if (prompt.name === 'consent') { // only if a client asked for more than it is granted
        const grant = await grantFor(provider, {
          clientId: details.params.client_id, accountId: details.session.accountId, grantId: details.grantId,
        });
        ctx.respond = false;
        return await provider.interactionFinished(ctx.req, ctx.res, { consent: { grantId: grant.grantId } });
      }
      ctx.type = 'html';
      ctx.body = loginPage({ uid, client, login: details.params.login_hint });
      return undefined;
    }

    if (action === 'login' && ctx.method === 'POST') {
      const form = await readForm(ctx.req);
      const login = form.get('login') ?? '';
      const user = userByLogin(login); // read again on every sign-in
      if (!user || String(user.password) !== (form.get('password') ?? '')) {
        ctx.status = 401;
        ctx.type = 'html';
        ctx.body = loginPage({ uid, client, login, error: 'Invalid login or password.' });
        return undefined;
      }
      ctx.respond = false;
      return await provider.interactionFinished(ctx.req, ctx.res, {
        select_account: {},
        login: { accountId: String(user.sub) },
      }, { mergeWithLastSubmission: false });
    }
    ctx.throw(405);
  } catch (err) {
    if (err.name === 'SessionNotFound') {
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = page('Error', '<h1>Error</h1><p class="error">This sign-in has expired or was already used. Start again from the app.</p>');
      return undefined;
    }
    throw err;
  }
});

provider.on('server_error', (ctx, err) => console.error('oidc-provider server_error:', err));

const server = provider.listen(port, '127.0.0.1', () => {
  console.log(`oidc-provider listening on ${issuer}`);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => { server.close(); process.exit(0); });
}
