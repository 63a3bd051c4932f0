'use strict';
// admin.js: administration, for administrators only (the API refuses
// anyone else with 403 whatever this page shows): users, ending a user's
// sessions, deleting a user, and the service's counters.

async function pageAdmin() {
  if (session.user.role !== 'admin') {
    page('Administration', notice('error', 'Only an administrator can see this page.'));
    return;
  }
  const region = liveRegion();
  const body = h('tbody');
  const metrics = h('div', { class: 'metrics card' });
  const reloadMetrics = h('button', { type: 'button', class: 'secondary' }, 'Refresh');
  page('Administration', region, h('h2', null, 'Users'),
    h('table', { class: 'users' },
      h('thead', null, h('tr', null, ['Name', 'Email', 'Role', 'Since', 'Actions'].map(t => h('th', { scope: 'col' }, t)))), body),
    h('h2', null, 'Metrics ', reloadMetrics), metrics);
  const load = async () => {
    try {
      const res = await api('GET', '/v1/admin/users');
      body.replaceChildren(...(res.results || []).map(u => userRow(u, region, load)));
    } catch (err) {
      if (err.status !== 401) say(region, 'error', explain(err).message);
    }
  };
  const loadMetrics = async () => {
    try {
      const res = await api('GET', '/v1/admin/metrics');
      metrics.replaceChildren(metricList(res.result || {}));
    } catch (err) {
      if (err.status !== 401) metrics.replaceChildren(notice('error', explain(err).message));
    }
  };
  reloadMetrics.addEventListener('click', loadMetrics);
  await Promise.all([load(), loadMetrics()]);
}

function userRow(u, region, reload) {
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
  return h('tr', null,
    h('td', null, u.name, me && h('span', { class: 'badge ok' }, 'you')),
    h('td', null, u.email),
    h('td', null, u.role === 'admin' ? 'Administrator' : 'User'),
    h('td', null, fmtDate(u.createdAt)),
    h('td', null, h('div', { class: 'actions' }, logout, del)));
}

// metricList shows the counters as nested lists, names made readable.
function metricList(obj) {
  const dl = h('dl');
  for (const [k, v] of Object.entries(obj)) {
    const name = k.replace(/_/g, ' ');
    let value;
    if (v && typeof v === 'object') value = metricList(v);
    else if (typeof v === 'number') value = v.toLocaleString();
    else if (typeof v === 'boolean') value = v ? 'yes' : 'no';
    else value = v === '' ? '–' : String(v);
    append(dl, [h('dt', null, name), h('dd', null, value)]);
  }
  return dl;
}
