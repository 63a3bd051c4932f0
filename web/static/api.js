'use strict';
// api.js: the /v1 API, as any client calls it. The session cookie is
// HttpOnly and SameSite=Strict, so the browser sends it by itself; when the
// server runs with CSRF_TOKENS=true, the token from login, register or the
// profile goes with every POST, PUT and DELETE in the X-CSRF-Token header.

const session = { user: null, csrf: '', catalogue: null };

class APIError extends Error {
  constructor(status, body, retryAfter) {
    const e = (body && body.error) || {};
    super(e.message || ('HTTP ' + status));
    this.status = status;
    this.code = e.code || '';
    this.details = Array.isArray(e.details) ? e.details : [];
    this.retryAfter = retryAfter;
  }
}

// api calls method path with an optional JSON body and returns the parsed
// envelope; a failure throws APIError (status 0: the server was not
// reached). A 401 on anything but signing in means the session is over.
async function api(method, path, body) {
  const headers = { Accept: 'application/json' };
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  if (method !== 'GET' && session.csrf) headers['X-CSRF-Token'] = session.csrf;
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new APIError(0, { error: { code: 'network', message: 'network' } });
  }
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok) {
    const err = new APIError(res.status, data, res.headers.get('Retry-After'));
    if (res.status === 401 && !path.startsWith('/v1/auth/login') && !path.startsWith('/v1/auth/register') && session.user) {
      session.user = null;
      sessionEnded();
    }
    throw err;
  }
  // The status, beside the envelope: 201 and 200 tell a new record from
  // an updated one.
  return Object.defineProperty(data || {}, 'httpStatus', { value: res.status });
}

// explain turns an APIError into words for a person: a message for the
// form, and one per field (by the field names the API uses in details).
function explain(err, labels) {
  labels = labels || {};
  const out = { message: '', fields: {} };
  const m = err.message;
  switch (true) {
    case err.status === 0:
      out.message = 'The server could not be reached. Check the connection and try again.'; break;
    case err.status === 429: {
      const what = {
        'too many login attempts': 'Too many sign-in attempts from this address',
        'too many registration attempts': 'Too many accounts created from this address',
        'too many password attempts': 'Too many password attempts',
        'too many second factor attempts': 'Too many wrong codes for this account',
      }[m] || 'Too many attempts';
      out.message = what + '. Wait ' + waitWords(err.retryAfter || 60) + ', then try again.';
      break;
    }
    case m === 'invalid email or password':
      out.message = 'Wrong email or password.'; break;
    case m === 'second factor already on':
      out.message = 'Two-step sign-in is already on. Reload the page.'; break;
    case m === 'second factor not on' || m === 'no second factor enrolment started':
      out.message = 'Two-step sign-in has changed meanwhile. Reload the page and try again.'; break;
    case m === 'registration closed':
      out.message = 'Registration is closed on this server. Ask its administrator to create an account for you.'; break;
    case m === 'email already registered':
      out.fields.email = 'An account with this email already exists. Sign in instead.'; break;
    case m === 'invalid CSRF token':
      out.message = 'The page\'s security token has expired. Reload the page and try again.'; break;
    case m === 'admin required':
      out.message = 'Only an administrator can do this.'; break;
    case err.status === 400 && err.details.length > 0:
      for (const d of err.details) {
        const name = String(d.field || '').replace(/^fields\./, '');
        const msg = String(d.message || '');
        const text = sentence(predicate.test(msg) ? (shortLabel(labels[name]) || name || 'This') + ' ' + msg : msg);
        if (name && labels[name] !== undefined) out.fields[name] = text;
        else out.message = (out.message ? out.message + ' ' : '') + text;
      }
      break;
    default:
      out.message = sentence(m || 'Something went wrong (HTTP ' + err.status + ')');
  }
  return out;
}

// predicate matches a field's message that needs the field's name before
// it ("is required", "must be a whole number"); a message that is a whole
// clause ("the server answered 401 Unauthorized") reads on its own.
const predicate = /^(is|are|must|should|cannot|has|have|was|at most|at least)\b/;

// shortLabel is a field's label up to its first comma, colon or
// parenthesis: "Server certificate" for the long label that explains what
// to paste, so that an error names the field once, in a few words.
function shortLabel(label) {
  return label ? String(label).split(/[,:(]/)[0].trim() || String(label) : '';
}

// sentence ends s with a full stop, and capitalises its first word only
// when that is a plain lower-case word: an address ("http://…"), a field of
// the query language ("from:") or a name keeps its case.
function sentence(s) {
  s = String(s).trim();
  if (!s) return s;
  if (/^[a-z][a-z'-]*(\s|[,;]|$)/.test(s)) s = s[0].toUpperCase() + s.slice(1);
  return /[.!?]$/.test(s) ? s : s + '.';
}

// showErrors puts explain's result onto a form: fields is {name: setError}.
function showErrors(err, region, fields, labels) {
  const ex = explain(err, labels);
  for (const [name, set] of Object.entries(fields)) set(ex.fields[name] || '');
  say(region, 'error', ex.message || (Object.keys(ex.fields).length ? 'Please correct the fields marked below.' : ''));
  const firstBad = Object.keys(ex.fields)[0];
  if (firstBad) {
    const input = document.querySelector('[aria-invalid="true"]');
    if (input) input.focus();
  }
  return ex;
}

// catalogue caches GET /v1/integrations: domain → manifest.
async function catalogue() {
  if (!session.catalogue) {
    const res = await api('GET', '/v1/integrations');
    session.catalogue = new Map((res.results || []).map(m => [m.domain, m]));
  }
  return session.catalogue;
}

function integrationName(domain) {
  const m = session.catalogue && session.catalogue.get(domain);
  return m ? m.displayName : domain;
}

const kindWords = { email: 'Email', message: 'Message', file: 'File', entry: 'Feed entry', chat: 'Chat', files: 'Files', feed: 'Feed' };
function kindWord(k) { return kindWords[k] || k || ''; }
