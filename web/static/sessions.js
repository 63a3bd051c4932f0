'use strict';
// sessions.js: every device signed in to the account, ending one, and
// signing out everywhere else.

async function pageSessions() {
  const region = liveRegion();
  const list = h('ul', { class: 'cards', 'aria-label': 'Signed-in devices' });
  const others = h('button', { type: 'button', class: 'secondary' }, 'Sign out everywhere else');
  page('Sessions', h('p', { class: 'muted' }, 'Every device where you are signed in. End any you do not recognise.'),
    region, list, h('div', { class: 'actions' }, others));
  const load = async () => {
    let res;
    try {
      res = await api('GET', '/v1/user/sessions');
    } catch (err) {
      if (err.status !== 401) say(region, 'error', explain(err).message);
      return;
    }
    const items = (res.results || []).slice().sort((a, b) => (b.current - a.current) || (a.lastAccessedAt < b.lastAccessedAt ? 1 : -1));
    list.replaceChildren(...items.map(s => sessionCard(s, region, load)));
    others.disabled = items.length < 2;
  };
  others.addEventListener('click', async () => {
    try {
      const res = await api('POST', '/v1/auth/logout-all');
      const n = Number(res.deleted) || 0;
      say(region, 'ok', n ? 'Signed out ' + plural(n, 'other device', 'other devices') + '.' : 'No other device was signed in.');
      await load();
    } catch (err) {
      say(region, 'error', explain(err).message);
    }
  });
  await load();
}

function sessionCard(s, region, reload) {
  const name = device(s.userAgent);
  const end = h('button', { type: 'button', class: s.current ? 'secondary' : 'danger' }, s.current ? 'Sign out' : 'End session');
  end.setAttribute('aria-label', plain(s.current ? 'Sign out of this device' : 'End the session of ' + name + ' at ' + (s.ipAddress || 'an unknown address')));
  end.addEventListener('click', async () => {
    if (s.current) return signOut();
    try {
      await api('DELETE', '/v1/user/sessions/' + encodeURIComponent(s.sessionId));
      say(region, 'ok', 'Ended the session of ', name, '.');
      await reload();
    } catch (err) {
      say(region, 'error', err.status === 404 ? 'That session had already ended.' : explain(err).message);
      await reload();
    }
  });
  const method = s.metadata && s.metadata.loginMethod === 'oauth' ? 'single sign-on' : 'password';
  return h('li', { class: 'card', 'data-session': s.sessionId },
    h('h3', null, name, s.current && h('span', { class: 'badge ok' }, 'This device')),
    h('dl', { class: 'facts' },
      h('dt', null, 'Address'), h('dd', null, s.ipAddress || 'unknown'),
      h('dt', null, 'Signed in'), h('dd', null, fmtDate(s.createdAt) + ' with ' + method),
      h('dt', null, 'Last used'), h('dd', null, s.current ? 'Now' : ago(s.lastAccessedAt)),
      h('dt', null, 'Browser'), h('dd', { class: 'muted' }, s.userAgent || 'not sent')),
    h('div', { class: 'actions' }, end));
}
