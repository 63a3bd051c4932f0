'use strict';
// connections.js: the catalogue of integrations, connecting one (OAuth
// through the authorize endpoint, or the manual form its manifest
// describes), and the person's connections with their state.

const statusWords = {
  connected: ['Connected', 'ok'],
  needs_reauth: ['Needs you to sign in again', 'bad'],
  error: ['Last sync failed; it will retry', 'warn'],
  disconnected: ['Disconnected', 'bad'],
};

async function connections() {
  const res = await api('GET', '/v1/user-integrations');
  return res.results || [];
}

// envName is how the server names an integration's variables.
function envName(domain) { return domain.toUpperCase().replace(/[^A-Z0-9]/g, '_'); }

function authorizeURL(domain) {
  return '/v1/user-integration/oauth/' + encodeURIComponent(domain) + '/authorize?userId=' + encodeURIComponent(session.user.id);
}

async function pageConnections(params) {
  const region = liveRegion();
  const outcome = h('div');
  const mine = h('ul', { class: 'cards', 'aria-label': 'Your connections' });
  const cat = h('ul', { class: 'cards grid2', 'aria-label': 'Services you can connect' });
  page('Connections', outcome, region, h('h2', null, 'Your connections'), mine, h('h2', null, 'Connect a service'), cat);
  let list;
  try {
    await catalogue();
    list = await connections();
  } catch (err) {
    if (err.status !== 401) say(region, 'error', explain(err).message);
    return;
  } finally {
    append(outcome, oauthOutcome(params)); // in words, once the names are known
  }
  // While a connection waits for its first sync, the list is reloaded
  // now and then (one timer at a time, only while this page shows), so the
  // person sees its items arrive; while a sync lists or downloads, every
  // few seconds for as long as it does, so its progress bar moves. A
  // Reconnect form being filled is not redrawn: the reload waits for it.
  let timer = 0, polls = 0;
  const tick = () => {
    timer = 0;
    if (!mine.isConnected) return;
    if (mine.querySelector('details[open]')) { timer = setTimeout(tick, 3000); return; }
    refresh().catch(() => {});
  };
  const show = rs => {
    mine.replaceChildren(...(rs.length ? rs.map(r => connectionCard(r, region, refresh)) : [h('li', { class: 'muted' }, 'No service is connected yet.')]));
    const first = polls < 40 && rs.some(r => r.status === 'connected' && !r.lastSyncAt);
    const busy = rs.some(r => r.activity === 'downloading' || r.activity === 'listing');
    if (!timer && (first || busy)) {
      polls++;
      timer = setTimeout(tick, first ? 1500 : 3000);
    }
  };
  const refresh = async () => {
    const fresh = await connections();
    show(fresh);
    return fresh;
  };
  show(list);
  for (const m of session.catalogue.values()) cat.append(catalogueCard(m, region, refresh));
}

// oauthOutcome words the result the OAuth callback sent back in the URL.
function oauthOutcome(params) {
  const status = params.get('status');
  if (!status) return null;
  const name = integrationName(params.get('integration') || '') || 'The service';
  if (status === 'success') return notice('ok', name, ' is connected. Its first sync has started.');
  return notice('error', 'Could not connect ', name, '. ', sentence(params.get('message') || 'The service did not say why.'));
}

