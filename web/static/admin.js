'use strict';
// admin.js: administration, for administrators only (the API refuses
// anyone else with 403 whatever this page shows): the service at a glance
// (GET /v1/admin/dashboard: version, uptime, the disk and how long it
// lasts, the sizes, the last errors), and the users with their items and
// connections, ending a user's sessions, deleting a user. The dashboard
// names users by id only: their names and emails come from GET
// /v1/admin/users, as before.

async function pageAdmin() {
  if (session.user.role !== 'admin') {
    page('Administration', notice('error', 'Only an administrator can see this page.'));
    return;
  }
  const region = liveRegion();
  const body = h('tbody');
  const service = h('div', { class: 'dashboard metrics card' }, h('p', { class: 'muted' }, 'Loading…'));
  const errors = h('div', { class: 'errors' });
  const refresh = h('button', { type: 'button', class: 'secondary' }, 'Refresh');
  page('Administration', region, h('h2', null, 'Service ', refresh), service,
    h('h2', null, 'Last errors'), errors,
    h('h2', null, 'Users'),
    h('table', { class: 'users' },
      h('thead', null, h('tr', null, ['Name', 'Email', 'Role', 'Since', 'Items', 'Connections', 'Actions'].map(t => h('th', { scope: 'col' }, t)))), body));
  const load = async () => {
    try {
      const [users, dash] = await Promise.all([api('GET', '/v1/admin/users'),
        api('GET', '/v1/admin/dashboard').then(res => res.result || {}, err => ({ failed: err }))]);
      if (dash.failed) {
        if (dash.failed.status === 401) return;
        service.replaceChildren(notice('error', explain(dash.failed).message));
        errors.replaceChildren();
      } else {
        service.replaceChildren(serviceFacts(dash));
        errors.replaceChildren(errorList(dash.errors || {}));
      }
      const loads = new Map((dash.users || []).map(u => [u.id, u]));
      body.replaceChildren(...(users.results || []).map(u => userRow(u, loads.get(u.id), region, load)));
    } catch (err) {
      if (err.status !== 401) say(region, 'error', explain(err).message);
    }
  };
  refresh.addEventListener('click', load);
  await load();
}

// serviceFacts are the dashboard's figures as a list of facts in words.
function serviceFacts(d) {
  const disk = d.disk || {}, sizes = d.sizes || {};
  const facts = [
    ['Version', d.version],
    ['Running for', [durationWords(d.uptimeSeconds), ' (since ', fmtDate(d.startedAt), ')']],
    ['Disk free', disk.freeBytes === null || disk.freeBytes === undefined ? 'unknown: the data directory\'s file system could not be read' : bytesWords(disk.freeBytes)],
    ['Lasts', lastsWords(disk)],
    ['Data', ['main store ', bytesWords(sizes.mainStoreBytes), ' · sessions ', bytesWords(sizes.sessionStoreBytes),
      ' · items ', sizes.itemsMeasuredAt ? [bytesWords(sizes.itemsBytes), ' (measured ', ago(sizes.itemsMeasuredAt), ')'] : 'not measured yet',
      ' · search index ', bytesWords(sizes.indexBytes), ', ', plural(Number(sizes.indexDocuments) || 0, 'document', 'documents')]],
  ];
  return h('dl', null, facts.map(([k, v]) => [h('dt', null, k), h('dd', { 'data-fact': k }, v)]));
}

// lastsWords says how long the free space lasts at the data's growth,
// and honestly when that cannot be told yet.
function lastsWords(disk) {
  const growth = disk.growthBytesPerDay;
  const over = durationWords(disk.historySeconds);
  if (growth === null || growth === undefined) {
    return 'not enough history yet: the growth is measured once the service has run for an hour' +
      (disk.historySeconds > 0 ? ' (' + over + ' so far)' : '');
  }
  if (growth <= 0) return 'the data is not growing (over the last ' + over + ')';
  const days = disk.lastsDays;
  const when = days === null || days === undefined ? 'unknown'
    : days < 1 ? 'less than a day' : days < 2 ? 'about a day' : 'about ' + Math.round(days).toLocaleString() + ' days';
  return [when, ' at the growth of the last ', over, ' (', bytesWords(growth), ' a day)'];
}

// errorList shows the last error sentences, newest first.
function errorList(e) {
  const last = e.last || [];
  if (!last.length) return h('p', { class: 'muted' }, 'No errors since the service started.');
  return h('ul', { class: 'cards' }, last.map(x => h('li', { class: 'card error-line' },
    h('p', { class: 'error-text' }, x.message),
    h('p', { class: 'meta' }, x.count > 1 ? [plural(x.count, 'time', 'times'), ', last ', ago(x.lastAt), ', first ', ago(x.firstAt)] : ago(x.lastAt)))));
}

