'use strict';
// auth.js: signing in (with the second step when the account has one, see
// totp.js), creating an account, signing out and changing the password.

const passwordRule = 'At least 10 characters, not your email or name, and not a common password.';

function pageLogin(params, register) {
  const region = liveRegion();
  const next = safeNext(params.get('next'));
  const email = field('Email', { type: 'email', name: 'email', autocomplete: 'email', required: true });
  const name = register ? field('Name', { type: 'text', name: 'name', autocomplete: 'name', required: true }) : null;
  const password = field('Password', {
    type: 'password', name: 'password', required: true,
    autocomplete: register ? 'new-password' : 'current-password',
  }, register ? passwordRule : null);
  // The second step, shown when the server answers totp_required.
  const code = register ? null : codeField('Code from your authenticator app');
  if (code) code.wrap.hidden = true;
  const submit = h('button', { type: 'submit' }, register ? 'Create account' : 'Sign in');
  const form = h('form', { class: 'card', novalidate: true },
    email.wrap, name && name.wrap, password.wrap, code && code.wrap, h('div', { class: 'actions' }, submit));
  const sets = { email: email.setError, password: password.setError };
  if (code) sets.code = code.setError;
  if (name) sets.name = name.setError;
  const labels = { email: 'Email', password: 'Password', name: 'Name' };
  form.addEventListener('submit', async e => {
    e.preventDefault();
    submit.disabled = true;
    say(region, '', 'Working…');
    const body = { email: email.input.value.trim(), password: password.input.value };
    if (name) body.name = name.input.value.trim();
    if (code && !code.wrap.hidden) {
      const c = codeBody(code.input.value);
      if (c.code) body.totpCode = c.code; else body.recoveryCode = c.recoveryCode;
    }
    try {
      const res = await api('POST', register ? '/v1/auth/register' : '/v1/auth/login', body);
      session.user = res.user || res.result;
      session.csrf = res.csrfToken || '';
      remember(true);
      session.catalogue = null;
      go(next || '/search', true);
    } catch (err) {
      if (code && err.code === 'totp_required') {
        code.wrap.hidden = false;
        say(region, '', 'Two-step sign-in is on for this account. Enter the code your authenticator app shows.');
        code.input.focus();
      } else if (code && err.code === 'invalid_totp_code') {
        say(region, '');
        code.setError('This code is wrong or was already used. Wait for the next code, or use a recovery code.');
        code.input.select();
      } else {
        showErrors(err, region, sets, labels);
      }
    } finally {
      submit.disabled = false;
    }
  });
  const other = register
    ? h('p', null, 'Already have an account? ', h('a', { href: '/login' + (next ? '?next=' + encodeURIComponent(next) : '') }, 'Sign in'))
    : h('p', null, 'New here? ', h('a', { href: '/register' + (next ? '?next=' + encodeURIComponent(next) : '') }, 'Create an account'),
      h('span', { class: 'muted' }, ' (the first account on a new server becomes its administrator).'));
  const ended = params.get('ended') ? notice('', 'Your session has ended. Sign in again to continue.') : null;
  const intro = h('p', { class: 'intro' }, h('img', { src: '/assets/' + iconName(), alt: '' }), 'searchsvc');
  const main = page(register ? 'Create an account' : 'Sign in', ended, region, form, other);
  main.prepend(intro);
  main.classList.add('narrow');
  email.input.focus();
}

// safeNext keeps a return path inside the app.
function safeNext(p) {
  return p && p.startsWith('/') && !p.startsWith('//') && !p.startsWith('/v1/') ? p : '';
}

async function signOut() {
  try { await api('POST', '/v1/auth/logout'); } catch (e) { /* the session is gone either way */ }
  session.user = null;
  session.csrf = '';
  remember(false);
  go('/login', true);
}

// remember notes in this browser whether someone signed in here, so that a
// visitor who never did is sent to the sign-in page without asking for a
// profile that can only answer 401 (which the browser logs as an error).
// The note is a hint, never a credential: the session cookie decides, and
// a 401 clears the note. Without storage, the profile is asked.
function remember(signedIn) {
  try {
    if (signedIn) localStorage.setItem('signedIn', '1'); else localStorage.removeItem('signedIn');
  } catch (e) { /* storage refused: the profile is asked each time */ }
}

function maybeSignedIn() {
  try { return localStorage.getItem('signedIn') === '1'; } catch (e) { return true; }
}

// sessionEnded is called when the API answers 401 to a signed-in page.
function sessionEnded() {
  remember(false);
  const here = location.pathname + location.search;
  go('/login?ended=1&next=' + encodeURIComponent(here), true);
}

function pageAccount() {
  const u = session.user;
  const region = liveRegion();
  const current = field('Current password', { type: 'password', autocomplete: 'current-password', required: true });
  const next = field('New password', { type: 'password', autocomplete: 'new-password', required: true }, passwordRule);
  const again = field('New password again', { type: 'password', autocomplete: 'new-password', required: true });
  const submit = h('button', { type: 'submit' }, 'Change password');
  const form = h('form', { class: 'card', novalidate: true },
    h('h2', null, 'Change password'),
    h('p', { class: 'muted' }, 'Changing it signs out every other device.'),
    current.wrap, next.wrap, again.wrap, h('div', { class: 'actions' }, submit));
  const sets = { currentPassword: current.setError, newPassword: next.setError };
  const labels = { currentPassword: 'Current password', newPassword: 'New password' };
  form.addEventListener('submit', async e => {
    e.preventDefault();
    again.setError('');
    if (next.input.value !== again.input.value) {
      again.setError('The two new passwords differ.');
      again.input.focus();
      return;
    }
    submit.disabled = true;
    try {
      const res = await api('PUT', '/v1/user/password', { currentPassword: current.input.value, newPassword: next.input.value });
      if (res.csrfToken) session.csrf = res.csrfToken;
      else await refreshProfile();
      form.reset();
      for (const s of Object.values(sets)) s('');
      say(region, 'ok', 'Password changed. Every other device has been signed out.');
    } catch (err) {
      showErrors(err, region, sets, labels);
    } finally {
      submit.disabled = false;
    }
  });
  page('Account',
    h('section', { class: 'card' },
      h('dl', { class: 'facts' },
        h('dt', null, 'Name'), h('dd', null, u.name),
        h('dt', null, 'Email'), h('dd', null, u.email),
        h('dt', null, 'Role'), h('dd', null, u.role === 'admin' ? 'Administrator' : 'User'),
        h('dt', null, 'Member since'), h('dd', null, fmtDate(u.createdAt))),
      h('div', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', onclick: signOut }, 'Sign out'))),
    region, form, secondFactorCard());
}

// refreshProfile reloads the signed-in user (and the CSRF token, which the
// profile carries when tokens are on); false when nobody is signed in.
async function refreshProfile() {
  try {
    const res = await api('GET', '/v1/user/profile');
    session.user = res.result;
    session.csrf = (res.result && res.result.csrfToken) || res.csrfToken || session.csrf;
    remember(true);
    return true;
  } catch (err) {
    if (err.status === 401) { session.user = null; remember(false); return false; }
    throw err;
  }
}