function connectionCard(r, region, refresh) {
  const m = session.catalogue.get(r.integration) || { displayName: r.integration, authType: 'manual', fields: [] };
  const [word, cls] = statusWords[r.status] || [r.status, 'warn'];
  const cardRegion = liveRegion();
  const sync = h('button', { type: 'button', class: 'secondary' }, 'Sync now');
  sync.addEventListener('click', async () => {
    sync.disabled = true;
    try {
      await api('POST', '/v1/user-integrations/' + encodeURIComponent(r.id) + '/sync');
      say(cardRegion, 'ok', 'Sync started.');
      watchSync(r, refresh);
    } catch (err) {
      say(cardRegion, 'error', explain(err).message);
      sync.disabled = false;
    }
  });
  const disconnect = h('button', { type: 'button', class: 'danger' }, 'Disconnect');
  disconnect.addEventListener('click', async () => {
    const n = Number(r.itemsSynced) || 0;
    const ok = await confirmDialog('Disconnect ' + m.displayName + (r.label ? ' (' + r.label + ')' : '') + '?',
      'Its ' + plural(n, 'synced item', 'synced items') + ' will be deleted from this server too, and no longer found by search. ' +
      'The service itself keeps your data.', 'Disconnect and delete items');
    if (!ok) { disconnect.focus(); return; }
    try {
      await api('DELETE', '/v1/user-integrations/' + encodeURIComponent(r.id));
      say(region, 'ok', m.displayName + ' is disconnected and its items are deleted.');
      await refresh();
    } catch (err) {
      say(cardRegion, 'error', explain(err).message);
    }
  });
  let reconnect = null;
  if (r.status === 'needs_reauth') {
    reconnect = m.authType === 'oauth'
      ? h('a', { class: 'button', href: authorizeURL(m.domain), 'data-external': '' }, 'Reconnect')
      : h('details', null, h('summary', null, 'Reconnect'), manualForm(m, region, refresh, r.id));
  }
  return h('li', { class: 'card', 'data-record': r.id },
    h('h3', null, m.displayName, r.label && h('span', { class: 'record-label' }, r.label), h('span', { class: 'badge ' + cls }, word)),
    h('dl', { class: 'facts' },
      r.source && [h('dt', null, 'Source'), h('dd', { class: 'record-source' }, r.source)],
      h('dt', null, 'Last sync'), h('dd', null, r.lastSyncAt ? fmtDate(r.lastSyncAt) + ' (' + ago(r.lastSyncAt) + ')' : 'Never'),
      activityText(r) && [h('dt', null, 'Now'), h('dd', { class: 'activity' }, activityText(r), syncProgress(r))],
      h('dt', null, 'Items synced'), h('dd', { class: 'items-synced' }, plural(Number(r.itemsSynced) || 0, 'item', 'items')),
      h('dt', null, 'Connected'), h('dd', null, fmtDate(r.connectedAt)),
      r.lastError && [h('dt', null, 'Last error'), h('dd', { class: 'error' }, r.lastError)],
      r.sources && r.sources.length > 0 && [h('dt', null, 'Sources'),
        h('dd', null, h('ul', { class: 'sources' }, sourceItems(r)))]),
    cardRegion,
    h('div', { class: 'actions' }, r.status !== 'needs_reauth' && sync, reconnect, disconnect));
}

// sourceItems lists what a record follows: each source with its own
// title and how its last sync went, when the record says (sourceDetails),
// else its bare name.
function sourceItems(r) {
  const details = new Map((r.sourceDetails || []).map(d => [d.source, d]));
  return r.sources.map(s => {
    const d = details.get(s);
    if (!d) return h('li', null, s);
    // A feed is fetched; a folder's status says what its last listing left out.
    const status = r.integration !== 'feed'
      ? (!d.status ? 'Not read yet.' : d.status === 'ok' ? 'Last sync: OK.' : 'Last sync: ' + sentence(d.status))
      : !d.status ? 'Not fetched yet.' : d.status === 'ok' ? 'Last fetch: OK.' : 'Last fetch failed: ' + sentence(d.status);
    return h('li', null, d.title && h('span', { class: 'source-title' }, d.title), h('span', { class: 'source-name' }, s),
      h('span', { class: 'source-status' + (d.status && d.status !== 'ok' ? (r.integration === 'feed' ? ' error' : ' warn') : '') }, status));
  });
}

// syncProgress is a bar of the items a downloading sync has fetched of
// those it queued (itemsTotal less itemsLeft, of itemsTotal), labelled in
// words for a screen reader; null unless downloading with a known total.
function syncProgress(r) {
  const left = Number(r.itemsLeft) || 0, total = Number(r.itemsTotal) || 0;
  if (r.activity !== 'downloading' || total <= 0 || left > total) return null;
  const done = total - left;
  return h('progress', { class: 'sync-progress', max: total, value: done,
    'aria-label': 'Downloaded ' + done.toLocaleString() + ' of ' + plural(total, 'item', 'items') });
}

// watchSync reloads the list a few times after "Sync now", until the
// record's last sync or its state changes, so the person sees the items
// arrive, or the sync fail (and a Reconnect form is not redrawn under
// someone filling it).
function watchSync(r, refresh) {
  const main = document.querySelector('#main h1');
  let tries = 0;
  const tick = async () => {
    if (!main.isConnected || ++tries > 20) return;
    let fresh;
    try { fresh = await refresh(); } catch (e) { return; }
    const now = fresh.find(x => x.id === r.id);
    if (!now || now.status !== r.status || now.lastSyncAt !== r.lastSyncAt || now.itemsSynced !== r.itemsSynced) return;
    setTimeout(tick, 1500);
  };
  setTimeout(tick, 1000);
}