// connectionWords sums a user's connections by state, those that need
// the user flagged.
function connectionWords(conns) {
  const words = { connected: 'connected', error: 'in error', needs_reauth: 'to reconnect' };
  const parts = Object.entries(conns || {}).filter(([, n]) => n > 0)
    .map(([state, n]) => state === 'connected' ? n.toLocaleString() + ' ' + words[state]
      : h('span', { class: 'badge bad' }, n.toLocaleString() + ' ' + (words[state] || state.replace(/_/g, ' '))));
  return parts.length ? parts.flatMap((p, i) => i ? [' ', p] : [p]) : 'none';
}

const byteUnits = ['bytes', 'kB', 'MB', 'GB', 'TB'];
function bytesWords(n) {
  n = Number(n) || 0;
  let i = 0;
  while (Math.abs(n) >= 1000 && i < byteUnits.length - 1) { n /= 1000; i++; }
  return (i ? n.toLocaleString(undefined, { maximumFractionDigits: 1 }) : n.toLocaleString()) + ' ' + byteUnits[i];
}

function durationWords(s) {
  s = Math.max(0, Math.floor(Number(s) || 0));
  const d = Math.floor(s / 86400), hr = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
  if (d) return plural(d, 'day', 'days') + (hr ? ' ' + plural(hr, 'hour', 'hours') : '');
  if (hr) return plural(hr, 'hour', 'hours') + (m ? ' ' + plural(m, 'minute', 'minutes') : '');
  return m ? plural(m, 'minute', 'minutes') : 'less than a minute';
}

function userRow(u, load, region, reload) {
  const me = u.id === session.user.id;
  const logout = h('button', { type: 'button', class: 'secondary' }, 'Sign out everywhere');
  logout.setAttribute('aria-label', plain('Sign ' + u.name + ' out everywhere'));
  logout.addEventListener('click', async () => {
    try {
      const res = await api('POST', '/v1/admin/users/' + encodeURIComponent(u.id) + '/force-logout');
      if (me) return sessionEnded();
      say(region, 'ok', 'Ended ' + plural(Number(res.deleted) || 0, 'session', 'sessions') + ' of ', u.name, '.');
    } catch (err) {
      if (err.status !== 401) say(region, 'error', explain(err).message);
    }
  });
  const del = h('button', { type: 'button', class: 'danger', disabled: me, title: me ? 'You cannot delete your own account' : null }, 'Delete');
  del.setAttribute('aria-label', plain('Delete ' + u.name));
  del.addEventListener('click', async () => {
    const ok = await confirmDialog(['Delete ', u.name, '?'],
      [u.email, ' is signed out everywhere; their connections and synced items are deleted. The email can register again.'],
      'Delete user');
    if (!ok) { del.focus(); return; }
    try {
      await api('DELETE', '/v1/admin/users/' + encodeURIComponent(u.id));
      say(region, 'ok', u.name, ' is deleted.');
      await reload();
    } catch (err) {
      say(region, 'error', err.status === 409 ? 'You cannot delete your own account.' : explain(err).message);
    }
  });
  const reset = u.totpEnabled && h('button', { type: 'button', class: 'secondary' }, 'Turn off two-step sign-in');
  if (reset) {
    reset.setAttribute('aria-label', plain('Turn off two-step sign-in for ' + u.name));
    reset.addEventListener('click', async () => {
      const ok = await confirmDialog(['Turn off two-step sign-in for ', u.name, '?'],
        [u.email, ' is signed out everywhere and signs in with the password alone until they set it up again. Do this only for someone who lost both the app and the recovery codes.'],
        'Turn off');
      if (!ok) { reset.focus(); return; }
      try {
        await api('DELETE', '/v1/admin/users/' + encodeURIComponent(u.id) + '/totp');
        if (me) return sessionEnded();
        say(region, 'ok', 'Two-step sign-in is off for ', u.name, '.');
        await reload();
      } catch (err) {
        if (err.status !== 401) say(region, 'error', explain(err).message);
      }
    });
  }
  return h('tr', { 'data-user': u.id },
    h('td', null, u.name, me && h('span', { class: 'badge ok' }, 'you')),
    h('td', null, u.email),
    h('td', null, u.role === 'admin' ? 'Administrator' : 'User'),
    h('td', null, fmtDate(u.createdAt)),
    h('td', { class: 'items' }, load ? plural(load.items, 'item', 'items') : '–'),
    h('td', { class: 'connections' }, load ? connectionWords(load.connections) : '–'),
    h('td', null, h('div', { class: 'actions' }, logout, reset, del)));
}
