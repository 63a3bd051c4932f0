'use strict';
// totp.js: the Account page's second factor (docs/security.md, "Second
// factor"): turning it on with a QR code and a code from the app, the
// recovery codes to save, new recovery codes, and turning it off.
//
// The QR code is the server's SVG shown as an image: it becomes a blob:
// address given to an <img>, never markup put into the page, so nothing
// in it can run (an SVG in an <img> runs no script, and the page's CSP
// allows images from blob: for this alone).

// secondFactorCard returns the Account page's card, drawn for the signed-in
// user's state and redrawn in place when it changes.
function secondFactorCard() {
  const card = h('section', { class: 'card', 'aria-labelledby': 'totp-title', 'data-totp': '' });
  const draw = () => card.replaceChildren(...(session.user.totpEnabled ? totpOnParts(draw) : totpOffParts(card, draw)));
  draw();
  return card;
}

// codeField is one box for a code of the app or a recovery code; codeBody
// sends what was typed under the name the API expects.
function codeField(label) {
  return field(label, { type: 'text', name: 'code', autocomplete: 'one-time-code', required: true, spellcheck: 'false' },
    'The 6-digit code your authenticator app shows now, or one of your recovery codes.');
}

function codeBody(text) {
  const t = String(text).replace(/\s+/g, '');
  return /^\d{6}$/.test(t) ? { code: t } : { recoveryCode: String(text).trim() };
}

const totpLabels = { currentPassword: 'Current password', code: 'Code' };

// totpOffParts: an explanation and a button that asks for the password
// that starts the set-up.
function totpOffParts(card, draw) {
  const region = liveRegion();
  const pw = field('Current password', { type: 'password', name: 'currentPassword', autocomplete: 'current-password', required: true });
  const submit = h('button', { type: 'submit' }, 'Continue');
  const form = h('form', { novalidate: true }, pw.wrap, h('div', { class: 'actions' }, submit,
    h('button', { type: 'button', class: 'secondary', onclick: draw }, 'Cancel')));
  const start = h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => {
    start.replaceWith(form);
    pw.input.focus();
  } }, 'Set up'));
  form.addEventListener('submit', async e => {
    e.preventDefault();
    submit.disabled = true;
    try {
      const res = await api('POST', '/v1/user/totp', { currentPassword: pw.input.value });
      card.replaceChildren(...totpEnrolParts(res, draw));
      card.querySelector('input[name=code]').focus();
    } catch (err) {
      showErrors(err, region, { currentPassword: pw.setError }, totpLabels);
    } finally {
      submit.disabled = false;
    }
  });
  return [h('h2', { id: 'totp-title' }, 'Two-step sign-in'),
    h('p', null, 'Off. With it on, signing in also needs a code from an authenticator app on your phone ' +
      '(such as Aegis, FreeOTP or Google Authenticator), so a stolen password alone is not enough.'),
    region, start];
}

// totpEnrolParts: the QR code, the secret for typing, and the code that
// confirms.
function totpEnrolParts(res, draw) {
  const region = liveRegion();
  const url = URL.createObjectURL(new Blob([res.qrSvg], { type: 'image/svg+xml' }));
  const img = h('img', { class: 'qr', src: url, alt: 'QR code for your authenticator app', width: 224, height: 224 });
  img.addEventListener('load', () => URL.revokeObjectURL(url), { once: true });
  const grouped = String(res.secret).replace(/(.{4})(?=.)/g, '$1 ');
  const code = field('Code from the app', { type: 'text', name: 'code', inputmode: 'numeric', autocomplete: 'one-time-code',
    required: true, maxlength: 7 });
  const submit = h('button', { type: 'submit' }, 'Turn on');
  const cancel = h('button', { type: 'button', class: 'secondary', onclick: draw }, 'Cancel');
  const form = h('form', { novalidate: true }, code.wrap, h('div', { class: 'actions' }, submit, cancel));
  form.addEventListener('submit', async e => {
    e.preventDefault();
    submit.disabled = true;
    try {
      const done = await api('POST', '/v1/user/totp/confirm', { code: code.input.value.replace(/\s+/g, '') });
      session.user.totpEnabled = true;
      const card = form.closest('[data-totp]');
      card.replaceChildren(...recoveryParts(done.recoveryCodes, 'Two-step sign-in is on.', draw));
      card.querySelector('button').focus();
    } catch (err) {
      showErrors(err, region, { code: code.setError }, totpLabels);
    } finally {
      submit.disabled = false;
    }
  });
  return [h('h2', { id: 'totp-title' }, 'Set up two-step sign-in'),
    h('ol', { class: 'steps' },
      h('li', null, 'Scan this QR code with your authenticator app.', h('br'), img),
      h('li', null, 'Or, if you cannot scan, type this key into the app: ', h('code', { 'data-totp-secret': '' }, grouped)),
      h('li', null, 'Enter the 6-digit code the app shows.')),
    region, form];
}

// recoveryParts shows recovery codes, once.
function recoveryParts(codes, headline, draw) {
  const list = h('ol', { class: 'recovery' }, (codes || []).map(c => h('li', null, h('code', null, c))));
  return [h('h2', { id: 'totp-title' }, 'Recovery codes'),
    notice('ok', headline),
    h('p', null, 'Save these codes somewhere safe, such as a password manager or on paper. ' +
      'Each signs you in once if you lose your phone. They are shown only now.'),
    list,
    h('div', { class: 'actions' }, h('button', { type: 'button', onclick: draw }, 'I have saved them'))];
}

// totpOnParts: new recovery codes, and turning it off; each needs the
// password and a code.
function totpOnParts(draw) {
  const region = liveRegion();
  const pw = field('Current password', { type: 'password', name: 'currentPassword', autocomplete: 'current-password', required: true });
  const code = codeField('Code');
  const fresh = h('button', { type: 'submit' }, 'New recovery codes');
  const off = h('button', { type: 'submit', class: 'danger' }, 'Turn off');
  const form = h('form', { novalidate: true }, pw.wrap, code.wrap, h('div', { class: 'actions' }, fresh, off));
  form.addEventListener('submit', async e => {
    e.preventDefault();
    const turnOff = e.submitter === off;
    fresh.disabled = off.disabled = true;
    const body = Object.assign({ currentPassword: pw.input.value }, codeBody(code.input.value));
    try {
      const card = form.closest('[data-totp]');
      if (turnOff) {
        await api('DELETE', '/v1/user/totp', body);
        session.user.totpEnabled = false;
        draw();
        say(card.querySelector('[role=status]'), 'ok', 'Two-step sign-in is off. Your password alone signs you in.');
      } else {
        const res = await api('POST', '/v1/user/totp/recovery-codes', body);
        card.replaceChildren(...recoveryParts(res.recoveryCodes, 'New recovery codes made; the old ones no longer work.', draw));
        card.querySelector('button').focus();
      }
    } catch (err) {
      showErrors(err, region, { currentPassword: pw.setError, code: code.setError }, totpLabels);
    } finally {
      fresh.disabled = off.disabled = false;
    }
  });
  return [h('h2', { id: 'totp-title' }, 'Two-step sign-in'),
    h('p', null, h('span', { class: 'badge ok' }, 'On'), ' Signing in needs a code from your authenticator app, or a recovery code.'),
    region, form];
}