function catalogueCard(m, region, refresh) {
  let action;
  if (m.authType === 'oauth') {
    action = m.configured
      ? h('a', { class: 'button', href: authorizeURL(m.domain), 'data-external': '' }, 'Connect ' + m.displayName)
      : h('p', { class: 'muted' }, 'Not available yet: the administrator must set ' + envName(m.domain) +
        '_OAUTH_CLIENT_ID and ' + envName(m.domain) + '_OAUTH_CLIENT_SECRET.');
  } else if (m.configured === false && m.requires && m.requires.length) {
    // A manual integration this server is not set up for (a folder
    // without FOLDER_ROOTS): the settings it lacks, as for OAuth.
    action = h('p', { class: 'muted' }, 'Not available yet: the administrator must set ' + m.requires.join(' and ') + '.');
  } else {
    action = h('details', null, h('summary', null, 'Connect ' + m.displayName), manualForm(m, region, refresh));
  }
  return h('li', { class: 'card' },
    h('h3', null, m.displayName), h('p', { class: 'muted' }, kindWord(m.kind) + (m.authType === 'oauth' ? ' · signs in at the service' : ' · a form')),
    action);
}

// fieldHelp is a field's help: the manifest's own, or what its type asks.
function fieldHelp(f) {
  if (f.help) return f.help;
  const parts = [];
  if (f.type === 'url') parts.push('A full address, starting with https://.');
  if (f.secret) parts.push('Stored encrypted; never shown again.');
  if (f.default && f.type !== 'bool') parts.push('Leave empty for ' + f.default + '.');
  if (!f.required && !f.default && f.type !== 'bool') parts.push('Optional.');
  return parts.join(' ');
}

// manualForm is the form a manual integration's manifest describes. The
// server checks it with the provider before storing it; its answer's
// details say which field is wrong. recordId, for a Reconnect, is the
// connection it updates.
function manualForm(m, region, refresh, recordId) {
  const formRegion = liveRegion();
  const inputs = {}, sets = {}, labels = {};
  const types = { text: 'text', password: 'password', number: 'number', url: 'url', bool: 'checkbox', multiline: 'multiline' };
  const wraps = (m.fields || []).map(f => {
    const attrs = { type: types[f.type] || 'text', name: f.name, required: !!f.required };
    if (f.type === 'bool') attrs.checked = f.default === 'true';
    else if (f.default) attrs.placeholder = f.default;
    if (f.type === 'number') attrs.inputmode = 'numeric';
    attrs.autocomplete = f.secret ? 'new-password' : 'off';
    const fl = field(f.label, attrs, fieldHelp(f));
    inputs[f.name] = fl.input; sets[f.name] = fl.setError; labels[f.name] = f.label;
    return fl.wrap;
  });
  const submit = h('button', { type: 'submit' }, 'Connect');
  const form = h('form', { novalidate: true, 'data-integration': m.domain }, formRegion, wraps, h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async e => {
    e.preventDefault();
    const fields = {};
    for (const f of m.fields || []) {
      const el = inputs[f.name];
      if (f.type === 'bool') fields[f.name] = el.checked;
      else if (el.value.trim() !== '') fields[f.name] = f.secret ? el.value : el.value.trim();
    }
    submit.disabled = true;
    say(formRegion, '', 'Checking with ' + m.displayName + '…');
    try {
      // A Reconnect names its record: one of several connections of the
      // integration is updated, not a new one made.
      const res = await api('POST', '/v1/user-integrations/' + encodeURIComponent(m.domain) + '/credentials',
        recordId ? { fields, recordId } : { fields });
      form.reset();
      for (const s of Object.values(sets)) s('');
      say(formRegion, '');
      // 201: a new connection; 200: the person's existing one, updated.
      say(region, 'ok', res.httpStatus === 200
        ? m.displayName + ' is updated with the new details. A sync has started.'
        : m.displayName + ' is connected. Its first sync has started.');
      await refresh();
    } catch (err) {
      showErrors(err, formRegion, sets, labels);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

// activityText says what the record's sync is doing, from the record's
// activity, itemsLeft, itemsTotal and retryAt; empty when idle.
function activityText(r) {
  switch (r.activity) {
    case 'listing': return 'Looking for new items';
    case 'downloading': {
      const left = Number(r.itemsLeft) || 0, total = Number(r.itemsTotal) || 0;
      return 'Downloading: ' + plural(left, 'item', 'items') + ' left' + (total > left ? ' of ' + total.toLocaleString() : '');
    }
    case 'waiting': return r.retryAt ? 'Waiting to try again at ' + fmtDate(r.retryAt) : 'Waiting to try again';
    case 'paused': return r.pausedReason === 'disk_full'
      ? 'Paused: the server\'s disk is full. Syncing goes on as soon as there is room again.'
      : 'Paused: its progress could not be saved. Syncing tries again at ' + fmtDate(r.retryAt) + ', or now with Sync now.';
  }
  return '';
}
